/**
 * The step the authorization_code and refresh_token grants share: the user's access token and,
 * when `openid` was granted and the grant gives one, the ID token (OIDC Core §3.1.3.3), with
 * the claims of the claims service (shared/services/claims.ts).
 */
import { sessionSid } from '../../crypto.js';
import type { Client } from '../../db/entities.js';
import type { Db } from '../../db/index.js';
import { InvalidRequest, InvalidTarget } from '../../errors.js';
import type { TokenParams } from '../../token-params.js';
import { ACCESS_TOKEN_TTL_S, ID_TOKEN_TTL_S } from '../auth/policy.js';
import { MAX_RESOURCES, targetsOf } from '../rbac-tokens.js';
import { resourceRefusal } from '../resource-indicators.js';
import type { GrantDeps } from './deps.js';
import type { TokenResponseBody } from './grant.js';

export interface UserTokenInput {
  client: Client;
  userId: string;
  scope: string[];
  familyId: string;
  nonce: string | null;
  authTimeMs: number;
  acr: string;
  amr: string[];
  idToken: boolean;
  /** The browser session the grant came through, for the ID token's `sid`. */
  sessionId?: string;
  /** RFC 8707 resources the token is for (tokenResources); none: the client's default audience. */
  resource: string[];
  /** The DPoP key the access token is bound to (RFC 9449 §6.1), when the request had a proof. */
  jkt?: string;
}

/** The `resource` parameters of a token request (RFC 8707 §2.2), bounded. */
export function requestedResources(params: TokenParams): string[] {
  const r = [...new Set(params.multi('resource'))];
  if (r.length > MAX_RESOURCES) throw new InvalidRequest(`At most ${MAX_RESOURCES} resource parameters are accepted.`);
  return r;
}

/**
 * RFC 8707 §2.2: a resource asked for at the token endpoint must be one the grant covers (the
 * authorization request's), else invalid_target; it narrows the token to it. With none named at
 * the authorization request, the one rule of resource-indicators.ts decides (the client's
 * audiences, or with none the tenant's registered resource servers). None asked: what was granted.
 */
export async function tokenResources(
  requested: string[],
  granted: string[] | null,
  client: Client,
  db: Db,
  issuer: string,
): Promise<string[]> {
  if (!requested.length) return granted ?? [];
  if (granted?.length) {
    const outside = requested.filter((r) => !granted.includes(r));
    if (outside.length) throw new InvalidTarget(`Resource not granted to this token: ${outside.join(' ')}`);
    return requested;
  }
  const refusal = await resourceRefusal(db, client, requested, issuer);
  if (refusal) throw new InvalidTarget(refusal);
  return requested;
}

export function userTokens(deps: GrantDeps) {
  const sidOf = sessionSid(deps.secretKey);

  return async (p: UserTokenInput, db: Db): Promise<TokenResponseBody> => {
    // Access token audience: the resources asked for, else the client's registered ones, else
    // this issuer (RFC 8707 §2; docs/rbac.md).
    const targets = targetsOf(p.client, p.resource);
    // The governed scopes are recomputed from the user's roles and groups at every issue,
    // within what was granted (`p.scope`): a removed role is gone from the next token.
    const scope = await deps.rbacTokens.grantedScope(
      p.client.tenant_id,
      { type: 'user', id: p.userId },
      p.scope,
      targets,
      db,
    );
    // Custom claims bound to access tokens; the protocol claims are set after them, and no
    // custom key may take a protocol claim's name anyway.
    const atClaims = await deps.claims.accessToken(p.client.tenant_id, p.userId, scope, db, targets);
    const at = await deps.tokens.issueAccessToken({
      sub: p.userId,
      clientId: p.client.client_id,
      tenantId: p.client.tenant_id,
      scope,
      audience: targets.length ? targets : [deps.issuer],
      ttlSeconds: ACCESS_TOKEN_TTL_S,
      familyId: p.familyId,
      extra: atClaims,
      alg: p.client.access_token_signed_response_alg,
      jkt: p.jkt,
    });
    const body: TokenResponseBody = {
      access_token: at.token,
      token_type: p.jkt ? 'DPoP' : 'Bearer',
      expires_in: at.expiresIn,
      scope: scope.join(' '),
    };
    if (p.idToken && scope.includes('openid')) {
      body.id_token = await deps.tokens.issueIdToken({
        sub: p.userId,
        clientId: p.client.client_id,
        tenantId: p.client.tenant_id,
        nonce: p.nonce,
        authTimeMs: p.authTimeMs,
        acr: p.acr,
        amr: p.amr,
        ...(p.sessionId ? { sid: sidOf(p.sessionId) } : {}),
        ttlSeconds: ID_TOKEN_TTL_S,
        claims: await deps.claims.idToken(p.client.tenant_id, p.userId, scope, db, targets),
        alg: p.client.id_token_signed_response_alg,
      });
    }
    return body;
  };
}
