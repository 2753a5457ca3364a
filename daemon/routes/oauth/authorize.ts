/**
 * GET /authorize (authorization code flow only) and the pages it leads to: email-code login
 * and consent. Validation follows RFC 6749 §4.1.2.1: until the client and redirect URI are
 * known good, errors are shown on a page and never redirected; after that they go back to the
 * client with `error`, `state` and `iss` (RFC 9207).
 */
import Router from '@koa/router';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Middleware, ParameterizedContext } from 'koa';
import { deriveKey, randomToken } from '../../../shared/crypto.js';
import type { Client } from '../../../shared/db/entities.js';
import { ApiError, OAuthError } from '../../../shared/errors.js';
import { email as emailSchema } from '../../../shared/schemas/common.js';
import { ACR_EMAIL_CODE, AMR_EMAIL_CODE, type LoginUser } from '../../../shared/services/auth/codes.js';
import type { AuthParams } from '../../../shared/services/auth/oauth.js';
import { PKCE_VALUE } from '../../../shared/services/auth/pkce.js';
import { SESSION_COOKIE, SESSION_TTL_MS } from '../../../shared/services/auth/policy.js';
import type { CreatedSession } from '../../../shared/services/auth/sessions.js';
import type { AppDeps, AppState } from '../../context.js';
import { readCookie, setCookie } from '../../cookies.js';
import type { ApiRegistry } from '../../openapi.js';
import { errorPage } from '../../views/html.js';
import { codeStep, consentPage, emailStep } from '../../views/login.js';

type Ctx = ParameterizedContext<AppState>;
const CSRF_COOKIE = 'iam_csrf';
const PROMPTS = new Set(['none', 'login', 'consent', 'select_account']);

class AuthzRedirectError extends Error {
  constructor(
    readonly error: string,
    description: string,
  ) {
    super(description);
  }
}

/** RFC 8252 §7.3: a native (public) client's loopback redirect may use any port. */
export function redirectUriMatches(client: Client, uri: string): boolean {
  if (client.redirect_uris.includes(uri)) return true;
  if (client.client_type !== 'public') return false;
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' || !['127.0.0.1', '[::1]'].includes(u.hostname)) return false;
  return client.redirect_uris.some((r) => {
    try {
      const reg = new URL(r);
      return (
        reg.protocol === 'http:' &&
        reg.hostname === u.hostname &&
        reg.pathname === u.pathname &&
        reg.search === u.search
      );
    } catch {
      return false;
    }
  });
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

export function requestMeta(ctx: Ctx) {
  return { ip: ctx.ip, userAgent: ctx.get('User-Agent') || undefined };
}

/** The Retry-After value (RFC 9110 §10.2.3) of a refused resend: the seconds the service named. */
export function retryAfter(e: ApiError): string {
  return String(typeof e.extra.retry_after === 'number' ? e.extra.retry_after : 30);
}

export function authorizeRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const issuer = deps.config.issuer;
  const secure = issuer.startsWith('https:');
  const csrfKey = deriveKey(deps.config.secretKey, 'login-csrf');

  // ---- helpers ----

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

  /** RFC 6749 §3.1: parameters must not repeat. */
  const param = (q: Record<string, unknown>, name: string): string | undefined => {
    const v = q[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw new AuthzRedirectError('invalid_request', `${name} must appear once.`);
    return v;
  };

  /** Validates everything after client_id and redirect_uri; throws AuthzRedirectError. */
  const parseParams = (q: Record<string, unknown>, client: Client, redirectUri: string): AuthParams => {
    const responseType = param(q, 'response_type');
    if (!responseType) throw new AuthzRedirectError('invalid_request', 'response_type is required.');
    if (responseType !== 'code')
      throw new AuthzRedirectError('unsupported_response_type', 'Only response_type=code is supported.');
    if (!client.grant_types.includes('authorization_code'))
      throw new AuthzRedirectError('unauthorized_client', 'This client may not use the authorization code flow.');
    // RFC 9700 §2.1.1: PKCE is required, and only S256 (plain offers no protection against a leaked request).
    const challenge = param(q, 'code_challenge');
    const method = param(q, 'code_challenge_method');
    if (!challenge) throw new AuthzRedirectError('invalid_request', 'code_challenge is required (PKCE, RFC 7636).');
    if (method !== 'S256')
      throw new AuthzRedirectError('invalid_request', 'code_challenge_method must be S256; plain is not allowed.');
    if (!PKCE_VALUE.test(challenge)) throw new AuthzRedirectError('invalid_request', 'code_challenge is malformed.');
    const scope = [...new Set((param(q, 'scope') ?? '').split(' ').filter(Boolean))];
    if (scope.length === 0) throw new AuthzRedirectError('invalid_scope', 'scope is required.');
    const outside = scope.filter((s) => !client.scopes.includes(s));
    if (outside.length)
      throw new AuthzRedirectError('invalid_scope', `Scope not allowed for this client: ${outside.join(' ')}`);
    const prompt = param(q, 'prompt')?.split(' ').filter(Boolean);
    if (prompt?.some((x) => !PROMPTS.has(x)))
      throw new AuthzRedirectError('invalid_request', 'prompt has an unknown value.');
    if (prompt?.includes('none') && prompt.length > 1)
      throw new AuthzRedirectError('invalid_request', 'prompt=none cannot be combined with other values.');
    const maxAgeRaw = param(q, 'max_age');
    if (maxAgeRaw !== undefined && !/^\d{1,9}$/.test(maxAgeRaw))
      throw new AuthzRedirectError('invalid_request', 'max_age must be a non-negative integer.');
    const nonce = param(q, 'nonce');
    if (nonce !== undefined && nonce.length > 512)
      throw new AuthzRedirectError('invalid_request', 'nonce is too long.');
    const state = param(q, 'state');
    if (state !== undefined && state.length > 2048)
      throw new AuthzRedirectError('invalid_request', 'state is too long.');
    const loginHint = param(q, 'login_hint');
    return {
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope,
      state,
      nonce,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      prompt,
      max_age: maxAgeRaw === undefined ? undefined : Number(maxAgeRaw),
      login_hint: loginHint?.slice(0, 320),
    };
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

  const startLogin = async (ctx: Ctx, tenantId: string, client: Client, p: AuthParams) => {
    const challenge = await deps.oauth.saveAuthRequest(tenantId, p);
    emailStep(ctx, { challenge, csrf: csrfFor(ctx, challenge), clientName: client.name, email: p.login_hint });
  };

  // ---- GET /authorize ----

  const authorize: Middleware<AppState> = async (ctx) => {
    const q = ctx.query as Record<string, unknown>;
    const clientId = typeof q.client_id === 'string' ? q.client_id : undefined;
    const found = clientId ? await deps.directory.resolveClient(clientId) : null;
    if (!found || found.client.status !== 'active')
      return errorPage(
        ctx,
        400,
        'Unknown application',
        'The application that sent you here is not registered. No redirect was made.',
      );
    const { client } = found;
    const redirectUri = typeof q.redirect_uri === 'string' ? q.redirect_uri : undefined;
    if (!redirectUri || !redirectUriMatches(client, redirectUri)) {
      return errorPage(
        ctx,
        400,
        'Invalid redirect',
        "The redirect address does not match the application's registration. No redirect was made.",
      );
    }
    if (found.tenantState !== 'active')
      return errorPage(ctx, 403, 'Unavailable', 'This application is not available at the moment.');

    let p: AuthParams;
    try {
      p = parseParams(q, client, redirectUri);
    } catch (e) {
      if (e instanceof AuthzRedirectError)
        return redirectTo(ctx, redirectUri, {
          error: e.error,
          error_description: e.message,
          state: typeof q.state === 'string' ? q.state : undefined,
        });
      throw e;
    }
    const fail = (error: string, description: string) =>
      redirectTo(ctx, p.redirect_uri, { error, error_description: description, state: p.state });

    const current = await deps.sessions.findSession(readCookie(ctx, SESSION_COOKIE));
    const session = current && current.session.tenant_id === client.tenant_id ? current : undefined;
    const tooOld = session && p.max_age !== undefined && Date.now() - session.session.auth_time > p.max_age * 1000;
    if (!session || tooOld || p.prompt?.includes('login')) {
      if (p.prompt?.includes('none')) return fail('login_required', 'The user is not signed in.');
      return startLogin(ctx, client.tenant_id, client, { ...p, prompt: undefined });
    }
    if (!client.first_party) {
      const consent = await deps.oauth.findConsent(client.tenant_id, session.user.id, client.client_id);
      const covered = consent && p.scope.every((s) => consent.scopes.includes(s));
      if (!covered || p.prompt?.includes('consent')) {
        if (p.prompt?.includes('none'))
          return fail('consent_required', 'The user has not granted this application access.');
        const challenge = await deps.oauth.saveAuthRequest(client.tenant_id, p);
        return consentPage(ctx, {
          challenge,
          csrf: csrfFor(ctx, challenge),
          clientName: client.name,
          scopes: p.scope,
          userEmail: session.user.email,
        });
      }
    } else {
      // First-party clients skip the screen, but the grant is still recorded for the user to see.
      await deps.oauth.grantConsent({
        tenantId: client.tenant_id,
        userId: session.user.id,
        clientId: client.client_id,
        scopes: p.scope,
      });
    }
    await finish(ctx, client.tenant_id, p, session.session, session.user);
  };

  api.add(
    router,
    {
      method: 'get',
      path: '/authorize',
      summary: 'OAuth 2.0 authorization endpoint (code flow with PKCE S256)',
      tags: ['oauth'],
      security: 'cookie',
      responses: {
        302: { description: 'redirect to the client with code or error, always with iss (RFC 9207)' },
        200: { description: 'login or consent page', contentType: 'text/html' },
        400: { description: 'error page: unknown client or redirect URI' },
      },
    },
    authorize,
  );

  // ---- login and consent forms ----

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

  router.post('/login/email-code', async (ctx) => {
    const f = await formContext(ctx);
    if (!f) return;
    const parsed = emailSchema.safeParse(f.b.email);
    if (!parsed.success)
      return emailStep(ctx, {
        challenge: f.challenge,
        csrf: f.csrf,
        clientName: f.client.name,
        email: typeof f.b.email === 'string' ? f.b.email : '',
        error: 'Enter a valid email address, like name@example.com.',
        status: 400,
      });
    try {
      await deps.codes.sendCode({
        tenantId: f.client.tenant_id,
        clientId: f.client.client_id,
        email: parsed.data,
        allowSignup: f.allowSignup,
        meta: requestMeta(ctx),
      });
    } catch (e) {
      if (e instanceof ApiError && e.status === 429) {
        ctx.set('Retry-After', retryAfter(e));
        return codeStep(ctx, {
          challenge: f.challenge,
          csrf: f.csrf,
          clientName: f.client.name,
          email: parsed.data,
          error: e.message,
          status: 429,
        });
      }
      throw e;
    }
    codeStep(ctx, {
      challenge: f.challenge,
      csrf: f.csrf,
      clientName: f.client.name,
      email: parsed.data,
      notice: 'Code sent.',
    });
  });

  router.post('/login/verify', async (ctx) => {
    const f = await formContext(ctx);
    if (!f) return;
    const email = emailSchema.safeParse(f.b.email);
    const code = typeof f.b.code === 'string' ? f.b.code.trim() : '';
    if (!email.success)
      return emailStep(ctx, {
        challenge: f.challenge,
        csrf: f.csrf,
        clientName: f.client.name,
        error: 'Enter your email address again.',
        status: 400,
      });
    let created: CreatedSession;
    try {
      // The consumed code, the session and the consumed request commit together.
      const { result } = await deps.codes.verifyCode(
        {
          tenantId: f.client.tenant_id,
          clientId: f.client.client_id,
          email: email.data,
          code,
          allowSignup: f.allowSignup,
          meta: requestMeta(ctx),
        },
        async (tx, user) => {
          const c = await deps.sessions.createSession(tx, {
            user,
            authTime: Date.now(),
            acr: ACR_EMAIL_CODE,
            amr: AMR_EMAIL_CODE,
            clientId: f.client.client_id,
            meta: requestMeta(ctx),
          });
          await deps.oauth.consumeAuthRequest(f.req.tenantId, f.challenge, tx);
          return c;
        },
      );
      created = result!;
    } catch (e) {
      if (e instanceof OAuthError || e instanceof ApiError) {
        return codeStep(ctx, {
          challenge: f.challenge,
          csrf: f.csrf,
          clientName: f.client.name,
          email: email.data,
          error: e.message,
          status: e instanceof ApiError ? e.status : 400,
        });
      }
      throw e;
    }
    setCookie(ctx, SESSION_COOKIE, created.cookie, { maxAgeSeconds: SESSION_TTL_MS / 1000, secure });
    ctx.status = 303; // RFC 9110 §15.4.4: the follow-up is a GET
    ctx.redirect(continuationUrl(issuer, f.req.params));
  });

  router.post('/authorize/consent', async (ctx) => {
    const f = await formContext(ctx);
    if (!f) return;
    const current = await deps.sessions.findSession(readCookie(ctx, SESSION_COOKIE));
    if (!current || current.session.tenant_id !== f.client.tenant_id)
      return errorPage(
        ctx,
        401,
        'Signed out',
        'You are no longer signed in. Go back to the application and start again.',
      );
    if (!(await deps.oauth.consumeAuthRequest(f.req.tenantId, f.challenge)))
      return errorPage(ctx, 400, 'Already answered', 'This request was already answered.');
    const p = f.req.params;
    if (f.b.decision !== 'allow')
      return redirectTo(ctx, p.redirect_uri, {
        error: 'access_denied',
        error_description: 'The user denied the request.',
        state: p.state,
      });
    await deps.oauth.grantConsent({
      tenantId: f.client.tenant_id,
      userId: current.user.id,
      clientId: f.client.client_id,
      scopes: p.scope,
    });
    await finish(ctx, f.client.tenant_id, p, current.session, current.user);
  });

  return router;
}
