/**
 * The claims a token or UserInfo answer carries about a user, from what the user record says
 * (docs/claims.md): the custom claims bound to the token type (CustomClaimsService), then the
 * OIDC Core §5.4 standard claims of the granted scopes (standardClaims, `email_verified`
 * included). The ID token and UserInfo ask here, so the two never disagree.
 */
import type { Db } from '../db/index.js';
import { TenantScope, type LoginUser } from '../repositories/index.js';
import type { CustomClaimsService } from './custom-claims.js';
import type { DirectoryService } from './directory.js';
import type { RbacTokens } from './rbac-tokens.js';

/** The token's target resources (RFC 8707), for the `roles` claim; none: tenant-wide roles only. */
type Targets = readonly string[];

export class ClaimsService {
  constructor(
    private readonly o: {
      ds: Db;
      customClaims: CustomClaimsService;
      directory: DirectoryService;
      rbacTokens: RbacTokens;
    },
  ) {}

  /**
   * Custom claims bound to access tokens (docs/claims.md, "Bindings"), then the computed `roles`
   * and `groups` where bound ("Roles and groups"); protocol claims are set after them.
   */
  async accessToken(
    tenantId: string,
    userId: string,
    scopes: readonly string[],
    db?: Db,
    targets: Targets = [],
  ): Promise<Record<string, unknown>> {
    const claims = await this.o.customClaims.claimsForToken(tenantId, userId, {
      tokenType: 'access_token',
      scopes,
      db,
    });
    return Object.assign(
      claims,
      await this.o.rbacTokens.claims(tenantId, userId, { tokenType: 'access_token', scopes, targets, db }),
    );
  }

  /**
   * The ID token's user claims: custom claims bound to ID tokens, then the standard claims of
   * the granted scopes (OIDC Core §5.4), the same as UserInfo's. None for a user that is gone.
   * `db`: the grant's transaction, so issuing inside it needs no second connection.
   */
  async idToken(
    tenantId: string,
    userId: string,
    scopes: readonly string[],
    db: Db = this.o.ds,
    targets: Targets = [],
  ) {
    const user = await new TenantScope(db, tenantId).users.find(userId);
    if (!user) return {};
    const claims = await this.o.customClaims.claimsForToken(tenantId, userId, { tokenType: 'id_token', scopes, db });
    Object.assign(
      claims,
      await this.o.rbacTokens.claims(tenantId, userId, { tokenType: 'id_token', scopes, targets, db }),
    );
    return Object.assign(claims, await this.o.directory.standardClaimsFor(user, scopes, db));
  }

  /** OIDC Core §5.3.2: UserInfo's claims for `user` (read by the caller, who checked it is active). */
  async userinfo(user: LoginUser, scopes: readonly string[], targets: Targets = []): Promise<Record<string, unknown>> {
    const custom = await this.o.customClaims.claimsForToken(user.tenant_id, user.id, { tokenType: 'userinfo', scopes });
    Object.assign(
      custom,
      await this.o.rbacTokens.claims(user.tenant_id, user.id, { tokenType: 'userinfo', scopes, targets }),
    );
    return { ...custom, sub: user.id, ...(await this.o.directory.standardClaimsFor(user, scopes)) };
  }
}
