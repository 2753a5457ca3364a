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
import { esc, renderPage } from '../../views/html.js';
import { accountForms } from './forms.js';

type Ctx = ParameterizedContext<AppState>;

const STALE =
  '<p>Deleting your account needs a recent sign-in. <a href="/account/reauth">Confirm it is you</a>, ' +
  'then come back to <a href="/account/delete">delete your account</a>.</p>';

export function accountDeleteRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { csrf, formOk, refused } = accountForms(deps);
  const signedIn = sessionAuth(deps, { page: true });
  const secure = deps.config.issuer.startsWith('https:');
  const fresh = (ctx: Ctx) => Date.now() - ctx.state.session!.session.auth_time <= STEP_UP_MAX_AGE_MS;

  const formPage = (ctx: Ctx, o: { error?: string; status?: number } = {}) => {
    const { session, user } = ctx.state.session!;
    renderPage(ctx, {
      status: o.status ?? 200,
      title: 'Delete your account',
      body: `<h1>Delete your account</h1>
${o.error ? `<p role="alert">${esc(o.error)}</p>` : ''}
<p>This erases your account (<strong>${esc(user.email)}</strong>) and everything held about you here:
your profile, devices, passkeys and the apps you gave access. Apps are signed out at once. It cannot be undone.</p>
<form method="post" action="/account/delete">
<input type="hidden" name="csrf" value="${esc(csrf.tokenFor(session.id))}">
<label for="confirm-email">Type your email address to confirm</label>
<input id="confirm-email" name="confirm_email" type="email" autocomplete="off" required>
<button type="submit">Delete my account</button>
</form>
<p><a href="/account">Keep my account</a></p>`,
    });
  };

  const stalePage = (ctx: Ctx, status: number) =>
    renderPage(ctx, { status, title: 'Delete your account', body: `<h1>Delete your account</h1>${STALE}` });

  api.page(router, { method: 'get', path: '/account/delete', authenticate: signedIn }, (ctx) => {
    if (!fresh(ctx)) return stalePage(ctx, 200);
    formPage(ctx);
  });

  api.page(router, { method: 'post', path: '/account/delete', parser: 'form', authenticate: signedIn }, async (ctx) => {
    await deps.throttle.formPost(ctx.ip);
    if (!formOk(ctx)) return refused(ctx, 'Go back to <a href="/account">your account</a> and try again.');
    // A step-up (NIST SP 800-63B §4.1.3 re-authentication) before an irreversible act.
    if (!fresh(ctx)) return stalePage(ctx, 403);
    const { session, user } = ctx.state.session!;
    const typed = (ctx.request.body as Record<string, unknown>).confirm_email;
    if (typeof typed !== 'string' || typed.trim().toLowerCase() !== user.email.toLowerCase())
      return formPage(ctx, { error: 'The address you typed is not your account’s.', status: 400 });
    await deps.userLifecycle.erase(session.tenant_id, user.id, { type: 'user', id: user.id });
    clearCookie(ctx, SESSION_COOKIE, secure);
    renderPage(ctx, {
      title: 'Account deleted',
      body:
        '<h1>Your account was deleted</h1>' +
        '<p>Everything held about you here was erased, and you are signed out.</p>',
    });
  });

  return router;
}
