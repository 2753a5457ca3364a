/**
 * The operator console's sign-in (docs/console.md, "Signing in"), the account page's pattern
 * (routes/account/sign-in.ts) with the platform tenant's console client: a first-party public
 * client, the authorization code flow with PKCE (RFC 7636) against the issuer's own /authorize,
 * so the login page, its throttles and passkeys all apply, and the session it leaves is a normal
 * session of the service.
 *
 * - GET /console/sign-in: a fresh `state` and verifier in a short-lived HttpOnly cookie, then
 *   303 to /authorize. `?fresh=1` (the step-up) adds `prompt=login` (OIDC Core §3.1.2.1): the
 *   operator authenticates again even with a live session, which renews its auth_time.
 * - GET /console/callback: `state` must equal the cookie's (constant-time; RFC 6749 §10.12),
 *   the code is redeemed with the verifier, and the code's session must be this browser's own.
 */
import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { SESSION_COOKIE } from '../../../shared/services/auth/policy.js';
import { callbackCode, endCodeFlow, redeemCode, startCodeFlow, type CodeFlow } from '../../code-flow.js';
import type { AppDeps, AppState } from '../../context.js';
import { readCookie } from '../../cookies.js';
import type { ApiRegistry } from '../../openapi.js';
import { renderPage } from '../../views/html.js';

/** Nothing to sign in to yet, or the sign-in did not complete. */
function plainPage(ctx: ParameterizedContext, status: number, title: string, text: string, retry: boolean) {
  renderPage(ctx, {
    status,
    title,
    body: `<h1>${title}</h1>
<p role="alert">${text}</p>${retry ? '\n<a class="button" href="/console/sign-in">Sign in to the console</a>' : ''}`,
  });
}

export function consoleSignInRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const issuer = deps.config.issuer;
  const flow: CodeFlow = {
    cookie: 'console_signin',
    callback: '/console/callback',
    secure: issuer.startsWith('https:'),
  };

  api.page(router, { method: 'get', path: '/console/sign-in' }, async (ctx) => {
    const fresh = ctx.query.fresh === '1';
    if (!fresh && (await deps.sessions.findSession(readCookie(ctx, SESSION_COOKIE)))) {
      ctx.status = 303; // RFC 9110 §15.4.4: already signed in
      return ctx.redirect('/console');
    }
    const client = await deps.operators.consoleClient(issuer);
    if (!client)
      return plainPage(
        ctx,
        404,
        'No console yet',
        'No operator has been added yet: run <code>iam operators add --email … --role platform-admin</code>.',
        false,
      );
    const q = startCodeFlow(ctx, flow, client);
    if (fresh) q.set('prompt', 'login');
    ctx.status = 303;
    ctx.redirect(`${issuer}/authorize?${q}`);
  });

  api.page(router, { method: 'get', path: flow.callback }, async (ctx) => {
    const [state = '', verifier = ''] = endCodeFlow(ctx, flow);
    const failed = () => plainPage(ctx, 400, 'Sign-in failed', 'The sign-in did not complete. Try again.', true);
    const code = callbackCode(ctx, state, verifier);
    if (!code) return failed();
    const client = await deps.operators.consoleClient(issuer);
    if (!client || !(await redeemCode(deps, ctx, client, code, verifier))) return failed();
    ctx.status = 303;
    ctx.redirect('/console');
  });

  return router;
}
