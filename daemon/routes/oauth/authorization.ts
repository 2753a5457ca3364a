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
import type { ResolvedClient } from '../../../shared/services/directory.js';
import { brandingFrom } from '../../../shared/services/branding.js';
import { redirectUriMatches as matchRedirectUri } from '../../../shared/redirect-uris.js';
import { ApiError } from '../../../shared/errors.js';
import { t } from '../../../shared/i18n/index.js';
import type { LoginUser } from '../../../shared/services/auth/codes.js';
import type { AuthParams } from '../../../shared/services/auth/oauth.js';
import type { RequestMeta } from '../../../shared/services/auth/history.js';
import type { AppDeps, AppState } from '../../context.js';
import { readCookie, setCookie } from '../../cookies.js';
import { errorPage, pageLocale, type PageLook } from '../../views/html.js';
import type { ResponseMode } from '../../../shared/services/signed-responses.js';
import { formPostPage } from './response-mode.js';

export type Ctx = ParameterizedContext<AppState>;
const CSRF_COOKIE = 'iam_csrf';

/**
 * Whether a redirect (or post-logout redirect) URI is registered for the client: exact string
 * comparison (RFC 9700 §4.1.3), with only the port free for a public client's loopback IP
 * literal (RFC 8252 §7.3). See shared/redirect-uris.ts.
 */
export function redirectUriMatches(client: Client, uri: string): boolean {
  // A metadata document's redirect URIs are compared exactly, loopback ports included
  // (draft-ietf-oauth-client-id-metadata-document §4.1; docs/client-metadata-documents.md).
  if (client.registered_via === 'metadata_document') return client.redirect_uris.includes(uri);
  return matchRedirectUri(client.redirect_uris, client.client_type === 'public', uri);
}

/**
 * The parameter that marks a continuation of an authorization request after its login
 * (docs/oauth.md, "Continuing after sign-in"). Its value is `<request id>.<mac>`, the MAC
 * binding the request to the session the login created, so it proves nothing in another
 * browser and cannot be made for a request that was never signed in.
 */
export const LOGIN_DONE_PARAM = 'login_done';

/**
 * The URL that continues an authorization after login: the client's own request, as it sent
 * it (its prompt included), plus the login-done marker. It never adds prompt=none: whether the
 * user must still consent is decided afresh, and a consent page is shown when it is needed
 * (OIDC Core §3.1.2.4); prompt=none stays what the client itself asked for (§3.1.2.1).
 */
function continuationUrlFor(issuer: string, p: AuthParams, marker: string): string {
  const u = new URL(`${issuer}/authorize`);
  // A pushed request or a request object (docs/par.md) is continued by its saved id alone: its
  // request_uri is spent and its request object's jti too, and its client may be held to PAR.
  if (p.via) {
    u.searchParams.set('client_id', p.client_id);
    u.searchParams.set(LOGIN_DONE_PARAM, marker);
    return u.toString();
  }
  const q: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: p.client_id,
    redirect_uri: p.redirect_uri,
    scope: p.scope.join(' '),
    state: p.state,
    nonce: p.nonce,
    code_challenge: p.code_challenge,
    code_challenge_method: p.code_challenge === undefined ? undefined : 'S256',
    max_age: p.max_age?.toString(),
    prompt: p.prompt?.length ? p.prompt.join(' ') : undefined,
    login_hint: p.login_hint,
    ui_locales: p.ui_locales,
    response_mode: p.response_mode,
    [LOGIN_DONE_PARAM]: marker,
  };
  for (const [k, v] of Object.entries(q)) if (v !== undefined) u.searchParams.set(k, v);
  for (const r of p.resource ?? []) u.searchParams.append('resource', r);
  return u.toString();
}

/** Whether two validated authorization requests ask for the same thing. */
function sameRequest(a: AuthParams, b: AuthParams): boolean {
  return (
    a.client_id === b.client_id &&
    a.redirect_uri === b.redirect_uri &&
    a.code_challenge === b.code_challenge &&
    a.state === b.state &&
    a.nonce === b.nonce &&
    a.max_age === b.max_age &&
    a.scope.join(' ') === b.scope.join(' ') &&
    (a.resource ?? []).join(' ') === (b.resource ?? []).join(' ') &&
    (a.prompt ?? []).join(' ') === (b.prompt ?? []).join(' ') &&
    a.response_mode === b.response_mode
  );
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
  const continuationKey = deriveKey(deps.config.secretKey, 'login-continuation');
  const continuationMac = (requestId: string, sessionId: string) =>
    createHmac('sha256', continuationKey).update(`${requestId}:${sessionId}`).digest('base64url');

  /**
   * The URL a login sends the browser to: the saved authorization request `requestId`, with
   * the marker that its login is done in session `sessionId` (the session's id, never its cookie).
   */
  const continuationUrl = (requestId: string, sessionId: string, p: AuthParams): string =>
    continuationUrlFor(issuer, p, `${requestId}.${continuationMac(requestId, sessionId)}`);

  /**
   * Whether `marker` shows that the login of this very request was done in this session: the
   * MAC matches (constant-time), the saved request was consumed by that login, and it asked
   * for what this request asks. Anything else is no marker at all: the request is handled as
   * the client sent it.
   */
  const loginDone = async (marker: string | undefined, p: AuthParams, sessionId: string): Promise<boolean> => {
    if (!marker || marker.length > 200) return false;
    const dot = marker.indexOf('.');
    if (dot <= 0) return false;
    const requestId = marker.slice(0, dot);
    const a = Buffer.from(continuationMac(requestId, sessionId));
    const b = Buffer.from(marker.slice(dot + 1));
    if (a.length !== b.length || !timingSafeEqual(a, b)) return false;
    const saved = await deps.oauth.getAuthRequest(requestId);
    return !!saved && saved.consumed && sameRequest(saved.params, p);
  };

  /**
   * The saved request a by-id continuation (a pushed request or a request object, docs/par.md)
   * names: the marker's MAC matches this session, the request was consumed by that login, and
   * it arrived by PAR or JAR. Undefined otherwise.
   */
  const resumed = async (marker: string, sessionId: string): Promise<AuthParams | undefined> => {
    const dot = marker.indexOf('.');
    if (marker.length > 200 || dot <= 0) return undefined;
    const requestId = marker.slice(0, dot);
    const a = Buffer.from(continuationMac(requestId, sessionId));
    const b = Buffer.from(marker.slice(dot + 1));
    if (a.length !== b.length || !timingSafeEqual(a, b)) return undefined;
    const saved = await deps.oauth.getAuthRequest(requestId);
    return saved?.consumed && saved.params.via ? saved.params : undefined;
  };

  /**
   * The language and look of a page of the flow: the request's `ui_locales`, else the browser's
   * Accept-Language (docs/localisation.md); the tenant's branding when the tenant is known
   * (docs/branding.md). A tenant gone since the request was made shows the page unbranded.
   */
  /**
   * The page's language and the tenant's branding. Given the client lookup (ResolvedClient),
   * which read the tenant already, the branding costs no second read on the login path.
   */
  const lookFor = async (ctx: Ctx, tenant?: string | ResolvedClient, uiLocales?: string): Promise<PageLook> => {
    const locale = pageLocale(ctx, uiLocales);
    if (!tenant) return { locale };
    if (typeof tenant !== 'string')
      return { locale, branding: brandingFrom(tenant.tenantName, tenant.brandingSection) };
    const tenantId = tenant;
    const branding = await deps.branding.get(tenantId).catch((e: unknown) => {
      if (e instanceof ApiError && e.status === 404) return undefined;
      throw e;
    });
    return { locale, branding };
  };

  /**
   * The authorization response, success or a redirected error, in the request's response mode
   * (response-mode.ts, docs/jarm.md): `query` redirects with the parameters and `iss` (RFC 9207
   * §2); `form_post` posts them from an auto-submitting page; `query.jwt` and `form_post.jwt`
   * send one parameter, `response`, a JWT signed with the client's
   * `authorization_signed_response_alg` that holds them and `iss` (JARM §2.1, §2.3).
   */
  const respond = async (
    ctx: Ctx,
    to: { client: Client; redirectUri: string; mode?: ResponseMode; uiLocales?: string },
    params: Record<string, string | undefined>,
  ): Promise<void> => {
    let fields: Record<string, string> = {};
    if (to.mode === 'query.jwt' || to.mode === 'form_post.jwt') {
      const response = await deps.responseSigner.authorizationResponse({
        clientId: to.client.client_id,
        alg: to.client.authorization_signed_response_alg,
        params,
      });
      fields = { response };
    } else {
      for (const [k, v] of Object.entries(params)) if (v !== undefined) fields[k] = v;
      fields.iss = issuer; // RFC 9207 §2
    }
    if (to.mode === 'form_post' || to.mode === 'form_post.jwt')
      return formPostPage(ctx, to.redirectUri, fields, await lookFor(ctx, to.client.tenant_id, to.uiLocales));
    const u = new URL(to.redirectUri);
    for (const [k, v] of Object.entries(fields)) u.searchParams.set(k, v);
    ctx.status = 302;
    ctx.redirect(u.toString());
  };
  /** The response's destination for a validated request `p` of `client`. */
  const target = (client: Client, p: AuthParams) => ({
    client,
    redirectUri: p.redirect_uri,
    mode: p.response_mode,
    uiLocales: p.ui_locales,
  });

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
    client: Client,
    p: AuthParams,
    s: { id: string; auth_time: number; acr: string; amr: string[] },
    user: LoginUser,
  ) => {
    const code = await deps.oauth.issueCode({
      tenantId: client.tenant_id,
      params: p,
      userId: user.id,
      sessionId: s.id,
      authTime: s.auth_time,
      acr: s.acr,
      amr: s.amr,
    });
    await respond(ctx, target(client, p), { code, state: p.state });
  };

  /**
   * Loads the authorization request a form belongs to and checks its CSRF token. A refusal is
   * a page; for the passkey endpoints, which the page's script calls with JSON (`json`), it is
   * the error object instead (thrown).
   */
  const formContext = async (ctx: Ctx, mode: 'page' | 'json' = 'page') => {
    const refuse = (status: number, error: string, key: string, look: PageLook): undefined => {
      // The JSON answer stays in English: it is the API's error object, read by the page's script.
      if (mode === 'json') throw new ApiError(status, error, t('en', `errors.${key}.message`));
      errorPage(ctx, status, key, look);
      return undefined;
    };
    const b = (ctx.request.body ?? {}) as Record<string, unknown>;
    const challenge = typeof b.challenge === 'string' ? b.challenge : '';
    const req = await deps.oauth.getAuthRequest(challenge);
    if (!req || req.consumed) return refuse(400, 'invalid_request', 'expired', await lookFor(ctx));
    // A metadata document client is bound to the request's tenant (refetched if it left the cache).
    const found = await deps.clientMetadata.resolveClient(req.params.client_id, req.tenantId, { fetch: true });
    // The request's client names its tenant (a request is saved under its client's tenant).
    const look = await lookFor(
      ctx,
      found?.client.tenant_id === req.tenantId ? found : req.tenantId,
      req.params.ui_locales,
    );
    if (!csrfOk(ctx, challenge, b.csrf)) return refuse(403, 'forbidden', 'forged', look);
    if (!found || found.client.status !== 'active' || found.tenantState !== 'active')
      return refuse(403, 'access_denied', 'unavailable', look);
    return {
      look,
      b,
      challenge,
      req,
      client: found.client,
      allowSignup: found.allowSignup,
      policyVersions: found.policyVersions,
      csrf: b.csrf as string,
    };
  };

  return {
    issuer,
    secure,
    respond,
    target,
    csrfFor,
    finish,
    formContext,
    continuationUrl,
    loginDone,
    resumed,
    lookFor,
  };
}
