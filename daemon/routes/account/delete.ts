/**
 * The account page's self-delete (docs/directory.md, "Users: disable, sign out everywhere,
 * delete (erasure)"): the user erases their own account, with the erasure an operator's
 * DELETE runs (shared/services/user-lifecycle.ts).
 *
 * - GET /account/delete: with a sign-in from the last five minutes, the confirmation form (the
 *   user types their address); with an older one, a link to the step-up (/account/reauth).
 * - POST /account/delete: the form, with the account page's CSRF token; a stale sign-in is
 *   refused (403, the same link), a wrong address shows the form again (400); then the
 *   erasure, the session cookie cleared, and a page that says it is done.
 */
import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { SESSION_COOKIE } from '../../../shared/services/auth/policy.js';
import { STEP_UP_MAX_AGE_MS } from '../../../shared/services/auth/passkeys.js';
import type { AppDeps, AppState } from '../../context.js';
import { clearCookie } from '../../cookies.js';
import { sessionAuth } from '../../middleware/koa-session.js';
import type { ApiRegistry } from '../../openapi.js';
import { translator } from '../../../shared/i18n/index.js';
import { esc, renderPage, pageLocale } from '../../views/html.js';
import { fill } from '../../views/page-i18n.js';
import { accountForms } from './forms.js';

type Ctx = ParameterizedContext<AppState>;

/** The page's words in the reader's language (shared/i18n/catalogues/account.ts). */
const words = (ctx: Ctx) => {
  const locale = pageLocale(ctx);
  return { locale, tr: translator(locale) };
};

export function accountDeleteRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { csrf, formOk, refused } = accountForms(deps);
  const signedIn = sessionAuth(deps, { page: true });
  const secure = deps.config.issuer.startsWith('https:');
  const fresh = (ctx: Ctx) => Date.now() - ctx.state.session!.session.auth_time <= STEP_UP_MAX_AGE_MS;

  const formPage = (ctx: Ctx, o: { error?: string; status?: number } = {}) => {
    const { session, user } = ctx.state.session!;
    const { locale, tr } = words(ctx);
    renderPage(ctx, {
      status: o.status ?? 200,
      locale,
      title: tr('account.delete.heading'),
      body: `<h1>${esc(tr('account.delete.heading'))}</h1>
${o.error ? `<p role="alert">${esc(o.error)}</p>` : ''}
<p>${fill(tr, 'account.delete.erases', { email: `<strong>${esc(user.email)}</strong>` })}</p>
<form method="post" action="/account/delete">
<input type="hidden" name="csrf" value="${esc(csrf.tokenFor(session.id))}">
<label for="confirm-email">${esc(tr('account.delete.typeEmail'))}</label>
<input id="confirm-email" name="confirm_email" type="email" autocomplete="off" required>
<button type="submit">${esc(tr('account.delete.button'))}</button>
</form>
<p><a href="/account">${esc(tr('account.delete.keep'))}</a></p>`,
    });
  };

  const stalePage = (ctx: Ctx, status: number) => {
    const { locale, tr } = words(ctx);
    const stale = fill(tr, 'account.delete.staleText', {
      confirm: `<a href="/account/reauth">${esc(tr('account.delete.confirmLink'))}</a>`,
      delete: `<a href="/account/delete">${esc(tr('account.delete.backLink'))}</a>`,
    });
    renderPage(ctx, {
      status,
      locale,
      title: tr('account.delete.heading'),
      body: `<h1>${esc(tr('account.delete.heading'))}</h1><p>${stale}</p>`,
    });
  };

  api.page(router, { method: 'get', path: '/account/delete', authenticate: signedIn }, (ctx) => {
    if (!fresh(ctx)) return stalePage(ctx, 200);
    formPage(ctx);
  });

  api.page(router, { method: 'post', path: '/account/delete', parser: 'form', authenticate: signedIn }, async (ctx) => {
    await deps.throttle.formPost(ctx.ip);
    if (!formOk(ctx)) return refused(ctx, true);
    // A step-up (NIST SP 800-63B §4.1.3 re-authentication) before an irreversible act.
    if (!fresh(ctx)) return stalePage(ctx, 403);
    const { session, user } = ctx.state.session!;
    const typed = (ctx.request.body as Record<string, unknown>).confirm_email;
    if (typeof typed !== 'string' || typed.trim().toLowerCase() !== user.email.toLowerCase())
      return formPage(ctx, { error: words(ctx).tr('account.delete.mismatch'), status: 400 });
    await deps.userLifecycle.erase(session.tenant_id, user.id, { type: 'user', id: user.id });
    clearCookie(ctx, SESSION_COOKIE, secure);
    const { locale, tr } = words(ctx);
    renderPage(ctx, {
      locale,
      title: tr('account.delete.doneTitle'),
      body: `<h1>${esc(tr('account.delete.doneHeading'))}</h1><p>${esc(tr('account.delete.doneText'))}</p>`,
    });
  });

  return router;
}
