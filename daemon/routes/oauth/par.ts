/**
 * POST /par, the pushed authorization request endpoint (RFC 9126; docs/par.md). The client
 * authenticates as at /token (the same middleware); its parameters, or its signed request
 * object (RFC 9101, §3 of RFC 9126), go through /authorize's own validation
 * (authorize-params.ts), and a refusal is the JSON error of RFC 9126 §2.3, never a redirect.
 * Accepted parameters are stored for 60 s under a single-use `request_uri` (201, §2.2). A DPoP
 * proof sent with the push binds the code to its key (RFC 9449 §10.1).
 */
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { InvalidRequest, OAuthError } from '../../../shared/errors.js';
import { ParForm, ParResponse } from '../../../shared/schemas/authorization-requests.js';
import { REQUEST_OBJECT_ALGORITHMS } from '../../../shared/services/par/index.js';
import type { AppDeps } from '../../context.js';
import { tokenRequestProof } from '../../dpop.js';
import { authenticateClient, type ClientAuthState } from '../../middleware/koa-client-auth.js';
import type { ApiRegistry } from '../../openapi.js';
import { redirectUriMatches } from './authorization.js';
import { AuthzRedirectError, checkAuthParams, param, parseAuthParams } from './authorize-params.js';

/** The endpoint's path; discovery names it `pushed_authorization_request_endpoint`. */
export const PAR_PATH = '/par';

/**
 * The discovery fields of PAR (RFC 9126 §5) and JAR (RFC 9101 §9). One issuer serves every
 * tenant, so `require_pushed_authorization_requests` is false here: a client's own flag or its
 * tenant's policy requires it (docs/par.md). A `request_uri` is only ever one of ours (a PAR URN).
 */
export function parMetadata(issuer: string) {
  return {
    pushed_authorization_request_endpoint: `${issuer}${PAR_PATH}`,
    require_pushed_authorization_requests: false,
    request_parameter_supported: true,
    request_uri_parameter_supported: false,
    request_object_signing_alg_values_supported: [...REQUEST_OBJECT_ALGORITHMS],
    require_signed_request_object: false,
  };
}

export function parRoutes(deps: AppDeps, api: ApiRegistry): Router<ClientAuthState> {
  const router = new Router<ClientAuthState>();

  const requireForm: Middleware<ClientAuthState> = async (ctx, next) => {
    // RFC 9126 §2.1: application/x-www-form-urlencoded, as at the token endpoint.
    if (!ctx.is('application/x-www-form-urlencoded'))
      throw new InvalidRequest('The pushed authorization request must be application/x-www-form-urlencoded.');
    await next();
  };

  const push: Middleware<ClientAuthState> = async (ctx) => {
    const client = ctx.state.client!;
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    // RFC 9126 §2.1: request_uri is not pushed.
    if (body.request_uri !== undefined) throw new InvalidRequest('request_uri may not be pushed (RFC 9126 §2.1).');
    let q = body;
    if (body.request !== undefined) {
      const jwt = param(body, 'request');
      // RFC 9126 §3: the request object replaces the parameters; only it is read (RFC 9101 §6.3).
      q = await deps.par.requestObjects.verify(client, jwt ?? '');
    } else if (client.require_signed_request_object)
      throw new InvalidRequest('This client must send its request as a signed request object (RFC 9101 §10.5).');
    const redirectUri = param(q, 'redirect_uri');
    // Registered redirect URIs only, compared exactly (RFC 9126 §2.4 allows more; FAPI 2.0 does not).
    if (!redirectUri || !redirectUriMatches(client, redirectUri))
      throw new InvalidRequest('redirect_uri is missing or not registered for this client.');
    let p;
    try {
      p = parseAuthParams(q, client, redirectUri);
      await checkAuthParams(deps, client, p);
      // FAPI 2.0 (docs/fapi.md): PKCE S256; Message Signing: JAR and JARM.
      await deps.fapi.checkPushedRequest(client, body.request !== undefined ? param(body, 'request') : undefined, p);
      // RFC 9449 §10.1: a DPoP proof sent with the push (checked as at /token, for POST /par)
      // binds the code to its key as dpop_jkt does; given both, they must name the same key.
      if (ctx.req.headers.dpop !== undefined) {
        const { jkt } = (await tokenRequestProof(deps, ctx, client.tenant_id))!;
        if (p.dpop_jkt !== undefined && p.dpop_jkt !== jkt)
          throw new InvalidRequest('dpop_jkt is not the thumbprint of the DPoP proof key (RFC 9449 §10.1).');
        p = { ...p, dpop_jkt: jkt };
      }
    } catch (e) {
      if (e instanceof AuthzRedirectError) throw new OAuthError(e.error, e.message);
      throw e;
    }
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await deps.par.push(client, p);
  };

  api.add(
    router,
    {
      method: 'post',
      path: PAR_PATH,
      summary: 'Pushed authorization request endpoint (RFC 9126 §2)',
      tags: ['oauth'],
      security: 'basic',
      parser: 'oauth-form',
      form: ParForm,
      authenticate: authenticateClient(deps),
      responses: {
        201: { description: 'the request_uri to send to /authorize (RFC 9126 §2.2)', schema: ParResponse },
        400: {
          description:
            'RFC 9126 §2.3: the error /authorize would redirect (invalid_request, invalid_scope, invalid_target, ' +
            'unsupported_response_type, unauthorized_client) or invalid_request_object; a bad DPoP proof is ' +
            'invalid_dpop_proof or use_dpop_nonce (RFC 9449 §10.1)',
        },
        401: { description: 'invalid_client' },
      },
    },
    requireForm,
    push,
  );
  return router;
}
