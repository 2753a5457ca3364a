/**
 * GET /: what this server is, for a person who opens its address (it used to answer a JSON
 * 404). It names the discovery document (one issuer serves every tenant, docs/oauth.md),
 * points developers to the documentation and people to their account page. Nothing on it is
 * secret or tenant-specific. A page, so not in /openapi.json (as the other pages).
 */
import Router from '@koa/router';
import { translator } from '../../shared/i18n/index.js';
import type { AppDeps, AppState } from '../context.js';
import type { ApiRegistry } from '../openapi.js';
import { esc, renderPage, pageLocale } from '../views/html.js';
import { fill } from '../views/page-i18n.js';

export function landingRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const discovery = `${deps.config.issuer}/.well-known/openid-configuration`;

  api.page(router, { method: 'get', path: '/' }, (ctx) => {
    const locale = pageLocale(ctx);
    const tr = translator(locale);
    renderPage(ctx, {
      title: tr('landing.title'),
      locale,
      body: `<h1>${esc(tr('landing.heading'))}</h1>
<p>${esc(tr('landing.intro'))}</p>
<h2>${esc(tr('landing.account.heading'))}</h2>
<p>${esc(tr('landing.account.text'))}</p>
<a class="button" href="/account">${esc(tr('landing.account.link'))}</a>
<h2>${esc(tr('landing.developers.heading'))}</h2>
<p>${esc(tr('landing.developers.discovery'))}<br><a href="${esc(discovery)}"><code>${esc(discovery)}</code></a></p>
<p>${fill(tr, 'landing.developers.docs', { file: '<code>docs/quickstart.md</code>' })}</p>`,
    });
  });

  return router;
}
