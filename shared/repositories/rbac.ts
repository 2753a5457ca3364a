/**
 * API resource permissions, roles, their permissions and their assignments (docs/rbac.md;
 * tables of migration 0041). Every statement is bound to the scope's tenant. The inserts that
 * name another row (a role's permission, an assignment) are conditional on that row being the
 * tenant's, so an id of another tenant's role or permission writes nothing, whatever the caller
 * checked before. The token side reads these tables through a read-only repository of its own.
 */
import { all, exec, insertIgnore, one, onMysql } from '../db/sql.js';
import type { ScopeRef } from './common.js';

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export interface PermissionRow {
  id: string;
  resource: string;
  permission: string;
  description: string | null;
  created_at: number;
}

export interface RoleRow {
  id: string;
  name: string;
  description: string | null;
  resource: string | null;
  version: number;
  created_at: number;
  updated_at: number;
}

export interface AssignmentRow {
  role_id: string;
  principal_type: 'user' | 'group' | 'client';
  principal_id: string;
  created_at: number;
}

/** A permission of a role, as the role's view lists it. */
export interface RolePermissionRow {
  role_id: string;
  id: string;
  resource: string;
  permission: string;
}

const toPermission = (r: Record<string, unknown>): PermissionRow => ({
  id: String(r.id),
  resource: String(r.resource),
  permission: String(r.permission),
  description: str(r.description),
  created_at: Number(r.created_at),
});
const toRole = (r: Record<string, unknown>): RoleRow => ({
  id: String(r.id),
  name: String(r.name),
  description: str(r.description),
  resource: str(r.resource),
  version: Number(r.version),
  created_at: Number(r.created_at),
  updated_at: Number(r.updated_at),
});
const toAssignment = (r: Record<string, unknown>): AssignmentRow => ({
  role_id: String(r.role_id),
  principal_type: String(r.principal_type) as AssignmentRow['principal_type'],
  principal_id: String(r.principal_id),
  created_at: Number(r.created_at),
});

const PERMISSION_COLUMNS = 'id, resource, permission, description, created_at';
const ROLE_COLUMNS = 'id, name, description, resource, version, created_at, updated_at';
/** `?, ?, …` for an IN list. */
const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/** The permissions the tenant's API resources own. */
export class ScopedResourcePermissions {
  constructor(private readonly s: ScopeRef) {}

  async insert(p: PermissionRow): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO resource_permissions (id, tenant_id, resource, permission, description, created_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
      [p.id, this.s.tenantId, p.resource, p.permission, p.description, p.created_at],
    );
  }

  async get(id: string): Promise<PermissionRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT ${PERMISSION_COLUMNS} FROM resource_permissions WHERE tenant_id = ? AND id = ?`,
      [this.s.tenantId, id],
    );
    return r ? toPermission(r) : undefined;
  }

  /** By (resource, permission): `ux_resource_permissions`. */
  async byPair(resource: string, permission: string): Promise<PermissionRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT ${PERMISSION_COLUMNS} FROM resource_permissions WHERE tenant_id = ? AND resource = ? AND permission = ?`,
      [this.s.tenantId, resource, permission],
    );
    return r ? toPermission(r) : undefined;
  }

  /** In (resource, permission) order, after `after`, optionally of one resource. */
  async list(q: { resource?: string; after?: { resource: string; permission: string }; limit: number }) {
    const where = ['tenant_id = ?'];
    const params: unknown[] = [this.s.tenantId];
    if (q.resource !== undefined) {
      where.push('resource = ?');
      params.push(q.resource);
    }
    if (q.after) {
      where.push('(resource > ? OR (resource = ? AND permission > ?))');
      params.push(q.after.resource, q.after.resource, q.after.permission);
    }
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT ${PERMISSION_COLUMNS} FROM resource_permissions WHERE ${where.join(' AND ')}
        ORDER BY resource, permission LIMIT ${Math.trunc(q.limit)}`,
      params,
    );
    return rows.map(toPermission);
  }

  /** The roles that hold the permission (what refuses its delete). */
  async rolesHolding(permissionId: string): Promise<{ id: string; name: string }[]> {
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT r.id, r.name FROM role_permissions rp JOIN roles r ON r.tenant_id = rp.tenant_id AND r.id = rp.role_id
        WHERE rp.tenant_id = ? AND rp.permission_id = ? ORDER BY r.name`,
      [this.s.tenantId, permissionId],
    );
    return rows.map((r) => ({ id: String(r.id), name: String(r.name) }));
  }

  /** 1 when the permission was the tenant's. */
  remove(id: string): Promise<number> {
    return exec(this.s.db, 'DELETE FROM resource_permissions WHERE tenant_id = ? AND id = ?', [this.s.tenantId, id]);
  }

  /**
   * Whether one of the tenant's clients registers `resource` among its resource_identifiers
   * (RFC 8707 §2), compared exactly. The JSON list is not indexed: the LIKE narrows the
   * tenant's clients to those whose list contains the quoted text, the parse decides.
   */
  async resourceRegistered(resource: string): Promise<boolean> {
    const needle = JSON.stringify(resource).replace(/[!%_]/g, (c) => `!${c}`);
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT resource_identifiers FROM clients
        WHERE tenant_id = ? AND resource_identifiers IS NOT NULL AND resource_identifiers LIKE ? ESCAPE '!'`,
      [this.s.tenantId, `%${needle}%`],
    );
    return rows.some((r) => {
      try {
        const list = JSON.parse(String(r.resource_identifiers)) as unknown;
        return Array.isArray(list) && list.includes(resource);
      } catch {
        return false;
      }
    });
  }
}

/** The tenant's roles and each role's permissions. */
export class ScopedRoles {
  constructor(private readonly s: ScopeRef) {}

  async insert(r: RoleRow): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO roles (id, tenant_id, name, description, resource, version, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [r.id, this.s.tenantId, r.name, r.description, r.resource, r.version, r.created_at, r.updated_at],
    );
  }

  /** The role; `forUpdate` locks its row for the transaction on MySQL (SQLite's gate serialises). */
  async get(id: string, opts: { forUpdate?: boolean } = {}): Promise<RoleRow | undefined> {
    const lock = opts.forUpdate && onMysql(this.s.db) ? ' FOR UPDATE' : '';
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT ${ROLE_COLUMNS} FROM roles WHERE tenant_id = ? AND id = ?${lock}`,
      [this.s.tenantId, id],
    );
    return r ? toRole(r) : undefined;
  }

  /**
   * The role named `name`, compared case-insensitively (as MySQL's collation does, and as SCIM
   * mapping sets name roles), so both databases refuse the same names.
   */
  async byName(name: string): Promise<RoleRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT ${ROLE_COLUMNS} FROM roles WHERE tenant_id = ? AND LOWER(name) = ?`,
      [this.s.tenantId, name.toLowerCase()],
    );
    return r ? toRole(r) : undefined;
  }

  /** In name order (`ux_roles_name`), after the name `after`. */
  async list(q: { after?: string; limit: number }): Promise<RoleRow[]> {
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT ${ROLE_COLUMNS} FROM roles WHERE tenant_id = ?${q.after === undefined ? '' : ' AND name > ?'}
        ORDER BY name LIMIT ${Math.trunc(q.limit)}`,
      q.after === undefined ? [this.s.tenantId] : [this.s.tenantId, q.after],
    );
    return rows.map(toRole);
  }

  /** Writes name, description, resource, a version one up and updated_at; 1 when the row was at `version`. */
  update(r: Pick<RoleRow, 'id' | 'name' | 'description' | 'resource' | 'version' | 'updated_at'>): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE roles SET name = ?, description = ?, resource = ?, version = version + 1, updated_at = ?
        WHERE tenant_id = ? AND id = ? AND version = ?`,
      [r.name, r.description, r.resource, r.updated_at, this.s.tenantId, r.id, r.version],
    );
  }

  /** The permissions of these roles, in (resource, permission) order. */
  async permissionsOf(roleIds: string[]): Promise<RolePermissionRow[]> {
    if (!roleIds.length) return [];
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT rp.role_id, p.id, p.resource, p.permission FROM role_permissions rp
         JOIN resource_permissions p ON p.tenant_id = rp.tenant_id AND p.id = rp.permission_id
        WHERE rp.tenant_id = ? AND rp.role_id IN (${marks(roleIds.length)})
        ORDER BY p.resource, p.permission`,
      [this.s.tenantId, ...roleIds],
    );
    return rows.map((r) => ({
      role_id: String(r.role_id),
      id: String(r.id),
      resource: String(r.resource),
      permission: String(r.permission),
    }));
  }

  /**
   * Replaces the role's permissions with `permissionIds`. Each insert is conditional on the
   * role and the permission being the tenant's. Returns the rows removed and added.
   */
  async setPermissions(
    roleId: string,
    permissionIds: string[],
    now: number,
  ): Promise<{ removed: number; added: number }> {
    const t = this.s.tenantId;
    const removed = await exec(this.s.db, 'DELETE FROM role_permissions WHERE tenant_id = ? AND role_id = ?', [
      t,
      roleId,
    ]);
    let added = 0;
    for (const pid of permissionIds)
      added += await exec(
        this.s.db,
        `INSERT INTO role_permissions (tenant_id, role_id, permission_id, created_at)
         SELECT ?, ?, ?, ? FROM roles WHERE tenant_id = ? AND id = ?
            AND EXISTS (SELECT 1 FROM resource_permissions WHERE tenant_id = ? AND id = ?)`,
        [t, roleId, pid, now, t, roleId, t, pid],
      );
    return { removed, added };
  }

  /**
   * Deletes the role, its permissions and its assignments (the caller has refused the delete
   * while a client holds it). Returns the assignments removed; `deleted` 0 when the role was
   * not the tenant's.
   */
  async remove(id: string): Promise<{ deleted: number; assignments: number; permissions: number }> {
    const t = this.s.tenantId;
    const assignments = await exec(this.s.db, 'DELETE FROM role_assignments WHERE tenant_id = ? AND role_id = ?', [
      t,
      id,
    ]);
    const permissions = await exec(this.s.db, 'DELETE FROM role_permissions WHERE tenant_id = ? AND role_id = ?', [
      t,
      id,
    ]);
    const deleted = await exec(this.s.db, 'DELETE FROM roles WHERE tenant_id = ? AND id = ?', [t, id]);
    return { deleted, assignments, permissions };
  }
}

/** Who holds which role: users, groups, and clients (by client_id, machine to machine). */
export class ScopedRoleAssignments {
  constructor(private readonly s: ScopeRef) {}

  /**
   * Assigns the role (idempotent): true when the row was added, false when it was there (or
   * the role is not the tenant's: the insert is conditional on it).
   */
  async add(a: AssignmentRow): Promise<boolean> {
    const t = this.s.tenantId;
    const ignore = insertIgnore(this.s.db);
    return (
      (await exec(
        this.s.db,
        `${ignore} INTO role_assignments (tenant_id, role_id, principal_type, principal_id, created_at)
         SELECT ?, ?, ?, ?, ? FROM roles WHERE tenant_id = ? AND id = ?`,
        [t, a.role_id, a.principal_type, a.principal_id, a.created_at, t, a.role_id],
      )) === 1
    );
  }

  async get(roleId: string, type: string, principalId: string): Promise<AssignmentRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT role_id, principal_type, principal_id, created_at FROM role_assignments
        WHERE tenant_id = ? AND role_id = ? AND principal_type = ? AND principal_id = ?`,
      [this.s.tenantId, roleId, type, principalId],
    );
    return r ? toAssignment(r) : undefined;
  }

  /** 1 when the assignment was there. */
  remove(roleId: string, type: string, principalId: string): Promise<number> {
    return exec(
      this.s.db,
      'DELETE FROM role_assignments WHERE tenant_id = ? AND role_id = ? AND principal_type = ? AND principal_id = ?',
      [this.s.tenantId, roleId, type, principalId],
    );
  }

  /** Every assignment of one principal goes (a client deleted); returns how many. */
  removePrincipal(type: string, principalId: string): Promise<number> {
    return exec(
      this.s.db,
      'DELETE FROM role_assignments WHERE tenant_id = ? AND principal_type = ? AND principal_id = ?',
      [this.s.tenantId, type, principalId],
    );
  }

  /** The role's assignments in (principal_type, principal_id) order (the primary key's), after `after`. */
  async list(
    roleId: string,
    q: { type?: string; after?: { type: string; id: string }; limit: number },
  ): Promise<AssignmentRow[]> {
    const where = ['tenant_id = ?', 'role_id = ?'];
    const params: unknown[] = [this.s.tenantId, roleId];
    if (q.type !== undefined) {
      where.push('principal_type = ?');
      params.push(q.type);
    }
    if (q.after) {
      where.push('(principal_type > ? OR (principal_type = ? AND principal_id > ?))');
      params.push(q.after.type, q.after.type, q.after.id);
    }
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT role_id, principal_type, principal_id, created_at FROM role_assignments WHERE ${where.join(' AND ')}
        ORDER BY principal_type, principal_id LIMIT ${Math.trunc(q.limit)}`,
      params,
    );
    return rows.map(toAssignment);
  }

  /** The client_ids holding the role (what refuses its delete). */
  async clientsHolding(roleId: string): Promise<string[]> {
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT principal_id FROM role_assignments WHERE tenant_id = ? AND role_id = ? AND principal_type = 'client'
        ORDER BY principal_id`,
      [this.s.tenantId, roleId],
    );
    return rows.map((r) => String(r.principal_id));
  }

  /** Whether the group is the tenant's (a row of `user_groups`). */
  async groupExists(groupId: string): Promise<boolean> {
    return !!(await one(this.s.db, 'SELECT 1 AS x FROM user_groups WHERE tenant_id = ? AND id = ?', [
      this.s.tenantId,
      groupId,
    ]));
  }

  /**
   * The assignments a user holds, directly and through the groups the user is a member of
   * (flat groups: one read of `ix_group_members_user`), by `ix_role_assignments_principal`: two
   * branches, each starting from the user (an OR across them let SQLite's planner walk every
   * assignment of the tenant; test/shared/rbac-query-plans.test.ts).
   */
  async ofUser(userId: string): Promise<AssignmentRow[]> {
    const t = this.s.tenantId;
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT role_id, principal_type, principal_id, created_at FROM role_assignments
        WHERE tenant_id = ? AND principal_type = 'user' AND principal_id = ?
       UNION ALL
       SELECT ra.role_id, ra.principal_type, ra.principal_id, ra.created_at FROM group_members gm
         CROSS JOIN role_assignments ra
           ON ra.tenant_id = gm.tenant_id AND ra.principal_type = 'group' AND ra.principal_id = gm.group_id
        WHERE gm.tenant_id = ? AND gm.user_id = ?
       ORDER BY 1, 2, 3`,
      [t, userId, t, userId],
    );
    return rows.map(toAssignment);
  }
}
