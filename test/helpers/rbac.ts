/**
 * Seeds migration 0041's RBAC tables (resource permissions, roles, assignments, groups and their
 * members) straight with SQL, for the token tests (docs/rbac.md): they read these tables
 * and do not depend on the admin API that writes them.
 */
import { randomBytes } from 'node:crypto';
import { openServices } from './seed.js';

const id = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

export interface RbacSeed {
  /** `resource` → its permissions. */
  permissions?: Record<string, string[]>;
  /** Roles by name: optional resource, the permissions (`resource permission`, or the role's resource's), holders. */
  roles?: {
    name: string;
    resource?: string;
    permissions: { resource: string; permission: string }[];
    users?: string[];
    groups?: string[];
    clients?: string[];
  }[];
  /** Groups by display name, with their members' user ids. */
  groups?: Record<string, string[]>;
}

/** Writes `seed` into tenant `tenantId` of the test database `db`; returns the ids of the groups by name. */
export async function seedRbac(
  db: { url: string; dir: string },
  tenantId: string,
  seed: RbacSeed,
): Promise<{ groups: Record<string, string> }> {
  const { ds } = await openServices(db.url, db.dir);
  try {
    return await seedRbacIn(ds, tenantId, seed);
  } finally {
    await ds.destroy();
  }
}

/** seedRbac on an open data source. */
export async function seedRbacIn(
  ds: { query(sql: string, params?: unknown[]): Promise<unknown> },
  tenantId: string,
  seed: RbacSeed,
): Promise<{ groups: Record<string, string> }> {
  const now = Date.now();
  const permIds = new Map<string, string>();
  const groupIds: Record<string, string> = {};
  {
    for (const [resource, perms] of Object.entries(seed.permissions ?? {}))
      for (const permission of perms) {
        const pid = id('perm');
        permIds.set(`${resource} ${permission}`, pid);
        await ds.query(
          `INSERT INTO resource_permissions (id, tenant_id, resource, permission, description, created_at)
           VALUES (?, ?, ?, ?, NULL, ?)`,
          [pid, tenantId, resource, permission, now],
        );
      }
    for (const [name, members] of Object.entries(seed.groups ?? {})) {
      const gid = id('grp');
      groupIds[name] = gid;
      await ds.query(
        `INSERT INTO user_groups (id, tenant_id, display_name, display_name_key, description, external_id, version,
           created_at, updated_at) VALUES (?, ?, ?, ?, NULL, NULL, 1, ?, ?)`,
        [gid, tenantId, name, name.toLowerCase(), now, now],
      );
      for (const userId of members)
        await ds.query('INSERT INTO group_members (tenant_id, group_id, user_id, created_at) VALUES (?, ?, ?, ?)', [
          tenantId,
          gid,
          userId,
          now,
        ]);
    }
    for (const r of seed.roles ?? []) {
      const rid = id('role');
      await ds.query(
        `INSERT INTO roles (id, tenant_id, name, description, resource, version, created_at, updated_at)
         VALUES (?, ?, ?, NULL, ?, 1, ?, ?)`,
        [rid, tenantId, r.name, r.resource ?? null, now, now],
      );
      for (const p of r.permissions) {
        const pid = permIds.get(`${p.resource} ${p.permission}`);
        if (!pid) throw new Error(`seedRbac: no permission ${p.permission} on ${p.resource}`);
        await ds.query(
          'INSERT INTO role_permissions (tenant_id, role_id, permission_id, created_at) VALUES (?, ?, ?, ?)',
          [tenantId, rid, pid, now],
        );
      }
      const holders = [
        ...(r.users ?? []).map((u) => ['user', u]),
        ...(r.groups ?? []).map((g) => ['group', groupIds[g] ?? g]),
        ...(r.clients ?? []).map((c) => ['client', c]),
      ];
      for (const [type, principal] of holders)
        await ds.query(
          `INSERT INTO role_assignments (tenant_id, role_id, principal_type, principal_id, created_at)
           VALUES (?, ?, ?, ?, ?)`,
          [tenantId, rid, type, principal, now],
        );
    }
  }
  return { groups: groupIds };
}
