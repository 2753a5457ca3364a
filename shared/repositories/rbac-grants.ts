/**
 * What the token endpoints read of a tenant's roles, groups and API resource permissions
 * (migration 0041; docs/rbac.md). Read only: the admin API for these tables is
 * elsewhere. Each method is one statement on the indexes 0041 made for it:
 *
 * - `permissionsAmong`: ix_resource_permissions_scope (tenant_id, permission), "which of these
 *   scopes are permissions of a resource of the tenant", the cheap test that decides whether a
 *   token request needs the role reads at all;
 * - `heldByUser`, `heldByClient`, `roleNamesOfUser`: ix_role_assignments_principal (tenant_id,
 *   principal_type, principal_id), and ix_group_members_user (tenant_id, user_id) for the
 *   user's groups (groups are flat: one read), then the role, role_permissions and
 *   resource_permissions rows by their keys;
 * - `groupNamesOfUser`: ix_group_members_user, then user_groups by id.
 *
 * A role scoped to a resource (`roles.resource`) grants only that resource's permissions.
 */
import { all, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

/** A permission (scope string) of an API resource (RFC 8707 resource identifier). */
export interface ResourcePermission {
  resource: string;
  permission: string;
}

const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/*
 * CROSS JOIN fixes the join order in SQLite (left to right; in MySQL it is an inner join, which
 * its optimizer orders with statistics): from the user's or client's rows outwards, each step
 * on an index (ix_group_members_user, ix_role_assignments_principal, the primary keys). Left
 * free, SQLite's planner (no statistics) started from every role or role assignment of the
 * tenant and probed the user's: test/shared/rbac-query-plans.test.ts checks the plans.
 */

/** The role ids a user holds directly or through one of their groups (two indexed reads, one statement). */
const USER_ROLE_IDS = `SELECT ra.role_id FROM role_assignments ra
    WHERE ra.tenant_id = ? AND ra.principal_type = 'user' AND ra.principal_id = ?
  UNION
  SELECT ra.role_id FROM group_members gm
    CROSS JOIN role_assignments ra
      ON ra.tenant_id = gm.tenant_id AND ra.principal_type = 'group' AND ra.principal_id = gm.group_id
    WHERE gm.tenant_id = ? AND gm.user_id = ?`;

const CLIENT_ROLE_IDS = `SELECT ra.role_id FROM role_assignments ra
    WHERE ra.tenant_id = ? AND ra.principal_type = 'client' AND ra.principal_id = ?`;

export class ScopedRbacGrants {
  constructor(private readonly s: ScopeRef) {}

  /** Whether the tenant has any API resource permission at all (ux_resource_permissions, one row). */
  async anyPermission(): Promise<boolean> {
    const r = await one(this.s.db, 'SELECT 1 AS x FROM resource_permissions WHERE tenant_id = ? LIMIT 1', [
      this.s.tenantId,
    ]);
    return r !== undefined;
  }

  /** The (resource, permission) pairs of the tenant whose permission is one of `scopes`. */
  async permissionsAmong(scopes: readonly string[]): Promise<ResourcePermission[]> {
    if (!scopes.length) return [];
    return all<ResourcePermission>(
      this.s.db,
      `SELECT resource, permission FROM resource_permissions
       WHERE tenant_id = ? AND permission IN (${marks(scopes.length)})`,
      [this.s.tenantId, ...scopes],
    );
  }

  private held(roleIds: string, ids: unknown[], permissions: readonly string[]): Promise<ResourcePermission[]> {
    if (!permissions.length) return Promise.resolve([]);
    return all<ResourcePermission>(
      this.s.db,
      `SELECT DISTINCT p.resource, p.permission FROM (${roleIds}) h
         CROSS JOIN roles r ON r.tenant_id = ? AND r.id = h.role_id
         CROSS JOIN role_permissions rp ON rp.tenant_id = r.tenant_id AND rp.role_id = r.id
         CROSS JOIN resource_permissions p ON p.tenant_id = rp.tenant_id AND p.id = rp.permission_id
       WHERE p.permission IN (${marks(permissions.length)}) AND (r.resource IS NULL OR r.resource = p.resource)`,
      [...ids, this.s.tenantId, ...permissions],
    );
  }

  /** Which of `permissions` the user holds, per resource, through a role of their own or of one of their groups. */
  heldByUser(userId: string, permissions: readonly string[]): Promise<ResourcePermission[]> {
    const t = this.s.tenantId;
    return this.held(USER_ROLE_IDS, [t, userId, t, userId], permissions);
  }

  /** Which of `permissions` a client holds, per resource, through roles assigned to it (principal_id = client_id). */
  heldByClient(clientId: string, permissions: readonly string[]): Promise<ResourcePermission[]> {
    return this.held(CLIENT_ROLE_IDS, [this.s.tenantId, clientId], permissions);
  }

  /** The names of the roles a user holds (directly or through a group), tenant-wide or scoped to one of `resources`. */
  async roleNamesOfUser(userId: string, resources: readonly string[]): Promise<string[]> {
    const t = this.s.tenantId;
    const rows = await all<{ name: string }>(
      this.s.db,
      `SELECT DISTINCT r.name FROM (${USER_ROLE_IDS}) h CROSS JOIN roles r ON r.tenant_id = ? AND r.id = h.role_id
       WHERE r.resource IS NULL${resources.length ? ` OR r.resource IN (${marks(resources.length)})` : ''}
       ORDER BY r.name`,
      [t, userId, t, userId, t, ...resources],
    );
    return rows.map((r) => String(r.name));
  }

  /** The display names of the user's groups. */
  async groupNamesOfUser(userId: string): Promise<string[]> {
    const rows = await all<{ display_name: string }>(
      this.s.db,
      `SELECT g.display_name FROM group_members gm
         JOIN user_groups g ON g.tenant_id = gm.tenant_id AND g.id = gm.group_id
       WHERE gm.tenant_id = ? AND gm.user_id = ? ORDER BY g.display_name`,
      [this.s.tenantId, userId],
    );
    return rows.map((r) => String(r.display_name));
  }
}
