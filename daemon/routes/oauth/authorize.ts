/**
 * GET /authorize (authorization code flow only). Validation follows RFC 6749 §4.1.2.1: until
 * the client and redirect URI are known good, errors are shown on a page and never redirected;
 * after that they go back to the client with `error`, `state` and `iss` (RFC 9207). A user who
 * must sign in gets the login form (login-forms.ts); one who must consent, the consent form
 * (consent.ts); both continue the authorization request saved here.
 */
import { grantableScope, isAdminScope, requestableScope } from '../../../shared/scopes.js';
import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Client } from '../../../shared/db/entities.js';
import type { ResolvedClient } from '../../../shared/services/directory.js';
import type { AuthParams } from '../../../shared/services/auth/oauth.js';
import { PKCE_VALUE } from '../../../shared/services/auth/pkce.js';
import { SESSION_COOKIE } from '../../../shared/services/auth/policy.js';
import type { AppDeps, AppState } from '../../context.js';
import { readCookie } from '../../cookies.js';
import type { ApiRegistry } from '../../openapi.js';
import { errorPage, serviceSentence } from '../../views/html.js';
import { consentPage, emailStep, thirdPartyOf } from '../../views/login.js';
import { UpstreamLoginError } from '../../../shared/services/upstream-idp/index.js';
import { authorizationFlow, LOGIN_DONE_PARAM, redirectUriMatches, type Ctx } from './authorization.js';
import { startReauthentication } from './upstream-login.js';
import { isOptionalClaimScope } from '../../../shared/services/standard-claims.js';
import { MAX_RESOURCES, targetsOf } from '../../../shared/services/rbac-tokens.js';
import { isDocumentClientId } from '../../../shared/services/client-metadata/index.js';
import { InvalidTarget, OAuthError } from '../../../shared/errors.js';
import { isJkt } from '../../../shared/services/dpop/index.js';

const PROMPTS = new Set(['none', 'login', 'consent', 'select_account']);

class AuthzRedirectError extends Error {
  constructor(
    readonly error: string,
    description: string,
  ) {
    super(description);
  }
}

export function authorizeRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { redirectTo, csrfFor, finish, loginDone, lookFor } = authorizationFlow(deps);

  /** RFC 6749 §3.1: parameters must not repeat. */
  const param = (q: Record<string, unknown>, name: string): string | undefined => {
    const v = q[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw new AuthzRedirectError('invalid_request', `${name} must appear once.`);
    return v;
  };

  /** Validates everything after client_id and redirect_uri; throws AuthzRedirectError. */
  const parseParams = (q: Record<string, unknown>, client: Client, redirectUri: string): AuthParams => {
    // OIDC Core §6.1 and §6.2: request objects are not offered (discovery says
    // request_parameter_supported and request_uri_parameter_supported false); a request that
    // carries one is refused as §3.1.2.6 names it, rather than served without what it asked.
    if (q.request !== undefined)
      throw new AuthzRedirectError('request_not_supported', 'Request objects are not supported.');
    if (q.request_uri !== undefined)
      throw new AuthzRedirectError('request_uri_not_supported', 'request_uri is not supported.');
    const responseType = param(q, 'response_type');
    if (!responseType) throw new AuthzRedirectError('invalid_request', 'response_type is required.');
    if (responseType !== 'code')
      throw new AuthzRedirectError('unsupported_response_type', 'Only response_type=code is supported.');
    if (!client.grant_types.includes('authorization_code'))
      throw new AuthzRedirectError('unauthorized_client', 'This client may not use the authorization code flow.');
    // RFC 9700 §2.1.1: PKCE is required, and only S256 (plain offers no protection against a leaked
    // request). A confidential client registered with require_pkce false may leave it out (its
    // secret binds the code's redemption to it, RFC 9700 §2.1.1 "MAY"); a challenge it does send
    // is checked as strictly and binds the code (docs/oauth.md, "PKCE"). A public client is always
    // held to PKCE, whatever its row says.
    const challenge = param(q, 'code_challenge');
    const method = param(q, 'code_challenge_method');
    const pkceOptional = !client.require_pkce && client.client_type === 'confidential';
    if (!challenge && !(pkceOptional && method === undefined))
      throw new AuthzRedirectError('invalid_request', 'code_challenge is required (PKCE, RFC 7636).');
    if (challenge !== undefined) {
      if (method !== 'S256')
        throw new AuthzRedirectError('invalid_request', 'code_challenge_method must be S256; plain is not allowed.');
      if (!PKCE_VALUE.test(challenge)) throw new AuthzRedirectError('invalid_request', 'code_challenge is malformed.');
    }
    const asked = [...new Set((param(q, 'scope') ?? '').split(' ').filter(Boolean))];
    if (asked.length === 0) throw new AuthzRedirectError('invalid_scope', 'scope is required.');
    // offline_access comes with the refresh_token grant (OIDC Core §11); the user grants it on
    // the consent page like any other scope (docs/oauth.md).
    const outside = asked.filter((s) => !requestableScope(client, s));
    if (outside.length)
      throw new AuthzRedirectError('invalid_scope', `Scope not allowed for this client: ${outside.join(' ')}`);
    // Admin scopes go only to client_credentials clients (docs/scopes.md), never to a user, even
    // on a client registered with one before that was refused.
    const admin = asked.filter(isAdminScope);
    if (admin.length)
      throw new AuthzRedirectError('invalid_scope', `Admin scopes are not granted to users: ${admin.join(' ')}`);
    // The account scope goes only to first-party clients (docs/scopes.md, "The account scope").
    // A third-party client registered with it before registration refused that gets the rest:
    // RFC 6749 §3.3 lets the server grant fewer scopes; the consent page never lists it, and
    // the token response's `scope` says what was granted.
    const scope = asked.filter((s) => grantableScope(client, s));
    if (scope.length === 0)
      throw new AuthzRedirectError('invalid_scope', 'None of the requested scopes can be granted to this client.');
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
    // RFC 8707 §2: `resource` may repeat; the one rule (resource-indicators.ts) is applied by
    // the handler below, which may read the tenant's resource servers.
    const rawResource = q.resource === undefined ? [] : ([] as unknown[]).concat(q.resource);
    if (!rawResource.every((r): r is string => typeof r === 'string'))
      throw new AuthzRedirectError('invalid_request', 'resource must be one or more string values.');
    const resource = [...new Set(rawResource)];
    if (resource.length > MAX_RESOURCES)
      throw new AuthzRedirectError('invalid_request', `At most ${MAX_RESOURCES} resource parameters are accepted.`);
    const loginHint = param(q, 'login_hint');
    // OIDC Core §3.1.2.1: a preference, never an error; kept with the request so every page of
    // this login speaks it (docs/localisation.md). Bounded like the other free-text parameters.
    const uiLocales = param(q, 'ui_locales')?.slice(0, 256);
    // RFC 9449 §10: the code is bound to this DPoP key (checked where the code is redeemed).
    const dpopJkt = param(q, 'dpop_jkt');
    if (dpopJkt !== undefined && !isJkt(dpopJkt))
      throw new AuthzRedirectError('invalid_request', 'dpop_jkt must be a JWK SHA-256 thumbprint (RFC 9449 §10).');
    return {
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope,
      state,
      nonce,
      ...(challenge !== undefined ? { code_challenge: challenge, code_challenge_method: 'S256' as const } : {}),
      prompt,
      max_age: maxAgeRaw === undefined ? undefined : Number(maxAgeRaw),
      login_hint: loginHint?.slice(0, 320),
      ...(uiLocales ? { ui_locales: uiLocales } : {}),
      ...(resource.length ? { resource } : {}),
      ...(dpopJkt ? { dpop_jkt: dpopJkt } : {}),
    };
  };

  const startLogin = async (ctx: Ctx, found: ResolvedClient, p: AuthParams) => {
    const { client } = found;
    const tenantId = client.tenant_id;
    const challenge = await deps.oauth.saveAuthRequest(tenantId, p);
    emailStep(ctx, {
      challenge,
      csrf: csrfFor(ctx, challenge),
      clientName: client.name,
      look: await lookFor(ctx, found, p.ui_locales),
      email: p.login_hint,
      // "Continue with <name>" per active upstream provider (upstream-login.ts).
      providers: await deps.upstreamBroker.buttons(tenantId),
    });
  };

  /**
   * A registered client, or one named by its metadata document URL: bound to the tenant whose
   * registered resource server the request's `resource` names (docs/client-metadata-documents.md,
   * "Which tenant"). Throws InvalidTarget or InvalidClient, shown on the error page.
   */
  const resolveFor = async (clientId: string, q: Record<string, unknown>): Promise<ResolvedClient | null> => {
    if (!isDocumentClientId(clientId)) return deps.directory.resolveClient(clientId);
    const resources = ([] as unknown[]).concat(q.resource ?? []).filter((r): r is string => typeof r === 'string');
    const tenant = await deps.clientMetadata.tenantForResources(resources);
    if (typeof tenant === 'string') throw new InvalidTarget(tenant);
    return deps.clientMetadata.resolve(clientId, tenant.tenantId);
  };

  // ---- GET /authorize ----

  const authorize: Middleware<AppState> = async (ctx) => {
    // OIDC Core §3.1.2.1: the same request as a GET query or as a form POST. A POST takes its
    // parameters from the form alone (a query string beside it is not read, so a parameter
    // cannot arrive twice by two routes).
    const q = (ctx.method === 'POST' ? (ctx.request.body ?? {}) : ctx.query) as Record<string, unknown>;
    const clientId = typeof q.client_id === 'string' ? q.client_id : undefined;
    const uiLocales = typeof q.ui_locales === 'string' ? q.ui_locales.slice(0, 256) : undefined;
    let found: ResolvedClient | null;
    try {
      found = clientId ? await resolveFor(clientId, q) : null;
    } catch (e) {
      // Not verified: an error page, never a redirect to the request's redirect_uri.
      if (!(e instanceof OAuthError)) throw e;
      const look = await lookFor(ctx, undefined, uiLocales);
      return errorPage(ctx, 400, 'clientDocument', look, serviceSentence(look, `${e.error}: ${e.message}`));
    }
    if (!found || found.client.status !== 'active')
      return errorPage(ctx, 400, 'unknownClient', await lookFor(ctx, undefined, uiLocales));
    const { client } = found;
    const redirectUri = typeof q.redirect_uri === 'string' ? q.redirect_uri : undefined;
    if (!redirectUri || !redirectUriMatches(client, redirectUri))
      return errorPage(ctx, 400, 'badRedirect', await lookFor(ctx, found, uiLocales));
    if (found.tenantState !== 'active') return errorPage(ctx, 403, 'unavailable', await lookFor(ctx, found, uiLocales));

    let p: AuthParams;
    let marker: string | undefined;
    try {
      p = parseParams(q, client, redirectUri);
      marker = param(q, LOGIN_DONE_PARAM);
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
    // RFC 8707 §2: each resource must pass the one rule every token request applies, else
    // invalid_target, redirected with state and iss. PAR (RFC 9126) will call the same rule.
    const refusal = await deps.resourceServers.refusal(client, p.resource ?? []);
    if (refusal) return fail('invalid_target', refusal);
    // address and phone (OIDC Core §5.4) only where the tenant offers them (docs/claims.md):
    // RFC 6749 §4.1.2.1 invalid_scope, as for any scope the client may not ask for.
    const optional = p.scope.filter(isOptionalClaimScope);
    if (optional.length) {
      const offered = await deps.directory.standardClaimScopes(client.tenant_id);
      const off = optional.filter((s) => !offered.includes(s));
      if (off.length) return fail('invalid_scope', `Scope not offered by this tenant: ${off.join(' ')}`);
    }

    const current = await deps.sessions.findSession(readCookie(ctx, SESSION_COOKIE));
    const session = current && current.session.tenant_id === client.tenant_id ? current : undefined;
    // A continuation after this request's own login (authorization.ts, LOGIN_DONE_PARAM) has
    // met prompt=login and max_age (OIDC Core §3.1.2.1) with the login just done; asking
    // again would loop. Everything else (consent, prompt=consent) is decided as for any request.
    const justSignedIn = session !== undefined && (await loginDone(marker, p, session.session.id));
    const tooOld = session && p.max_age !== undefined && Date.now() - session.session.auth_time > p.max_age * 1000;
    if (!session || (!justSignedIn && (tooOld || p.prompt?.includes('login')))) {
      if (p.prompt?.includes('none')) return fail('login_required', 'The user is not signed in.');
      // The request is saved as the client sent it, prompt included, so that the continuation
      // keeps the client's own prompt semantics (prompt=consent still shows the consent page).
      return startLogin(ctx, found, p);
    }
    // A link whose upstream refused to refresh its tokens for good needs the user to sign in
    // there again (docs/identity-providers.md, "Re-authentication"), whichever way they signed
    // in here; without interaction that is login_required (OIDC Core §3.1.2.6).
    const reauth = await deps.upstreamBroker.reauthenticationProvider(client.tenant_id, session.user.id);
    if (reauth) {
      if (p.prompt?.includes('none'))
        return fail('login_required', 'The user must sign in again at their identity provider.');
      const authRequestId = await deps.oauth.saveAuthRequest(client.tenant_id, p);
      try {
        return await startReauthentication(deps, ctx, {
          tenantId: client.tenant_id,
          providerId: reauth,
          userId: session.user.id,
          authRequestId,
        });
      } catch (e) {
        if (e instanceof UpstreamLoginError) {
          const look = await lookFor(ctx, found, p.ui_locales);
          return errorPage(ctx, 503, 'signInUnavailable', look, serviceSentence(look, e.message));
        }
        throw e;
      }
    }
    // The governed scopes (permissions of the tenant's API resources) the user holds no role for
    // on the target resources are left out here, before the consent page, so the page lists and
    // the consent records only what will be granted (RFC 6749 §3.3; docs/rbac.md).
    const principal = { type: 'user' as const, id: session.user.id };
    const targets = targetsOf(client, p.resource);
    p = { ...p, scope: await deps.rbacTokens.grantedScope(client.tenant_id, principal, p.scope, targets) };
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
          look: await lookFor(ctx, found, p.ui_locales),
          thirdParty: thirdPartyOf(client, p.redirect_uri),
          scopes: p.scope,
          userEmail: session.user.email,
          policyVersions: found.policyVersions,
        });
      }
    } else {
      // First-party clients skip the screen, but the grant is still recorded for the user to see.
      await deps.oauth.grantConsent({
        tenantId: client.tenant_id,
        userId: session.user.id,
        clientId: client.client_id,
        scopes: p.scope,
        policyVersions: found.policyVersions,
      });
    }
    await finish(ctx, client.tenant_id, p, session.session, session.user);
  };

  // OIDC Core §3.1.2.1: GET and POST are one endpoint; the POST reads the form instead of the query.
  for (const [method, operationId, summary] of [
    ['get', 'authorize', 'OAuth 2.0 authorization endpoint (code flow with PKCE S256)'],
    [
      'post',
      'authorizeByPost',
      'The authorization request as a form POST (OIDC Core §3.1.2.1); answers as GET /authorize',
    ],
  ] as const)
    api.add(
      router,
      {
        method,
        path: '/authorize',
        operationId,
        summary,
        tags: ['oauth'],
        security: 'optional-cookie',
        responses: {
          302: { description: 'redirect to the client with code or error, always with iss (RFC 9207)' },
          200: { description: 'login or consent page', contentType: 'text/html' },
          400: { description: 'error page: unknown client or redirect URI, or a POST body that does not parse' },
        },
      },
      authorize,
    );

  return router;
}
