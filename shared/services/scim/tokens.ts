/**
 * Long-lived SCIM tokens (docs/scim.md, "Authentication and token rotation"): Okta and
 * Microsoft Entra ID store one static bearer token, not client credentials. The operator
 * issues one for a client_credentials client holding `scim` (`iam scim token create`); the
 * issuance is an audit event naming its jti and expiry, and `iam scim token revoke --jti`
 * records the jti in revoked_access_tokens, which the SCIM routes' bearer check reads on every
 * request. Disabling the client, or its tenant, also ends every token issued to it.
 */
import { ApiError } from '../../errors.js';
import type { Database } from '../../db/index.js';
import { TenantScope } from '../../repositories/index.js';
import { SCOPE_SCIM } from '../../scopes.js';
import { audit, type Actor } from '../audit.js';
import type { OAuthService } from '../auth/oauth.js';
import type { TokenService } from '../tokens.js';

/** The longest life an operator may give a SCIM token (two years), and the default (one year). */
export const SCIM_TOKEN_MAX_DAYS = 730;
export const SCIM_TOKEN_DEFAULT_DAYS = 365;
const DAY_S = 86_400;

export interface ScimTokenIssued {
  access_token: string;
  token_type: 'Bearer';
  client_id: string;
  jti: string;
  scope: string;
  expires_at: number;
}

export class ScimTokenService {
  constructor(
    private readonly db: Database,
    private readonly deps: { tokens: TokenService; oauth: OAuthService; issuer: string },
  ) {}

  /** Issues a SCIM token for `clientId` of the tenant, valid `days` days; audited with its jti. */
  async create(tenantId: string, clientId: string, days: number, actor: Actor): Promise<ScimTokenIssued> {
    if (!Number.isInteger(days) || days < 1 || days > SCIM_TOKEN_MAX_DAYS)
      throw new ApiError(400, 'invalid_request', `days must be an integer from 1 to ${SCIM_TOKEN_MAX_DAYS}.`);
    const client = await new TenantScope(this.db, tenantId).clients.getByClientId(clientId);
    if (!client) throw new ApiError(404, 'not_found', `Client ${clientId} not found in tenant ${tenantId}.`);
    if (
      client.status !== 'active' ||
      client.client_type !== 'confidential' ||
      !client.grant_types.includes('client_credentials') ||
      !client.scopes.includes(SCOPE_SCIM)
    )
      throw new ApiError(
        400,
        'invalid_request',
        `Client ${clientId} must be an active confidential client_credentials client holding the scope ${SCOPE_SCIM}.`,
      );
    const issued = await this.deps.tokens.issueAccessToken({
      sub: client.client_id,
      clientId: client.client_id,
      tenantId,
      scope: [SCOPE_SCIM],
      audience: [this.deps.issuer],
      ttlSeconds: days * DAY_S,
      alg: client.access_token_signed_response_alg,
    });
    const expiresAt = (issued.claims.exp ?? 0) * 1000;
    await this.db.transaction((tx) =>
      audit(tx, actor, {
        tenantId,
        action: 'scim.token.create',
        targetType: 'client',
        targetId: client.client_id,
        summary: { jti: issued.jti, expires_at: expiresAt },
      }),
    );
    return {
      access_token: issued.token,
      token_type: 'Bearer',
      client_id: client.client_id,
      jti: issued.jti,
      scope: SCOPE_SCIM,
      expires_at: expiresAt,
    };
  }

  /**
   * Revokes a SCIM token by its jti (as `create` printed it and the audit log keeps it).
   * Idempotent. The revocation is kept for the longest life a SCIM token can have.
   */
  async revoke(tenantId: string, jti: string, actor: Actor): Promise<{ jti: string; revoked: true }> {
    if (!/^[A-Za-z0-9_-]{8,128}$/.test(jti)) throw new ApiError(400, 'invalid_request', 'jti is malformed.');
    await this.deps.oauth.revokeAccessToken(jti, tenantId, Date.now() + (SCIM_TOKEN_MAX_DAYS + 1) * DAY_S * 1000);
    await this.db.transaction((tx) =>
      audit(tx, actor, { tenantId, action: 'scim.token.revoke', targetType: 'token', targetId: jti, summary: {} }),
    );
    return { jti, revoked: true };
  }

  /** Whether the SCIM routes must refuse this token (its jti revoked). */
  isRevoked(tenantId: string, jti: string): Promise<boolean> {
    return this.deps.oauth.isAccessTokenRevoked(tenantId, jti, undefined);
  }
}
