/**
 * GET /authorize (authorization code flow only). Validation follows RFC 6749 §4.1.2.1: until
 * the client and redirect URI are known good, errors are shown on a page and never redirected;
 * after that they go back to the client with `error`, `state` and `iss` (RFC 9207). A user who
 * must sign in gets the login form (login-forms.ts); one who must consent, the consent form
 * (consent.ts); both continue the authorization request saved here.
 */
import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ResolvedClient } from '../../../shared/services/directory.js';
import type { AuthParams } from '../../../shared/services/auth/oauth.js';
import { SESSION_COOKIE } from '../../../shared/services/auth/policy.js';
import type { AppDeps, AppState } from '../../context.js';
import { readCookie } from '../../cookies.js';
import type { ApiRegistry } from '../../openapi.js';
import { errorPage, serviceSentence } from '../../views/html.js';
import { consentPage, emailStep, thirdPartyOf } from '../../views/login.js';
import { UpstreamLoginError } from '../../../shared/services/upstream-idp/index.js';
import { authorizationFlow, LOGIN_DONE_PARAM, redirectUriMatches, type Ctx } from './authorization.js';
import { startReauthentication } from './upstream-login.js';
import { targetsOf } from '../../../shared/services/rbac-tokens.js';
import { InvalidRequestUri, REQUEST_URI_PREFIX } from '../../../shared/services/par/index.js';
import { AuthzRedirectError, checkAuthParams, param, parseAuthParams } from './authorize-params.js';
import { parseResponseMode } from './response-mode.js';
import { isDocumentClientId } from '../../../shared/services/client-metadata/index.js';
import { InvalidTarget, OAuthError } from '../../../shared/errors.js';

export function authorizeRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const { respond, target, csrfFor, finish, loginDone, resumed, lookFor } = authorizationFlow(deps);

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

  /** The client of a request whose tenant is already known (a pushed or a continued one). */
  const resolveIn = (clientId: string, tenantId: string): Promise<ResolvedClient | null> =>
    isDocumentClientId(clientId)
      ? deps.clientMetadata.resolve(clientId, tenantId)
      : deps.directory.resolveClient(clientId);

  const authorize: Middleware<AppState> = async (ctx) => {
    // OIDC Core §3.1.2.1: the same request as a GET query or as a form POST. A POST takes its
    // parameters from the form alone (a query string beside it is not read, so a parameter
    // cannot arrive twice by two routes).
    const q = (ctx.method === 'POST' ? (ctx.request.body ?? {}) : ctx.query) as Record<string, unknown>;
    const clientId = typeof q.client_id === 'string' ? q.client_id : undefined;
    const uiLocales = typeof q.ui_locales === 'string' ? q.ui_locales.slice(0, 256) : undefined;
    // A refused request_uri (or a request object without a registered redirect_uri beside it): a
    // page, never a redirect, since no redirect_uri has been verified (RFC 9126 §4; docs/par.md).
    const refused = async (e: OAuthError, found?: ResolvedClient) => {
      const look = await lookFor(ctx, found, uiLocales);
      return errorPage(ctx, 400, 'badAuthorizationRequest', look, serviceSentence(look, `${e.error}: ${e.message}`));
    };
    // A request validated before: pushed (RFC 9126 §4: only client_id is read beside its
    // request_uri), or a PAR or JAR request continued after its sign-in by its saved id.
    let known: { tenantId: string; params: AuthParams } | undefined;
    let marker: string | undefined;
    let found: ResolvedClient | null;
    try {
      if (typeof q.request_uri === 'string' && q.request_uri.startsWith(REQUEST_URI_PREFIX))
        known = await deps.par.take(clientId ?? '', q.request_uri);
      else if (typeof q[LOGIN_DONE_PARAM] === 'string' && q.response_type === undefined && q.request === undefined) {
        marker = q[LOGIN_DONE_PARAM];
        const s = await deps.sessions.findSession(readCookie(ctx, SESSION_COOKIE));
        const params = s ? await resumed(marker, s.session.id) : undefined;
        if (!params || params.client_id !== clientId) return errorPage(ctx, 400, 'expired', await lookFor(ctx));
        known = { tenantId: s!.session.tenant_id, params };
      }
      found = !clientId ? null : known ? await resolveIn(clientId, known.tenantId) : await resolveFor(clientId, q);
    } catch (e) {
      if (!(e instanceof OAuthError)) throw e;
      if (e instanceof InvalidRequestUri) return refused(e);
      // Not verified: an error page, never a redirect to the request's redirect_uri.
      const look = await lookFor(ctx, undefined, uiLocales);
      return errorPage(ctx, 400, 'clientDocument', look, serviceSentence(look, `${e.error}: ${e.message}`));
    }
    if (!found || found.client.status !== 'active' || (known && known.tenantId !== found.client.tenant_id))
      return errorPage(ctx, 400, 'unknownClient', await lookFor(ctx, undefined, uiLocales));
    const { client } = found;
    // RFC 9101 §6.3: under a request object only its parameters are read (client_id must match).
    let rq = q;
    if (!known && q.request !== undefined) {
      try {
        rq = await deps.par.requestObjects.verify(client, typeof q.request === 'string' ? q.request : '');
      } catch (e) {
        if (!(e instanceof OAuthError)) throw e;
        // A redirect_uri beside the object, registered for the client, may carry the error
        // (its state with it); else a page.
        const outer = typeof q.redirect_uri === 'string' ? q.redirect_uri : undefined;
        if (!outer || !redirectUriMatches(client, outer)) return refused(e, found);
        const state = typeof q.state === 'string' ? q.state : undefined;
        const outerMode = parseResponseMode(q);
        const to = { client, redirectUri: outer, mode: 'mode' in outerMode ? outerMode.mode : undefined, uiLocales };
        return respond(ctx, to, { error: e.error, error_description: e.message, state });
      }
    }
    const redirectUri = known ? known.params.redirect_uri : typeof rq.redirect_uri === 'string' ? rq.redirect_uri : '';
    if (!redirectUri || !redirectUriMatches(client, redirectUri))
      return errorPage(ctx, 400, 'badRedirect', await lookFor(ctx, found, uiLocales));
    if (found.tenantState !== 'active') return errorPage(ctx, 403, 'unavailable', await lookFor(ctx, found, uiLocales));

    // The response mode (response-mode.ts) of the request as sent (under JAR: the object's): the
    // errors below go back in it; parseAuthParams refuses one not offered, which goes back in the
    // default mode. A pushed or continued request carries its mode in its saved parameters.
    const mode = known ? { mode: known.params.response_mode } : parseResponseMode(rq);
    let p: AuthParams;
    try {
      if (known) p = known.params;
      else {
        // RFC 9126 §5 and RFC 9101 §10.5: the client (or its tenant) requires PAR or JAR; the
        // redirect_uri is registered, so the refusal goes back to the client (node-oidc-provider too).
        // FAPI 2.0 §5.3.2.2: a client under the profile sends pushed requests only (docs/fapi.md).
        if (deps.par.pushRequired(found) || (await deps.fapi.requiresPar(client)))
          throw new AuthzRedirectError('invalid_request', 'Pushed authorization requests are required (RFC 9126 §5).');
        if (client.require_signed_request_object && rq === q)
          throw new AuthzRedirectError('invalid_request', 'A signed request object is required (RFC 9101 §10.5).');
        p = parseAuthParams(rq, client, redirectUri);
        if (rq !== q) p = { ...p, via: 'jar' };
        else marker = param(q, LOGIN_DONE_PARAM);
      }
    } catch (e) {
      if (e instanceof AuthzRedirectError)
        return respond(
          ctx,
          { client, redirectUri, mode: 'mode' in mode ? mode.mode : undefined, uiLocales },
          { error: e.error, error_description: e.message, state: typeof rq.state === 'string' ? rq.state : undefined },
        );
      throw e;
    }
    const fail = (error: string, description: string) =>
      respond(ctx, target(client, p), { error, error_description: description, state: p.state });
    try {
      await checkAuthParams(deps, client, p);
    } catch (e) {
      if (e instanceof AuthzRedirectError) return fail(e.error, e.message);
      throw e;
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
    await finish(ctx, client, p, session.session, session.user);
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
          302: {
            description:
              'redirect to the client with code or error, always with iss (RFC 9207); with response_mode ' +
              'query.jwt (or jwt), one parameter: response, a signed JWT (JARM)',
          },
          200: {
            description:
              'login or consent page; with response_mode form_post or form_post.jwt, the page posting the response',
            contentType: 'text/html',
          },
          400: { description: 'error page: unknown client or redirect URI, or a POST body that does not parse' },
        },
      },
      authorize,
    );

  return router;
}
