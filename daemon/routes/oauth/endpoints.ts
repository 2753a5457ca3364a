/**
 * Discovery (OIDC Discovery §3), UserInfo (OIDC Core §5.3), revocation (RFC 7009) and
 * RP-initiated logout (OIDC RP-Initiated Logout 1.0).
 */
import Router from '@koa/router';
import type { Middleware, ParameterizedContext } from 'koa';
import { sessionSid } from '../../../shared/crypto.js';
import { ApiError, InvalidRequest } from '../../../shared/errors.js';
import { SESSION_COOKIE } from '../../../shared/services/auth/policy.js';
import { CLIENT_ASSERTION_ALGORITHMS } from '../../../shared/services/client-auth.js';
import { isExternalSubject } from '../../../shared/services/token-exchange/subjects.js';
import { SIGNING_ALGORITHMS } from '../../../shared/services/keys.js';
import { isTokenInvalid } from '../../../shared/services/tokens.js';
import { SCOPE_CLAIMS } from '../../../shared/services/standard-claims.js';
import type { AppDeps, AppState } from '../../context.js';
import { clearCookie, readCookie } from '../../cookies.js';
import { authenticateClient, type ClientAuthState } from '../../middleware/koa-client-auth.js';
import type { ApiRegistry, HeaderParameter } from '../../openapi.js';
import { sessionCsrf } from '../../csrf.js';
import { LogoutForm, RevocationForm } from '../../../shared/schemas/oauth-forms.js';
import { LOCALES, t, translator } from '../../../shared/i18n/index.js';
import { esc, pageLocale, renderPage, tHtml, type PageLook } from '../../views/html.js';
import { redirectUriMatches, requestMeta } from './authorization.js';
import { RESPONSE_MODES_SUPPORTED } from './response-mode.js';
import { parMetadata } from './par.js';
import { checkPresentation, DPOP_HEADER, presentedToken } from '../../dpop.js';
import { DPOP_ALGORITHMS } from '../../../shared/services/dpop/index.js';

type Ctx = ParameterizedContext<AppState>;

export function oauthEndpoints(deps: AppDeps, api: ApiRegistry): Router<ClientAuthState> {
  // ClientAuthState: /revoke authenticates its client first (koa-client-auth.ts).
  const router = new Router<ClientAuthState>();
  const issuer = deps.config.issuer;
  const secure = issuer.startsWith('https:');
  const tags = ['oauth'];

  const discovery = {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    userinfo_endpoint: `${issuer}/userinfo`,
    jwks_uri: `${issuer}/jwks`,
    revocation_endpoint: `${issuer}/revoke`,
    introspection_endpoint: `${issuer}/introspect`,
    end_session_endpoint: `${issuer}/logout`,
    // RFC 7591 §3 / RFC 8414 §2: open to tenants whose policy allows it (docs/registration.md).
    registration_endpoint: `${issuer}/register`,
    // address and phone are offered by the tenants that turn them on (docs/claims.md).
    scopes_supported: ['openid', 'profile', 'email', 'address', 'phone', 'offline_access'],
    response_types_supported: ['code'],
    // JARM §4 and RFC 9701 §7 (docs/jarm.md): the modes, and the algorithms of signed responses.
    response_modes_supported: [...RESPONSE_MODES_SUPPORTED],
    authorization_signing_alg_values_supported: [...SIGNING_ALGORITHMS],
    introspection_signing_alg_values_supported: [...SIGNING_ALGORITHMS],
    grant_types_supported: [
      'authorization_code',
      'refresh_token',
      'client_credentials',
      'urn:ietf:params:oauth:grant-type:token-exchange',
    ],
    subject_types_supported: ['public'],
    // OIDC Discovery §3: RS256 MUST be listed; every algorithm a client may register is
    // (docs/oauth.md, "Signing algorithms"). ES256 stays the default of a client that registers none.
    id_token_signing_alg_values_supported: [...SIGNING_ALGORITHMS],
    userinfo_signing_alg_values_supported: [...SIGNING_ALGORITHMS],
    // Client authentication (docs/oauth.md): the same methods at /token and /revoke; /introspect
    // serves confidential clients only (RFC 7662 §2.1), so never `none`.
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
    token_endpoint_auth_signing_alg_values_supported: CLIENT_ASSERTION_ALGORITHMS,
    revocation_endpoint_auth_methods_supported: [
      'client_secret_basic',
      'client_secret_post',
      'private_key_jwt',
      'none',
    ],
    revocation_endpoint_auth_signing_alg_values_supported: CLIENT_ASSERTION_ALGORITHMS,
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    introspection_endpoint_auth_signing_alg_values_supported: CLIENT_ASSERTION_ALGORITHMS,
    code_challenge_methods_supported: ['S256'],
    claims_supported: [
      'sub',
      'iss',
      'aud',
      'exp',
      'iat',
      'auth_time',
      'nonce',
      'acr',
      'amr',
      'azp',
      'sid',
      ...new Set(Object.values(SCOPE_CLAIMS).flat()),
      'tenant_id',
    ],
    prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
    authorization_response_iss_parameter_supported: true, // RFC 9207 §3
    // PAR (RFC 9126 §5) and JAR (RFC 9101 §9), docs/par.md.
    ...parMetadata(issuer),
    // RFC 9449 §5.1: the algorithms of DPoP proofs (docs/dpop.md).
    dpop_signing_alg_values_supported: DPOP_ALGORITHMS,
    claims_parameter_supported: false,
    // OIDC Discovery §3: the languages of the pages (docs/localisation.md), chosen by ui_locales.
    ui_locales_supported: [...LOCALES],
  };

  // draft-ietf-oauth-client-id-metadata-document §5: advertised while any tenant accepts
  // documents (one issuer serves every tenant; docs/client-metadata-documents.md, "Discovery").
  const metadata = async () =>
    (await deps.clientMetadata.supported()) ? { ...discovery, client_id_metadata_document_supported: true } : discovery;
  api.add(
    router,
    {
      method: 'get',
      path: '/.well-known/openid-configuration',
      operationId: 'getOpenIdConfiguration',
      summary: 'OpenID Provider metadata',
      tags,
      security: 'none',
      cors: 'open',
      responses: { 200: { description: 'metadata' } },
    },
    async (ctx) => {
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = await metadata();
    },
  );
  // RFC 8414 §3: the same metadata at the OAuth path.
  api.add(
    router,
    {
      method: 'get',
      path: '/.well-known/oauth-authorization-server',
      operationId: 'getAuthorizationServerMetadata',
      summary: 'OAuth 2.0 Authorization Server metadata (RFC 8414 §3), the same as the OpenID Provider metadata',
      tags,
      security: 'none',
      cors: 'open',
      responses: { 200: { description: 'metadata' } },
    },
    async (ctx) => {
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = await metadata();
    },
  );

  // ---- UserInfo ----
  // Authentication first (a route's `authenticate`, before anything reads its input): a bearer
  // access token (RFC 6750 §2.1 header only), not revoked.
  const userinfoAuth: Middleware<AppState> = async (ctx, next) => {
    const challenge = (error?: string) =>
      ctx.set('WWW-Authenticate', `Bearer realm="iam"${error ? `, error="${error}"` : ''}`);
    const m = presentedToken(ctx);
    if (!m) {
      challenge();
      throw new ApiError(401, 'invalid_token', 'A bearer access token is required.');
    }
    let claims;
    try {
      claims = await deps.tokens.verifyAccessToken(m.token);
    } catch {
      challenge('invalid_token');
      throw new ApiError(401, 'invalid_token', 'The access token is invalid or expired.');
    }
    if (await deps.oauth.isAccessTokenRevoked(String(claims.tenant_id), String(claims.jti), claims.fid)) {
      challenge('invalid_token');
      throw new ApiError(401, 'invalid_token', 'The access token has been revoked.');
    }
    // OIDC Core §5.3 answers for an end user of this provider. A token about another issuer's
    // subject (token exchange of an ID-JAG, docs/token-exchange.md) is not one: RFC 6750 §3.1.
    if (isExternalSubject(claims)) {
      challenge('invalid_token');
      throw new ApiError(401, 'invalid_token', "The access token's subject is not a user of this provider.");
    }
    await checkPresentation(deps, ctx, m, claims);
    ctx.state.auth = claims;
    await next();
  };
  const userinfo: Middleware<AppState> = async (ctx) => {
    const claims = ctx.state.auth!;
    const scope = String(claims.scope ?? '').split(' ');
    if (!scope.includes('openid')) {
      ctx.set('WWW-Authenticate', 'Bearer realm="iam", error="insufficient_scope", scope="openid"');
      throw new ApiError(403, 'insufficient_scope', 'The token lacks the openid scope.');
    }
    const user = await deps.oauth.userInfo(String(claims.tenant_id), String(claims.sub));
    if (!user || user.status !== 'active' || user.lifecycle_state !== 'active') {
      ctx.set('WWW-Authenticate', 'Bearer realm="iam", error="invalid_token"');
      throw new ApiError(401, 'invalid_token', 'The account is not available.');
    }
    // OIDC Core §5.4: the custom claims bound to UserInfo, then the standard claims of the
    // token's scopes, the same as the ID token's; address and phone only while the tenant offers them.
    // The `roles` claim names the roles held for the token's resources (its `aud` less this issuer).
    const targets = ([] as unknown[]).concat(claims.aud ?? []).filter((a): a is string => typeof a === 'string');
    const body = await deps.claims.userinfo(
      user,
      scope,
      targets.filter((a) => a !== deps.config.issuer),
    );
    // OIDC Core §5.3.2: a client registered with userinfo_signed_response_alg gets the claims as
    // a JWT (with iss and aud) signed with that algorithm, as application/jwt; every other client
    // gets plain JSON.
    const found = await deps.directory.resolveClient(String(claims.client_id));
    const alg = found?.client.tenant_id === user.tenant_id ? found.client.userinfo_signed_response_alg : null;
    if (!alg) {
      ctx.body = body;
      return;
    }
    ctx.type = 'application/jwt';
    ctx.body = await deps.tokens.signUserinfo({ clientId: found!.client.client_id, claims: body, alg });
  };
  const userinfoRoute = {
    path: '/userinfo',
    summary: 'OIDC UserInfo',
    tags,
    security: 'bearer',
    tenant: 'token',
    cors: 'client-origins',
    authenticate: userinfoAuth,
    headers: [DPOP_HEADER] as HeaderParameter[],
    responses: { 200: { description: 'claims' }, 401: { description: 'invalid token' } },
  } as const;
  api.add(router, { ...userinfoRoute, method: 'get', scopes: ['openid'], operationId: 'getUserInfo' }, userinfo);
  // OIDC Core §5.3.1: POST as well (the token in the Authorization header, the body unread).
  api.add(router, { ...userinfoRoute, method: 'post', scopes: ['openid'], operationId: 'postUserInfo' }, userinfo);

  // ---- Revocation (RFC 7009) ----
  api.add(
    router,
    {
      method: 'post',
      path: '/revoke',
      operationId: 'revokeToken',
      summary: 'Token revocation (RFC 7009); always 200 for a valid client',
      tags,
      security: 'basic',
      parser: 'oauth-form',
      form: RevocationForm,
      cors: 'client-origins',
      authenticate: authenticateClient(deps),
      responses: {
        200: { description: 'revoked, or the token was unknown' },
        400: { description: 'invalid_request: no token, or a form that does not parse' },
        401: { description: 'invalid_client' },
      },
    },
    async (ctx) => {
      const body = ctx.request.body as Record<string, unknown>;
      const token = body.token;
      if (typeof token !== 'string' || !token) throw new InvalidRequest('token is required.');
      const client = ctx.state.client!;
      const hint = body.token_type_hint;
      const tryRefresh = () => deps.oauth.revokeRefreshToken(token, client.client_id);
      const tryAccess = async () => {
        if (token.split('.').length !== 3) return false;
        let claims: Awaited<ReturnType<typeof deps.tokens.verifyAccessToken>>;
        try {
          claims = await deps.tokens.verifyAccessToken(token);
        } catch (e) {
          // An invalid token is not ours to revoke; the keys failing to load is an outage.
          if (isTokenInvalid(e)) return false;
          throw e;
        }
        if (claims.client_id !== client.client_id) return false; // RFC 7009 §2.1: only the owner may revoke
        // A failed write is not an unknown token: it fails the request (5xx), so that a 200 always
        // means the revocation was recorded (RFC 7009 §2.2.1 lets the server answer 503).
        await deps.oauth.revokeAccessToken(String(claims.jti), String(claims.tenant_id), (claims.exp ?? 0) * 1000);
        return true;
      };
      if (hint === 'access_token') {
        if (!(await tryAccess())) await tryRefresh();
      } else if (!(await tryRefresh())) await tryAccess();
      ctx.status = 200;
      ctx.body = {};
    },
  );

  // ---- RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0) ----
  // §2: the OP asks the user whether to sign out unless the request carries an id_token_hint
  // that names the browser's own session. Anything else (no hint; a hint for another user or
  // another tenant, even a valid one: an attacker has their own) shows a confirmation page
  // whose POST carries a CSRF token bound to the session, so a cross-site request ends nothing.
  const logoutCsrf = sessionCsrf(deps.config.secretKey, 'logout-csrf');
  const sidOf = sessionSid(deps.config.secretKey);
  const failed = (ctx: Ctx, look: PageLook, key: string) => {
    const title = t(look.locale, 'logout.failedTitle');
    renderPage(ctx, {
      status: 400,
      title,
      ...look,
      body: `<h1>${esc(title)}</h1><p role="alert">${esc(t(look.locale, key))}</p>`,
    });
  };
  /** The page's language (§2 `ui_locales`, else Accept-Language) and the tenant's look when one is known. */
  const lookOf = async (ctx: Ctx, uiLocales: string | undefined, tenantId?: string): Promise<PageLook> => {
    const locale = pageLocale(ctx, uiLocales?.slice(0, 256));
    return { locale, ...(tenantId ? { branding: await deps.branding.get(tenantId).catch(() => undefined) } : {}) };
  };

  const logout = async (ctx: Ctx) => {
    // §2: GET parameters in the query, POST ones in a form body, which may be absent.
    const raw: unknown = ctx.method === 'POST' ? ctx.request.body : ctx.query;
    const src = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
    const str = (k: string) => (typeof src[k] === 'string' ? src[k] : undefined);
    const uiLocales = str('ui_locales');
    const hint = str('id_token_hint');
    const hintClaims = hint ? await deps.tokens.verifyIdTokenHint(hint) : undefined;
    if (hint && !hintClaims) return failed(ctx, await lookOf(ctx, uiLocales), 'logout.invalid');
    const hintAud = typeof hintClaims?.aud === 'string' ? hintClaims.aud : undefined;
    // §2: when both are given, client_id must be the audience of the ID token.
    if (str('client_id') && hintAud && str('client_id') !== hintAud)
      return failed(ctx, await lookOf(ctx, uiLocales), 'logout.invalid');
    const clientId = str('client_id') ?? hintAud;
    const postLogout = str('post_logout_redirect_uri');
    const state = str('state');
    if (postLogout) {
      // A metadata document client is bound to the tenant of the ID token hint (none: refused).
      const hintTenant = typeof hintClaims?.tenant_id === 'string' ? hintClaims.tenant_id : undefined;
      const found = clientId ? await deps.clientMetadata.resolveClient(clientId, hintTenant, { fetch: true }) : null;
      // §3: only to a URI registered for the client the request names (its registered redirect
      // URIs, docs/oauth.md): no open redirector.
      if (!found || !redirectUriMatches(found.client, postLogout))
        return failed(ctx, await lookOf(ctx, uiLocales, found?.client.tenant_id), 'logout.unregistered');
    }

    const current = await deps.sessions.findSession(readCookie(ctx, SESSION_COOKIE));
    const look = await lookOf(ctx, uiLocales, current?.session.tenant_id);
    if (current) {
      // The hint must name this session: its user, its tenant and, when the ID token carries
      // one (every ID token of the code flow does), its `sid`.
      const hintIsOurs =
        hintClaims !== undefined &&
        hintClaims.sub === current.user.id &&
        hintClaims.tenant_id === current.session.tenant_id &&
        (hintClaims.sid === undefined || hintClaims.sid === sidOf(current.session.id));
      const confirmed = ctx.method === 'POST' && logoutCsrf.verify(current.session.id, src.csrf);
      if (!hintIsOurs && !confirmed) {
        const hidden = (name: string, value: string | undefined) =>
          value === undefined ? '' : `<input type="hidden" name="${name}" value="${esc(value)}">`;
        const tr = translator(look.locale);
        return renderPage(ctx, {
          title: tr('logout.confirmTitle'),
          ...look,
          body: `<h1>${esc(tr('logout.confirmHeading'))}</h1>
<p>${tHtml(look.locale, 'logout.confirmQuestion', { email: `<strong>${esc(current.user.email)}</strong>` })}</p>
<form method="post" action="/logout">
${hidden('csrf', logoutCsrf.tokenFor(current.session.id))}
${hidden('client_id', clientId)}
${hidden('post_logout_redirect_uri', postLogout)}
${hidden('state', state)}
${hidden('ui_locales', uiLocales)}
<button type="submit">${esc(tr('logout.button'))}</button></form>`,
        });
      }
      await deps.sessions.logout(current, { clientId, meta: requestMeta(ctx) });
    }
    // No session: nothing to end, nothing to ask.
    clearCookie(ctx, SESSION_COOKIE, secure);
    if (postLogout) {
      const u = new URL(postLogout);
      if (state) u.searchParams.set('state', state); // §3
      ctx.status = 302;
      return ctx.redirect(u.toString());
    }
    const tr = translator(look.locale);
    renderPage(ctx, {
      title: tr('logout.doneTitle'),
      ...look,
      body: `<h1>${esc(tr('logout.doneHeading'))}</h1><p>${esc(tr('logout.doneMessage'))}</p>`,
    });
  };
  const logoutResponses = {
    302: { description: 'back to the client (post_logout_redirect_uri, with state)' },
    200: { description: 'signed-out or confirmation page', contentType: 'text/html' },
    400: {
      description: 'invalid id_token_hint, or an unregistered post_logout_redirect_uri',
      contentType: 'text/html',
    },
  };
  api.add(
    router,
    {
      method: 'get',
      path: '/logout',
      operationId: 'logout',
      summary: 'RP-initiated logout: at once with an id_token_hint of this session, else a confirmation page',
      tags,
      security: 'optional-cookie',
      responses: logoutResponses,
    },
    logout,
  );
  // The confirmation page's form, or a client's logout request as a POST (§2).
  api.add(
    router,
    {
      method: 'post',
      path: '/logout',
      operationId: 'logoutByPost',
      summary: 'RP-initiated logout as a form POST (§2), also the confirmation page’s form (with its csrf)',
      tags,
      security: 'optional-cookie',
      parser: 'form',
      form: LogoutForm,
      responses: logoutResponses,
    },
    logout,
  );

  return router;
}
