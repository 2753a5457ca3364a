/**
 * The account page at /account: server-rendered, authenticated by the session cookie. It
 * shows the user's name and address with the forms that change them (profile.ts), lists the
 * user's devices (the current one marked) and granted consents, each with a button that signs
 * the device out or withdraws the consent, the user's passkeys (passkeys.ts, reauth.ts) and
 * recent sign-ins (views/account-sign-ins.ts). The forms carry a CSRF token bound to the session
 * (an HMAC of its id), and the page sends the same security headers as the login page.
 */
import Router from '@koa/router';
import type { AppDeps, AppState } from '../../context.js';
import { sessionAuth } from '../../middleware/koa-session.js';
import type { ApiRegistry } from '../../openapi.js';
import { passkeySection } from '../../views/account-passkeys.js';
import { profileSection } from '../../views/account-profile.js';
import { ACCOUNT_SIGN_INS, signInSection } from '../../views/account-sign-ins.js';
import { PASSKEY_SCRIPTS } from '../../views/assets.js';
import { esc, renderPage } from '../../views/html.js';
import { STEP_UP_MAX_AGE_MS } from '../../../shared/services/auth/passkeys.js';
import { accountForms } from './forms.js';

const ACTION_HEADING = '<th scope="col"><span class="skip">Action</span></th>';
const DEVICE_HEADINGS =
  '<th scope="col">Device</th><th scope="col">App</th><th scope="col">Last seen</th>' + ACTION_HEADING;
const CONSENT_HEADINGS = '<th scope="col">App</th><th scope="col">Access</th>' + ACTION_HEADING;
/** The page's notice after one of its forms (`?done=`). */
const NOTICES: Record<string, string> = {
  device: 'The device was signed out.',
  consent: 'Access was removed.',
  passkey_added: 'The passkey was added.',
  passkey_renamed: 'The passkey was renamed.',
  passkey_removed: 'The passkey was removed.',
  reauth: 'Thank you for confirming it is you. You can add a passkey or change your address in the next five minutes.',
  name: 'Your name was saved.',
  email: 'Your address was changed.',
};

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
      const token = csrf.tokenFor(session.id);
      const { devices } = await service.listDevices(session.tenant_id, user.id, session.id, 100);
      const consents = await service.listConsents(session.tenant_id, user.id);
      const passkeys = await deps.passkeys.list(session.tenant_id, user.id);
      const profile = await deps.accountProfile.profile(session.tenant_id, user.id);
      const stale = Date.now() - session.auth_time > STEP_UP_MAX_AGE_MS;
      const { sign_ins: signIns } = await deps.signIns.mine(session.tenant_id, user.id, ACCOUNT_SIGN_INS);
      const done =
        typeof ctx.query.done === 'string' && Object.hasOwn(NOTICES, ctx.query.done) ? NOTICES[ctx.query.done] : '';
      const notice = done ? `<p role="status">${esc(done)}</p>` : '';
      const hidden = `<input type="hidden" name="csrf" value="${esc(token)}">`;
      const deviceRows = devices
        .map((d) => {
          const seen = d.last_seen_at
            ? `<time datetime="${esc(d.last_seen_at)}">${esc(d.last_seen_at.replace('T', ' ').slice(0, 16))} UTC</time>`
            : '';
          const label = `Sign out ${esc(d.display_name)}${d.current ? ' (this device)' : ''}`;
          return `<tr>
  <td>${esc(d.display_name)}${d.current ? ' <strong>(this device)</strong>' : ''}</td>
  <td>${esc(d.app_display_name ?? '')}</td>
  <td>${seen}</td>
  <td><form method="post" action="/account/devices/${esc(d.id)}/sign-out">${hidden}
    <button type="submit" class="secondary" aria-label="${label}">Sign out</button></form></td>
</tr>`;
        })
        .join('\n');
      const consentRows = consents
        .map((c) => {
          const app = esc(c.clientName ?? c.clientId);
          return `<tr>
  <td>${app}</td>
  <td>${esc(c.scopes.join(' '))}</td>
  <td><form method="post" action="/account/consents/${esc(c.id)}/withdraw">${hidden}
    <button type="submit" class="secondary" aria-label="Remove access for ${app}">Remove</button></form></td>
</tr>`;
        })
        .join('\n');
      const consentTable = consents.length
        ? `<table aria-labelledby="consents"><thead><tr>${CONSENT_HEADINGS}</tr></thead>` +
          `<tbody>${consentRows}</tbody></table>`
        : '<p>No app has access to your account.</p>';
      renderPage(ctx, {
        title: 'Your account',
        scripts: PASSKEY_SCRIPTS,
        body: `<h1>Your account</h1>
<p>Signed in as <strong>${esc(user.email)}</strong>.</p>
${notice}
${profileSection({ ...profile, csrf: token, stale })}
<h2 id="devices">Devices</h2>
<table aria-labelledby="devices"><thead><tr>${DEVICE_HEADINGS}</tr></thead>
<tbody>${deviceRows}</tbody></table>
<h2 id="consents">Apps with access</h2>
${consentTable}
${passkeySection({ passkeys, csrf: token, stale })}
${signInSection(signIns)}
<h2 id="delete">Delete your account</h2>
<p><a href="/account/delete">Delete your account</a> and everything held about you here.</p>`,
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
      if (!sessionId)
        return renderPage(ctx, {
          status: 404,
          title: 'Not found',
          body: '<h1>Device not found</h1><p><a href="/account">Back to your account</a></p>',
        });
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
      if (!ok)
        return renderPage(ctx, {
          status: 404,
          title: 'Not found',
          body: '<h1>Not found</h1><p><a href="/account">Back to your account</a></p>',
        });
      ctx.status = 303;
      ctx.redirect('/account?done=consent#consents');
    },
  );

  return router;
}
