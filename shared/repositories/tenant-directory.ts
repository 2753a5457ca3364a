/**
 * The directory's view of tenants (docs/directory.md, "Tenants"; docs/tenant-lifecycle.md,
 * "Offboarding"): the filtered keyset list, the conditional PATCH, the offboarding moves and the
 * purge job's queue on the platform-level `tenants` rows (`TenantDirectoryRows`), and, through a
 * tenant's scope, its counts and the purge of every row it owns (`ScopedTenantData`).
 */
import type { Tenant } from '../db/entities.js';
import type { Db } from '../db/index.js';
import { all, exec, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

const isMysql = (db: Db): boolean => ('manager' in db ? db : db.connection).options.type === 'mysql';

/** The list's filters and where its page resumes, in (created_at, id) order. */
export interface TenantListFilter {
  states?: string[];
  /** Compared exactly (case-sensitive, on both dialects): `SUBSTR(name, 1, n) = prefix`. */
  namePrefix?: string;
  after?: { createdAt: number; id: string };
  /** The older offset paging, kept for compatibility. */
  offset?: number;
  limit: number;
}

const COLUMNS = 'id, name, lifecycle_state, settings, created_at, updated_at, purge_after, offboarded_from';

function toTenant(r: Record<string, unknown>): Tenant {
  return {
    id: String(r.id),
    name: String(r.name),
    lifecycle_state: String(r.lifecycle_state) as Tenant['lifecycle_state'],
    settings: typeof r.settings === 'string' ? (JSON.parse(r.settings) as Tenant['settings']) : {},
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
    purge_after: r.purge_after === null || r.purge_after === undefined ? null : num(r.purge_after),
    offboarded_from: typeof r.offboarded_from === 'string' ? r.offboarded_from : null,
  };
}

/** Platform-level statements on `tenants` for the directory's routes and the purge job. */
export class TenantDirectoryRows {
  constructor(private readonly db: Db) {}

  async get(id: string): Promise<Tenant | undefined> {
    const r = await one<Record<string, unknown>>(this.db, `SELECT ${COLUMNS} FROM tenants WHERE id = ?`, [id]);
    return r && toTenant(r);
  }

  /** One page, oldest first; `limit` rows at most. */
  async page(f: TenantListFilter): Promise<Tenant[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (f.states?.length) {
      where.push(`lifecycle_state IN (${f.states.map(() => '?').join(', ')})`);
      params.push(...f.states);
    }
    if (f.namePrefix) {
      where.push('SUBSTR(name, 1, ?) = ?');
      params.push([...f.namePrefix].length, f.namePrefix);
    }
    if (f.after) {
      where.push('(created_at > ? OR (created_at = ? AND id > ?))');
      params.push(f.after.createdAt, f.after.createdAt, f.after.id);
    }
    const rows = await all<Record<string, unknown>>(
      this.db,
      `SELECT ${COLUMNS} FROM tenants ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY created_at, id LIMIT ${Math.trunc(f.limit)} OFFSET ${Math.trunc(f.offset ?? 0)}`,
      params,
    );
    return rows.map(toTenant);
  }

  /**
   * Writes the name and settings if the row is still at `expectedUpdatedAt` and in one of
   * `states` (one conditional statement: of two PATCHes from one read, one wins). 1 = written.
   */
  update(
    id: string,
    u: { name: string; settings: object; expectedUpdatedAt: number; now: number; states: readonly string[] },
  ): Promise<number> {
    return exec(
      this.db,
      `UPDATE tenants SET name = ?, settings = ?, updated_at = ? WHERE id = ? AND updated_at = ?
        AND lifecycle_state IN (${u.states.map(() => '?').join(', ')})`,
      [u.name, JSON.stringify(u.settings), u.now, id, u.expectedUpdatedAt, ...u.states],
    );
  }

  /** `from` → `pending_deletion`, due at `purgeAfter`; conditional on the state read. 1 = moved. */
  offboard(id: string, m: { from: string; purgeAfter: number; now: number }): Promise<number> {
    return exec(
      this.db,
      `UPDATE tenants SET lifecycle_state = 'pending_deletion', purge_after = ?, offboarded_from = ?, updated_at = ?
        WHERE id = ? AND lifecycle_state = ?`,
      [m.purgeAfter, m.from, m.now, id, m.from],
    );
  }

  /**
   * `pending_deletion` → the state it was offboarded from, only while the grace lasts
   * (`purge_after > now`): a tenant whose purge may have started never comes back. 1 = moved.
   */
  restore(id: string, m: { to: string; now: number }): Promise<number> {
    return exec(
      this.db,
      `UPDATE tenants SET lifecycle_state = ?, purge_after = NULL, offboarded_from = NULL, updated_at = ?
        WHERE id = ? AND lifecycle_state = 'pending_deletion' AND purge_after > ?`,
      [m.to, m.now, id, m.now],
    );
  }

  /** The tenants the purge job works on: `purging` ones (a purge cut short) first, then the due. */
  async purgeQueue(now: number, limit: number): Promise<{ id: string; lifecycle_state: string }[]> {
    const rows = await all<{ id: string; lifecycle_state: string }>(
      this.db,
      `SELECT id, lifecycle_state FROM tenants WHERE lifecycle_state = 'purging'
         OR (lifecycle_state = 'pending_deletion' AND purge_after <= ?)
       ORDER BY lifecycle_state DESC, purge_after, id LIMIT ${Math.trunc(limit)}`,
      [now],
    );
    return rows.map((r) => ({ id: String(r.id), lifecycle_state: String(r.lifecycle_state) }));
  }

  /** `pending_deletion` (past its grace) → `purging`: from here no restore. 1 = moved. */
  startPurge(id: string, now: number): Promise<number> {
    return exec(
      this.db,
      `UPDATE tenants SET lifecycle_state = 'purging', updated_at = ?
        WHERE id = ? AND lifecycle_state = 'pending_deletion' AND purge_after <= ?`,
      [now, id, now],
    );
  }

  /** `purging` → `deleted`, the tombstone: the name and id stay (the audit log names them), the settings go. */
  finishPurge(id: string, now: number): Promise<number> {
    return exec(
      this.db,
      `UPDATE tenants SET lifecycle_state = 'deleted', settings = '{}', purge_after = NULL, updated_at = ?
        WHERE id = ? AND lifecycle_state = 'purging'`,
      [now, id],
    );
  }
}

/**
 * Children of other tenant-owned rows (foreign keys without ON DELETE), purged before their
 * parents; `provisioning_steps` has no tenant_id of its own and is reached through its operation.
 */
const PURGE_FIRST = ['claim_key_reservations', 'upstream_identity_links', 'source_profile_versions'];
const PURGE_LAST = ['users', 'upstream_identity_providers', 'source_profiles', 'claim_rename_operations'];

/**
 * Every table with a tenant_id column the purge empties, in a foreign-key-safe order.
 * test/admin/tenants-directory.test.ts compares it with the schema: a migration that adds a
 * tenant-owned table fails that test until the table is listed here or in TENANT_ROWS_KEPT.
 */
export const TENANT_PURGE_TABLES: readonly string[] = [
  ...PURGE_FIRST,
  'agent_grant_tokens',
  'agent_grant_consents',
  'agent_grants',
  'approval_notifications',
  'approval_grants',
  'approval_steps',
  'approval_requests',
  'auth_codes',
  'auth_history',
  'auth_requests',
  'client_origins',
  'client_registrations',
  'client_secrets',
  'clients',
  'consents',
  'custom_claim_values',
  'custom_claim_schemas',
  'data_exports',
  'direct_auth_artifacts',
  'email_codes',
  'external_token_refresh_runs',
  'federation_entities',
  'federation_inventories',
  'federation_trust_sources',
  'field_mapping_sets',
  'group_members',
  'idempotency_keys',
  'initial_access_tokens',
  'mail_templates',
  'operational_notification_states',
  'outbox',
  'passkey_tombstones',
  'passkeys',
  'plugin_operations',
  'plugin_settings',
  // provisioning_steps go with their operation, just before it (see purgeBatch).
  'provisioning_operations',
  'pushed_auth_requests',
  'refresh_tokens',
  'resource_permissions',
  'revoked_access_tokens',
  'role_assignments',
  'role_permissions',
  'roles',
  'sessions',
  'tenant_lifecycle_jobs',
  'tenant_lookup_rows',
  'tenant_recovery_operations',
  'tenant_routes',
  'token_families',
  'upstream_login_states',
  'user_groups',
  'user_relationships',
  'webauthn_challenges',
  ...PURGE_LAST,
];

/**
 * Tenant-owned rows the purge keeps, and why (docs/tenant-lifecycle.md, "What stays"): the three
 * append-only records, whose database triggers refuse any DELETE by design. The audit log is the
 * platform's record of who did what (the offboarding and the purge included); the provisioning
 * history (steps, attempts, error codes, actor ids) and the signed route publications are the
 * record of what was done to the tenant's infrastructure. None holds a user's profile.
 */
export const TENANT_ROWS_KEPT: readonly string[] = ['audit_events', 'provisioning_events', 'tenant_route_publications'];

/** A tenant's counts and the purge of everything it owns, bound to its scope. */
export class ScopedTenantData {
  constructor(private readonly s: ScopeRef) {}

  /** Users, clients, and sessions neither revoked nor expired at `now`. */
  async counts(now: number): Promise<{ users: number; clients: number; active_sessions: number }> {
    const t = this.s.tenantId;
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT (SELECT COUNT(*) FROM users WHERE tenant_id = ?) AS users,
        (SELECT COUNT(*) FROM clients WHERE tenant_id = ?) AS clients,
        (SELECT COUNT(*) FROM sessions WHERE tenant_id = ? AND revoked_at IS NULL AND expires_at > ?)
          AS active_sessions`,
      [t, t, t, now],
    );
    return { users: num(r?.users ?? 0), clients: num(r?.clients ?? 0), active_sessions: num(r?.active_sessions ?? 0) };
  }

  /**
   * Deletes at most `limit` of the tenant's rows from the first table in TENANT_PURGE_TABLES that
   * still has some, and returns how many (0: nothing of the tenant is left). Each call is one
   * statement, so a purge cut short resumes where it stopped.
   */
  async purgeBatch(limit: number): Promise<{ table?: string; deleted: number }> {
    const n = Math.trunc(limit);
    const mysql = isMysql(this.s.db);
    for (const table of TENANT_PURGE_TABLES) {
      if (table === 'provisioning_operations') {
        const match = 'operation_id IN (SELECT id FROM provisioning_operations WHERE tenant_id = ?)';
        const deleted = await exec(
          this.s.db,
          mysql
            ? `DELETE FROM provisioning_steps WHERE ${match} LIMIT ${n}`
            : `DELETE FROM provisioning_steps WHERE rowid IN
                (SELECT rowid FROM provisioning_steps WHERE ${match} LIMIT ${n})`,
          [this.s.tenantId],
        );
        if (deleted > 0) return { table: 'provisioning_steps', deleted };
      }
      const deleted = await exec(
        this.s.db,
        mysql
          ? `DELETE FROM ${table} WHERE tenant_id = ? LIMIT ${n}`
          : `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE tenant_id = ? LIMIT ${n})`,
        [this.s.tenantId],
      );
      if (deleted > 0) return { table, deleted };
    }
    return { deleted: 0 };
  }
}
