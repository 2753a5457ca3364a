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
import { timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { randomToken } from '../../../shared/crypto.js';
import { OAuthError } from '../../../shared/errors.js';
import { pkceChallenge } from '../../../shared/services/auth/account-console.js';
import { SESSION_COOKIE } from '../../../shared/services/auth/policy.js';
import type { AppDeps, AppState } from '../../context.js';
import { clearCookie, readCookie, setCookie } from '../../cookies.js';
import type { ApiRegistry } from '../../openapi.js';
import { renderPage } from '../../views/html.js';

const FLOW_COOKIE = 'console_signin';
const FLOW_TTL_SECONDS = 15 * 60;

const same = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

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
  const secure = issuer.startsWith('https:');
  const path = '/console/callback';

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
    const state = randomToken(24);
    const verifier = randomToken(48);
    setCookie(ctx, FLOW_COOKIE, `${state}.${verifier}`, { maxAgeSeconds: FLOW_TTL_SECONDS, secure, path });
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: client.redirect_uris[0],
      scope: 'openid',
      state,
      code_challenge: pkceChallenge(verifier),
      code_challenge_method: 'S256',
      ...(fresh ? { prompt: 'login' } : {}),
    });
    ctx.status = 303;
    ctx.redirect(`${issuer}/authorize?${q}`);
  });

  api.page(router, { method: 'get', path }, async (ctx) => {
    const [state = '', verifier = ''] = (readCookie(ctx, FLOW_COOKIE) ?? '').split('.');
    clearCookie(ctx, FLOW_COOKIE, secure, path);
    const q = ctx.query;
    const failed = () => plainPage(ctx, 400, 'Sign-in failed', 'The sign-in did not complete. Try again.', true);
    if (!state || !verifier || typeof q.state !== 'string' || !same(q.state, state)) return failed();
    if (typeof q.code !== 'string' || !q.code) return failed();
    const client = await deps.operators.consoleClient(issuer);
    if (!client) return failed();
    let sessionId: string;
    try {
      const { code } = await deps.oauth.exchangeCode(client, {
        code: q.code,
        redirectUri: client.redirect_uris[0],
        codeVerifier: verifier,
      });
      sessionId = code.session_id;
    } catch (e) {
      if (e instanceof OAuthError) return failed();
      throw e;
    }
    const mine = await deps.sessions.findSession(readCookie(ctx, SESSION_COOKIE));
    if (!mine || mine.session.id !== sessionId) return failed();
    ctx.status = 303;
    ctx.redirect('/console');
  });

  return router;
}
