/**
 * Permissions in tokens (docs/rbac.md): which of the requested scopes a user or a client
 * is granted for the token's target resources, by the roles they hold, and the `roles` and
 * `groups` claims. Read only: the roles, groups and permissions are written by their admin API.
 *
 * A scope is governed by roles when it is a permission (`resource_permissions.permission`) of
 * any resource of the tenant. A governed scope is granted only when it is a permission of one
 * of the target resources (RFC 8707 `resource`, or the client's default audiences) and the
 * principal holds it there through a role; otherwise it is left out of `scope`, as RFC 6749
 * §3.3 lets the server grant fewer scopes than requested. Other scopes pass untouched.
 */
import type { Client } from '../db/entities.js';
import type { Db } from '../db/index.js';
import { TenantScope } from '../repositories/index.js';
import { isAdminScope, SCOPE_ACCOUNT, SCOPE_OFFLINE_ACCESS } from '../scopes.js';
import type { ClaimTokenType } from '../schemas/claims.js';
import { boundTo } from './custom-claims.js';

/** The scopes that ask for the `roles` and `groups` claims (docs/claims.md, "Roles and groups"). */
export const SCOPE_ROLES = 'roles';
export const SCOPE_GROUPS = 'groups';

/**
 * Scopes never governed by roles, whatever a tenant names its permissions: the OpenID Connect
 * scopes (OIDC Core §5.4, §11), this service's own, and the admin scopes. They skip the
 * permission read entirely.
 */
const NEVER_GOVERNED = new Set([
  'openid',
  'profile',
  'email',
  'address',
  'phone',
  SCOPE_OFFLINE_ACCESS,
  SCOPE_ACCOUNT,
  SCOPE_ROLES,
  SCOPE_GROUPS,
  'scim',
]);

const mayBeGoverned = (s: string) => !NEVER_GOVERNED.has(s) && !isAdminScope(s) && !s.startsWith('iam.');

const everyToken = (scope: string) =>
  (['id_token', 'access_token', 'userinfo'] as const).map((t) => ({ token_type: t, scopes: [scope] }));

/**
 * The bindings of the computed `roles` and `groups` claims, in the custom claims' binding form
 * (docs/claims.md, "Bindings"): every token type, when the claim's scope was granted. Fixed, so
 * a client gets them by being allowed (and asking for) the `roles` or `groups` scope.
 */
export const RBAC_CLAIM_BINDINGS = { roles: everyToken(SCOPE_ROLES), groups: everyToken(SCOPE_GROUPS) };

/** At most this many `resource` parameters in one request (a malformed request beyond). */
export const MAX_RESOURCES = 10;

/** The resources a token is for: the requested ones, else the client's default audiences. */
export const targetsOf = (client: Client, resources: readonly string[] | null | undefined): string[] =>
  resources?.length ? [...resources] : [...client.audiences];

export type Principal = { type: 'user' | 'client'; id: string };

/**
 * How long a daemon remembers that a tenant has no API resource permission at all, so that the
 * token requests of a tenant that does not use roles (most of them, and every machine-to-machine
 * token asking for a scope of its own) read nothing. The cost: a tenant's very first permission
 * governs tokens on every daemon within this time, not at once (docs/rbac.md, "Cost on the hot
 * path"). A tenant with permissions is read on every request: no other change waits.
 */
export const NO_PERMISSIONS_TTL_MS = 5_000;
/** Beyond this many remembered tenants the memory starts over (a bound, not an LRU). */
const MAX_REMEMBERED = 10_000;

export class RbacTokens {
  /** Tenant id → until when it is known to have no permission. */
  private readonly none = new Map<string, number>();

  constructor(
    private readonly ds: Db,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * `scope` less the governed scopes `principal` does not hold for one of `targets` (order
   * kept). At most two indexed reads; none when no scope could be governed, or when the tenant
   * was found to have no permission in the last NO_PERMISSIONS_TTL_MS.
   */
  async grantedScope(
    tenantId: string,
    principal: Principal,
    scope: readonly string[],
    targets: readonly string[],
    db: Db = this.ds,
  ): Promise<string[]> {
    const candidates = scope.filter(mayBeGoverned);
    if (!candidates.length) return [...scope];
    if ((this.none.get(tenantId) ?? 0) > this.now()) return [...scope];
    const repo = new TenantScope(db, tenantId).rbacGrants;
    const governed = await repo.permissionsAmong(candidates);
    if (!governed.length) {
      if (!(await repo.anyPermission())) {
        if (this.none.size >= MAX_REMEMBERED) this.none.clear();
        this.none.set(tenantId, this.now() + NO_PERMISSIONS_TTL_MS);
      }
      return [...scope];
    }
    // (a) a permission of one of the target resources at all; (c) held there through a role.
    const wanted = [...new Set(governed.filter((g) => targets.includes(g.resource)).map((g) => g.permission))];
    const held =
      principal.type === 'user'
        ? await repo.heldByUser(principal.id, wanted)
        : await repo.heldByClient(principal.id, wanted);
    const granted = new Set(held.filter((h) => targets.includes(h.resource)).map((h) => h.permission));
    const isGoverned = new Set(governed.map((g) => g.permission));
    return scope.filter((s) => !isGoverned.has(s) || granted.has(s));
  }

  /**
   * The `roles` and `groups` claims (docs/claims.md, "Roles and groups") that `tokenType` carries
   * by their bindings (RBAC_CLAIM_BINDINGS): the names of the roles the user holds tenant-wide or
   * for one of `targets`, and the display names of their groups. Read at every issue; no read
   * when neither is bound.
   */
  async claims(
    tenantId: string,
    userId: string,
    o: { tokenType: ClaimTokenType; scopes: readonly string[]; targets: readonly string[]; db?: Db },
  ): Promise<Record<string, string[]>> {
    const out: Record<string, string[]> = {};
    const bound = (k: keyof typeof RBAC_CLAIM_BINDINGS) => boundTo(RBAC_CLAIM_BINDINGS[k], o.tokenType, o.scopes);
    const roles = bound('roles');
    const groups = bound('groups');
    if (!roles && !groups) return out;
    const repo = new TenantScope(o.db ?? this.ds, tenantId).rbacGrants;
    if (roles) out.roles = await repo.roleNamesOfUser(userId, o.targets);
    if (groups) out.groups = await repo.groupNamesOfUser(userId);
    return out;
  }
}
