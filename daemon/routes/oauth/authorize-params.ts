/**
 * The validation of an authorization request's parameters (RFC 6749 §4.1.1, OIDC Core
 * §3.1.2.1, RFC 7636, RFC 8707), shared by /authorize (authorize.ts) and the pushed
 * authorization request endpoint (par.ts): one code path, so a push is refused exactly where
 * /authorize would refuse the same parameters.
 */
import { grantableScope, isAdminScope, requestableScope } from '../../../shared/scopes.js';
import type { Client } from '../../../shared/db/entities.js';
import type { AuthParams } from '../../../shared/services/auth/oauth.js';
import { PKCE_VALUE } from '../../../shared/services/auth/pkce.js';
import { isOptionalClaimScope } from '../../../shared/services/standard-claims.js';
import { MAX_RESOURCES } from '../../../shared/services/rbac-tokens.js';
import type { AppDeps } from '../../context.js';
import { parseResponseMode } from './response-mode.js';
import { isJkt } from '../../../shared/services/dpop/index.js';

const PROMPTS = new Set(['none', 'login', 'consent', 'select_account']);

/** A refusal after client_id and redirect_uri are known good: RFC 6749 §4.1.2.1's error code. */
export class AuthzRedirectError extends Error {
  constructor(
    readonly error: string,
    description: string,
  ) {
    super(description);
  }
}

/** RFC 6749 §3.1: parameters must not repeat. */
export const param = (q: Record<string, unknown>, name: string): string | undefined => {
  const v = q[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new AuthzRedirectError('invalid_request', `${name} must appear once.`);
  return v;
};

/**
 * Validates everything after client_id and redirect_uri; throws AuthzRedirectError. The one
 * validation of an authorization request: GET and POST /authorize and the push (POST /par,
 * RFC 9126 §2.1) run it, so a pushed request is held to exactly what /authorize holds it to.
 */
export const parseAuthParams = (q: Record<string, unknown>, client: Client, redirectUri: string): AuthParams => {
  // The response mode (JARM, Form Post; response-mode.ts): one not offered is invalid_request,
  // which the caller sends back in the default mode.
  const mode = parseResponseMode(q);
  if ('error' in mode) throw new AuthzRedirectError('invalid_request', mode.error);
  // A request object (RFC 9101) or a pushed request's URN (RFC 9126) was unpacked before this
  // (par.ts, authorize.ts). Any other request_uri (a URL to fetch) is not offered
  // (request_uri_parameter_supported false): refused as OIDC Core §3.1.2.6 names it.
  if (q.request_uri !== undefined)
    throw new AuthzRedirectError(
      'request_uri_not_supported',
      'Only request_uri values from the pushed authorization request endpoint are accepted.',
    );
  if (q.request !== undefined) throw new AuthzRedirectError('invalid_request', 'request may not appear here.');
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
  if (nonce !== undefined && nonce.length > 512) throw new AuthzRedirectError('invalid_request', 'nonce is too long.');
  const state = param(q, 'state');
  if (state !== undefined && state.length > 2048) throw new AuthzRedirectError('invalid_request', 'state is too long.');
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
    ...(mode.mode ? { response_mode: mode.mode } : {}),
    ...(dpopJkt ? { dpop_jkt: dpopJkt } : {}),
  };
};

/**
 * The checks of a parsed request that read the tenant: RFC 8707 §2's one resource rule (each
 * resource must pass what every token request applies, else invalid_target) and address and
 * phone (OIDC Core §5.4) only where the tenant offers them (invalid_scope, RFC 6749 §4.1.2.1).
 * Throws AuthzRedirectError.
 */
export async function checkAuthParams(deps: AppDeps, client: Client, p: AuthParams): Promise<void> {
  const refusal = await deps.resourceServers.refusal(client, p.resource ?? []);
  if (refusal) throw new AuthzRedirectError('invalid_target', refusal);
  const optional = p.scope.filter(isOptionalClaimScope);
  if (optional.length) {
    const offered = await deps.directory.standardClaimScopes(client.tenant_id);
    const off = optional.filter((s) => !offered.includes(s));
    if (off.length) throw new AuthzRedirectError('invalid_scope', `Scope not offered by this tenant: ${off.join(' ')}`);
  }
}
