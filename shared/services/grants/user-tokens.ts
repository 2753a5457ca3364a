/**
 * The step the authorization_code and refresh_token grants share: the user's access token and,
 * when `openid` was granted and the grant gives one, the ID token (OIDC Core §3.1.3.3), with
 * the claims of the claims service (shared/services/claims.ts).
 */
import { sessionSid } from '../../crypto.js';
import type { Client } from '../../db/entities.js';
import type { Db } from '../../db/index.js';
import { ACCESS_TOKEN_TTL_S, ID_TOKEN_TTL_S } from '../auth/policy.js';
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
}

export function userTokens(deps: GrantDeps) {
  const sidOf = sessionSid(deps.secretKey);
  /** Access token audience: the client's registered resources, or this issuer. */
  const audienceOf = (client: Client) => (client.audiences.length ? client.audiences : [deps.issuer]);

  return async (p: UserTokenInput, db: Db): Promise<TokenResponseBody> => {
    // Custom claims bound to access tokens; the protocol claims are set after them, and no
    // custom key may take a protocol claim's name anyway.
    const atClaims = await deps.claims.accessToken(p.client.tenant_id, p.userId, p.scope, db);
    const at = await deps.tokens.issueAccessToken({
      sub: p.userId,
      clientId: p.client.client_id,
      tenantId: p.client.tenant_id,
      scope: p.scope,
      audience: audienceOf(p.client),
      ttlSeconds: ACCESS_TOKEN_TTL_S,
      familyId: p.familyId,
      extra: atClaims,
      alg: p.client.access_token_signed_response_alg,
    });
    const body: TokenResponseBody = {
      access_token: at.token,
      token_type: 'Bearer',
      expires_in: at.expiresIn,
      scope: p.scope.join(' '),
    };
    if (p.idToken && p.scope.includes('openid')) {
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
        claims: await deps.claims.idToken(p.client.tenant_id, p.userId, p.scope, db),
        alg: p.client.id_token_signed_response_alg,
      });
    }
    return body;
  };
}
