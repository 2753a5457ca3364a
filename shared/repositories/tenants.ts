/**
 * Tenants: platform-level rows (a tenant is not owned by a tenant), with the statements that
 * move a tenant between lifecycle states and read or write its settings document. A tenant's
 * lifecycle jobs (one row per suspend or resume) are tenant-owned and reached through its
 * TenantScope (`lifecycleJobs`).
 */
import { jsonText, TenantEntity, type JsonObject, type Tenant } from '../db/entities.js';
import type { Db } from '../db/index.js';
import { exec, json, num, one } from '../db/sql.js';
import { clampLimit, manager, type Page, type ScopeRef } from './common.js';

/** What a lifecycle move names as its precondition: the state and the version read. */
export interface TenantLifecycleRow {
  lifecycle_state: string;
  updated_at: number;
}

export interface LifecycleMove {
  from: string;
  to: string;
  now: number;
  /** Only if the row still has this updated_at (optimistic concurrency); omitted: any version. */
  expectedUpdatedAt?: number;
}

const isMysql = (db: Db): boolean => ('manager' in db ? db : db.connection).options.type === 'mysql';

export class TenantRepository {
  constructor(private readonly db: Db) {}
  private get repo() {
    return manager(this.db).getRepository(TenantEntity);
  }
  /** One primary-key read without the query builder: pages of the sign-in path read it. */
  async get(id: string): Promise<Tenant | null> {
    const r = await one<Record<string, unknown>>(
      this.db,
      'SELECT id, name, lifecycle_state, settings, created_at, updated_at FROM tenants WHERE id = ?',
      [id],
    );
    if (!r) return null;
    return {
      id: String(r.id),
      name: String(r.name),
      lifecycle_state: r.lifecycle_state as Tenant['lifecycle_state'],
      settings: jsonText.from(r.settings) as Tenant['settings'],
      created_at: num(r.created_at),
      updated_at: num(r.updated_at),
    };
  }
  list(page: Page = {}): Promise<Tenant[]> {
    return this.repo.find({
      order: { created_at: 'ASC', id: 'ASC' },
      take: clampLimit(page.limit),
      skip: page.offset ?? 0,
    });
  }
  async insert(t: Tenant): Promise<Tenant> {
    await this.repo.insert(t);
    return t;
  }

  async lifecycle(id: string): Promise<TenantLifecycleRow | undefined> {
    const r = await one<{ lifecycle_state: string; updated_at: unknown }>(
      this.db,
      'SELECT lifecycle_state, updated_at FROM tenants WHERE id = ?',
      [id],
    );
    return r && { lifecycle_state: r.lifecycle_state, updated_at: num(r.updated_at) };
  }

  /**
   * Moves the tenant `from` → `to` with one conditional UPDATE, so of concurrent moves with the
   * same precondition exactly one wins. Returns the rows changed (1 = moved).
   */
  moveLifecycle(id: string, m: LifecycleMove): Promise<number> {
    return m.expectedUpdatedAt === undefined
      ? exec(this.db, 'UPDATE tenants SET lifecycle_state = ?, updated_at = ? WHERE id = ? AND lifecycle_state = ?', [
          m.to,
          m.now,
          id,
          m.from,
        ])
      : exec(
          this.db,
          `UPDATE tenants SET lifecycle_state = ?, updated_at = ? WHERE id = ? AND lifecycle_state = ? AND updated_at
            = ?`,
          [m.to, m.now, id, m.from, m.expectedUpdatedAt],
        );
  }

  /**
   * The tenant's settings document (null when it has none); undefined when there is no such
   * tenant. One primary-key read: the token endpoint makes it on every exchange request.
   * `forUpdate` locks the row on MySQL for a read-modify-write (settings is one JSON document
   * that several features share); SQLite serialises writers anyway.
   */
  async settings(id: string, opts: { forUpdate?: boolean } = {}): Promise<JsonObject | null | undefined> {
    const sql =
      opts.forUpdate && isMysql(this.db)
        ? 'SELECT settings FROM tenants WHERE id = ? FOR UPDATE'
        : 'SELECT settings FROM tenants WHERE id = ?';
    const row = await one<{ settings: unknown }>(this.db, sql, [id]);
    return row ? (json<JsonObject | null>(row.settings) ?? null) : undefined;
  }

  async writeSettings(id: string, settings: JsonObject, now: number): Promise<void> {
    await exec(this.db, 'UPDATE tenants SET settings = ?, updated_at = ? WHERE id = ?', [
      JSON.stringify(settings),
      now,
      id,
    ]);
  }
}

/** One suspend or resume of a tenant, as `POST …/lifecycle/{suspend,resume}` answers it. */
export interface LifecycleJob {
  id: string;
  action: string;
  status: string;
  lifecycle_state: string;
  reason: string;
  break_glass: boolean;
  actor_id: string;
  created_at: number;
}

/** A tenant's lifecycle jobs (`tenant_lifecycle_jobs`). */
export class ScopedLifecycleJobs {
  constructor(private readonly s: ScopeRef) {}

  async insert(j: LifecycleJob): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO tenant_lifecycle_jobs (id, tenant_id, action, status, lifecycle_state, reason, break_glass,
        actor_id, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        j.id,
        this.s.tenantId,
        j.action,
        j.status,
        j.lifecycle_state,
        j.reason,
        j.break_glass ? 1 : 0,
        j.actor_id,
        j.created_at,
      ],
    );
  }

  async get(id: string): Promise<LifecycleJob | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT id, action, status, lifecycle_state, reason, break_glass, actor_id, created_at FROM
        tenant_lifecycle_jobs WHERE tenant_id = ? AND id = ?`,
      [this.s.tenantId, id],
    );
    return (
      r && {
        id: String(r.id),
        action: String(r.action),
        status: String(r.status),
        lifecycle_state: String(r.lifecycle_state),
        reason: String(r.reason),
        break_glass: num(r.break_glass) === 1,
        actor_id: String(r.actor_id),
        created_at: num(r.created_at),
      }
    );
  }
}
