/**
 * What GET /authorize (authorize.ts), its login forms (login-forms.ts) and its consent form
 * (consent.ts) share: the redirect back to the client, the forms' CSRF token, the
 * authorization request a form continues, and issuing the code. Also the matching of redirect
 * URIs and the continuation URL, which logout and the direct login API use too.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ParameterizedContext } from 'koa';
import { deriveKey, randomToken } from '../../../shared/crypto.js';
import type { Client } from '../../../shared/db/entities.js';
import { redirectUriMatches as matchRedirectUri } from '../../../shared/redirect-uris.js';
import type { ApiError } from '../../../shared/errors.js';
import type { LoginUser } from '../../../shared/services/auth/codes.js';
import type { AuthParams } from '../../../shared/services/auth/oauth.js';
import type { RequestMeta } from '../../../shared/services/auth/history.js';
import type { AppDeps, AppState } from '../../context.js';
import { readCookie, setCookie } from '../../cookies.js';
import { errorPage } from '../../views/html.js';

export type Ctx = ParameterizedContext<AppState>;
const CSRF_COOKIE = 'iam_csrf';

/**
 * Whether a redirect (or post-logout redirect) URI is registered for the client: exact string
 * comparison (RFC 9700 §4.1.3), with only the port free for a public client's loopback IP
 * literal (RFC 8252 §7.3). See shared/redirect-uris.ts.
 */
export function redirectUriMatches(client: Client, uri: string): boolean {
  return matchRedirectUri(client.redirect_uris, client.client_type === 'public', uri);
}

/** The URL that continues an authorization after login: the same request with prompt=none. */
export function continuationUrl(issuer: string, p: AuthParams): string {
  const u = new URL(`${issuer}/authorize`);
  const q: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: p.client_id,
    redirect_uri: p.redirect_uri,
    scope: p.scope.join(' '),
    state: p.state,
    nonce: p.nonce,
    code_challenge: p.code_challenge,
    code_challenge_method: 'S256',
    max_age: p.max_age?.toString(),
    prompt: 'none',
  };
  for (const [k, v] of Object.entries(q)) if (v !== undefined) u.searchParams.set(k, v);
  return u.toString();
}

export function requestMeta(ctx: Ctx): RequestMeta {
  return { ip: ctx.ip, userAgent: ctx.get('User-Agent') || undefined };
}

/** The Retry-After value (RFC 9110 §10.2.3) of a refused resend: the seconds the service named. */
export function retryAfter(e: ApiError): string {
  return String(typeof e.extra.retry_after === 'number' ? e.extra.retry_after : 30);
}

/** The pieces of the authorization flow, bound to this daemon's issuer and keys. */
export function authorizationFlow(deps: AppDeps) {
  const issuer = deps.config.issuer;
  const csrfKey = deriveKey(deps.config.secretKey, 'login-csrf');
  const secure = issuer.startsWith('https:');

  const redirectTo = (ctx: Ctx, redirectUri: string, params: Record<string, string | undefined>) => {
    const u = new URL(redirectUri);
    for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
    u.searchParams.set('iss', issuer); // RFC 9207 §2
    ctx.status = 302;
    ctx.redirect(u.toString());
  };

  /** Double-submit CSRF for the login forms: an HttpOnly cookie, and a form field bound to it
   * and to the authorization request, so a login cannot be forged into another's browser. */
  const csrfFor = (ctx: Ctx, challenge: string): string => {
    let c = readCookie(ctx, CSRF_COOKIE);
    if (!c || !/^[A-Za-z0-9_-]{20,64}$/.test(c)) {
      c = randomToken(24);
      setCookie(ctx, CSRF_COOKIE, c, { maxAgeSeconds: 3600, secure });
    }
    return createHmac('sha256', csrfKey).update(`${c}:${challenge}`).digest('base64url');
  };
  const csrfOk = (ctx: Ctx, challenge: string, token: unknown): boolean => {
    const c = readCookie(ctx, CSRF_COOKIE);
    if (!c || typeof token !== 'string') return false;
    const a = Buffer.from(createHmac('sha256', csrfKey).update(`${c}:${challenge}`).digest('base64url'));
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b);
  };

  /** Issues the code and sends the browser back to the client. */
  const finish = async (
    ctx: Ctx,
    tenantId: string,
    p: AuthParams,
    s: { id: string; auth_time: number; acr: string; amr: string[] },
    user: LoginUser,
  ) => {
    const code = await deps.oauth.issueCode({
      tenantId,
      params: p,
      userId: user.id,
      sessionId: s.id,
      authTime: s.auth_time,
      acr: s.acr,
      amr: s.amr,
    });
    redirectTo(ctx, p.redirect_uri, { code, state: p.state });
  };

  /** Loads the authorization request a form belongs to and checks its CSRF token. */
  const formContext = async (ctx: Ctx) => {
    const b = (ctx.request.body ?? {}) as Record<string, unknown>;
    const challenge = typeof b.challenge === 'string' ? b.challenge : '';
    const req = await deps.oauth.getAuthRequest(challenge);
    if (!req || req.consumed) {
      errorPage(
        ctx,
        400,
        'Sign-in expired',
        'This sign-in request has expired. Go back to the application and start again.',
      );
      return undefined;
    }
    if (!csrfOk(ctx, challenge, b.csrf)) {
      errorPage(
        ctx,
        403,
        'Request refused',
        'The form could not be verified. Go back to the application and start again.',
      );
      return undefined;
    }
    const found = await deps.directory.resolveClient(req.params.client_id);
    if (!found || found.client.status !== 'active' || found.tenantState !== 'active') {
      errorPage(ctx, 403, 'Unavailable', 'This application is not available at the moment.');
      return undefined;
    }
    return { b, challenge, req, client: found.client, allowSignup: found.allowSignup, csrf: b.csrf as string };
  };

  return { issuer, secure, redirectTo, csrfFor, finish, formContext };
}
