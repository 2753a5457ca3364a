/**
 * The account page at /account: server-rendered, authenticated by the session cookie. It
 * shows the user's name and address with the forms that change them (profile.ts), lists the
 * user's devices (the current one marked) and granted consents, each with a button that signs
 * the device out or withdraws the consent, the user's passkeys (passkeys.ts, reauth.ts) and
 * recent sign-ins (views/account-sign-ins.ts). The forms carry a CSRF token bound to the session
 * (an HMAC of its id), and the page sends the same security headers as the login page.
 */
import Router from '@koa/router';
import { translator } from '../../../shared/i18n/index.js';
import type { AppDeps, AppState } from '../../context.js';
import { sessionAuth } from '../../middleware/koa-session.js';
import type { ApiRegistry } from '../../openapi.js';
import { appsSection, devicesSection } from '../../views/account-devices.js';
import { passkeySection } from '../../views/account-passkeys.js';
import { profileSection } from '../../views/account-profile.js';
import { ACCOUNT_SIGN_INS, signInSection } from '../../views/account-sign-ins.js';
import { PASSKEY_SCRIPTS } from '../../views/assets.js';
import { esc, renderPage, pageLocale } from '../../views/html.js';
import { fill } from '../../views/page-i18n.js';
import { accountConsoleClientId } from '../../../shared/services/auth/account-console.js';
import { STEP_UP_MAX_AGE_MS } from '../../../shared/services/auth/passkeys.js';
import { accountForms } from './forms.js';

/** The page's notices after one of its forms (`?done=`), each `account.done.<name>`. */
const NOTICES = new Set([
  'device',
  'consent',
  'passkey_added',
  'passkey_renamed',
  'passkey_removed',
  'reauth',
  'name',
  'email',
]);

export function accountPageRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const service = deps.account;
  const { csrf, formOk, refused } = accountForms(deps);

  const signedIn = sessionAuth(deps, { page: true });

  api.add(
    router,
    {
      method: 'get',
      path: '/account',
      operationId: 'getAccountPage',
      summary: 'The account page: devices, consents and passkeys',
      tags: ['account'],
      security: 'cookie',
      authenticate: signedIn,
      responses: {
        200: { description: 'page', contentType: 'text/html' },
        401: { description: 'not signed in', contentType: 'text/html' },
      },
    },
    async (ctx) => {
      const { session, user } = ctx.state.session!;
      const locale = pageLocale(ctx);
      const tr = translator(locale);
      const token = csrf.tokenFor(session.id);
      const devices = await service.deviceDetails(session.tenant_id, user.id, session.id, 100);
      // The account console's own sign-in is not an app the user gave access to.
      const console = accountConsoleClientId(session.tenant_id);
      const consents = (await service.listConsents(session.tenant_id, user.id)).filter((c) => c.clientId !== console);
      const passkeys = await deps.passkeys.list(session.tenant_id, user.id);
      const profile = await deps.accountProfile.profile(session.tenant_id, user.id);
      const stale = Date.now() - session.auth_time > STEP_UP_MAX_AGE_MS;
      const { sign_ins: signIns } = await deps.signIns.mine(session.tenant_id, user.id, ACCOUNT_SIGN_INS);
      const done = typeof ctx.query.done === 'string' && NOTICES.has(ctx.query.done) ? ctx.query.done : '';
      const notice = done ? `<p role="status">${esc(tr(`account.done.${done}`))}</p>` : '';
      const deleteLink = `<a href="/account/delete">${esc(tr('account.delete.link'))}</a>`;
      renderPage(ctx, {
        title: tr('account.title'),
        scripts: PASSKEY_SCRIPTS,
        locale,
        // The wider column (style.ts): html.ts's frame is the localisation work's, so the page
        // marks itself instead of passing an option.
        body: `<div class="wide"><h1>${esc(tr('account.title'))}</h1>
<p>${fill(tr, 'account.signedInAs', { email: `<strong>${esc(user.email)}</strong>` })}</p>
${notice}
${profileSection({ ...profile, csrf: token, stale }, locale)}
${devicesSection(devices, token, locale)}
${appsSection(consents, token, locale)}
${passkeySection({ passkeys, csrf: token, stale }, locale)}
${signInSection(signIns, locale)}
<h2 id="delete">${esc(tr('account.delete.heading'))}</h2>
<p>${fill(tr, 'account.delete.text', { link: deleteLink })}</p></div>`,
      });
    },
  );

  api.page(
    router,
    { method: 'post', path: '/account/devices/:id/sign-out', parser: 'form', authenticate: signedIn },
    async (ctx) => {
      const me = ctx.state.session!;
      if (!formOk(ctx)) return refused(ctx);
      const sessionId = await service.findDeviceSession(me.session.tenant_id, me.user.id, ctx.params.id);
      if (!sessionId) return notFound(ctx, 'account.notFound.device');
      await deps.sessions.revokeSession(me.session.tenant_id, sessionId, 'device_signed_out');
      ctx.status = 303;
      ctx.redirect(sessionId === me.session.id ? '/account' : '/account?done=device#devices');
    },
  );

  api.page(
    router,
    { method: 'post', path: '/account/consents/:id/withdraw', parser: 'form', authenticate: signedIn },
    async (ctx) => {
      const me = ctx.state.session!;
      if (!formOk(ctx)) return refused(ctx);
      const ok = await service.withdrawConsent(me.session.tenant_id, me.user.id, ctx.params.id);
      if (!ok) return notFound(ctx, 'account.notFound.title');
      ctx.status = 303;
      ctx.redirect('/account?done=consent#consents');
    },
  );

  return router;
}

/** The 404 page of a device or consent that is not (or no longer) the user's. */
function notFound(ctx: Parameters<typeof renderPage>[0], heading: string): void {
  const locale = pageLocale(ctx);
  const tr = translator(locale);
  renderPage(ctx, {
    status: 404,
    locale,
    title: tr('account.notFound.title'),
    body: `<h1>${esc(tr(heading))}</h1><p><a href="/account">${esc(tr('account.back'))}</a></p>`,
  });
}
