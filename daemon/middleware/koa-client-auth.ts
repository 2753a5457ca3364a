import type { Middleware } from 'koa';
import type { Client, TokenEndpointAuthMethod } from '../../shared/db/entities.js';
import { InvalidClient, InvalidGrant, InvalidRequest, UnauthorizedClient } from '../../shared/errors.js';
import { isDocumentClientId } from '../../shared/services/client-metadata/index.js';
import { parseBasic, type PresentedCredentials } from '../../shared/services/client-auth.js';
import type { AppDeps, AppState } from '../context.js';

export type ClientAuthMethod = TokenEndpointAuthMethod;
export interface ClientAuthState extends AppState {
  client?: Client;
  clientAuthMethod?: ClientAuthMethod;
}

const CREDENTIAL_PARAMS = ['client_id', 'client_secret', 'client_assertion_type', 'client_assertion'] as const;

/**
 * The credentials a request presents: the Authorization header (HTTP Basic) and the form's
 * client_id, client_secret, client_assertion_type and client_assertion. A repeated parameter
 * is refused (RFC 6749 §3.2: "parameters MUST NOT be included more than once").
 */
export function presentedCredentials(authorization: string, form: Record<string, unknown>): PresentedCredentials {
  const basic = authorization ? parseBasic(authorization) : undefined;
  if (authorization && !basic) throw new InvalidClient('The Authorization header is not valid HTTP Basic credentials.');
  const p: PresentedCredentials = { basic };
  for (const k of CREDENTIAL_PARAMS) {
    const v = form[k];
    if (v === undefined) continue;
    if (typeof v !== 'string') throw new InvalidRequest(`${k} must be given once.`);
    p[k] = v;
  }
  return p;
}

/**
 * Authenticates the calling client with the method it is registered for (docs/oauth.md,
 * "Client authentication"; shared/services/client-auth.ts does the checks and counts the
 * failures against the throttling budgets). `allowPublic` is false where only confidential
 * clients may call.
 */
export function authenticateClient(
  deps: AppDeps,
  opts: { allowPublic: boolean } = { allowPublic: true },
): Middleware<ClientAuthState> {
  return async (ctx, next) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const presented = presentedCredentials(ctx.get('Authorization'), body);
    const resolve = (clientId: string) => documentClient(deps, clientId, body, opts.allowPublic);
    const { client, method } = await deps.clientAuth.authenticate(presented, ctx.ip, { ...opts, resolve });
    // FAPI 2.0 §5.3.2.1: only private_key_jwt, with its algorithms, for a client under the profile.
    await deps.fapi.checkClientAuthentication(client, method, presented.client_assertion);
    ctx.state.client = client;
    ctx.state.clientAuthMethod = method;
    await next();
  };
}

/**
 * The client a client_id names at /token or /revoke. A metadata document client
 * (docs/client-metadata-documents.md, "Which tenant") is bound to the tenant of the code
 * or refresh token it redeems (or revokes); it proves itself the same way in every tenant (`none`,
 * or private_key_jwt with the document's keys). It may not use client_credentials or token
 * exchange (no operator vouched for it: it acts only for a user who consented), nor call an
 * endpoint for confidential clients only (introspection: it is no resource server).
 */
async function documentClient(deps: AppDeps, clientId: string, form: Record<string, unknown>, allowPublic: boolean) {
  if (!isDocumentClientId(clientId)) return deps.directory.resolveClient(clientId);
  if (!allowPublic) throw new InvalidClient('A client identified by a metadata document may not call this endpoint.');
  const grant = form.grant_type;
  if (grant !== undefined && grant !== 'authorization_code' && grant !== 'refresh_token')
    throw new UnauthorizedClient(
      'A client identified by a metadata document may use only the authorization_code and refresh_token grants.',
    );
  const tenantId = await deps.clientMetadata.tenantOfTokenRequest(form);
  if (!tenantId) {
    if (grant === 'authorization_code') throw new InvalidGrant('The authorization code is invalid.');
    if (grant === 'refresh_token') throw new InvalidGrant('The refresh token is invalid.');
    // /revoke with a token of no tenant: nothing binds the client to a tenant, so it cannot be
    // authenticated (invalid_client, as for an unknown client).
    return null;
  }
  return deps.clientMetadata.resolve(clientId, tenantId);
}
