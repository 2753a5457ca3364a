/**
 * A tenant's route and routing registry (docs/recovery.md), reached through its scope:
 * - ScopedTenantRoutes: the tenant's route (`tenant_routes`) and its signed publications
 *   (`tenant_route_publications`, append-only);
 * - ScopedLookupRows: the tenant's routing registry (`tenant_lookup_rows`), rebuilt from its
 *   clients and users by the verify step, and the probes of the binding smoke checks.
 * Apart from recovery.ts (the recovery operations themselves): these are the tables a recovery
 * drives, and the route and registry outlive any one operation.
 */
import { all, exec, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

export interface RouteRow {
  tenant_id: string;
  route_generation: number;
  state: string;
  runtime_generation: number;
  registry_generation: number;
  registry_digest: string | null;
  updated_at: number;
}

export interface PublicationRow {
  id: string;
  route_generation: number;
  runtime_generation: number;
  state: string;
  registry_digest: string | null;
  operation_id: string | null;
  published_at: number;
  jws: string;
}

export interface LookupSource {
  kind: string;
  id: string;
  lookup_key: string;
  created_at: number;
}

/** A nullable text column, as in recovery.ts. */
const s = (v: unknown): string | null =>
  v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);

function route(r: Record<string, unknown>): RouteRow {
  return {
    tenant_id: String(r.tenant_id),
    route_generation: num(r.route_generation),
    state: String(r.state),
    runtime_generation: num(r.runtime_generation),
    registry_generation: num(r.registry_generation),
    registry_digest: s(r.registry_digest),
    updated_at: num(r.updated_at),
  };
}

export class ScopedTenantRoutes {
  constructor(private readonly sc: ScopeRef) {}

  async get(): Promise<RouteRow | undefined> {
    const r = await one<Record<string, unknown>>(this.sc.db, 'SELECT * FROM tenant_routes WHERE tenant_id = ?', [
      this.sc.tenantId,
    ]);
    return r && route(r);
  }

  /** The route's state and runtime generation with the tenant's lifecycle state, as every daemon now reads them. */
  async observed(): Promise<{ state: string; runtime_generation: number; lifecycle_state: string } | undefined> {
    const r = await one<{ state: string; runtime_generation: unknown; lifecycle_state: string }>(
      this.sc.db,
      `SELECT r.state, r.runtime_generation, t.lifecycle_state FROM tenant_routes r JOIN tenants t ON t.id =
        r.tenant_id WHERE r.tenant_id = ?`,
      [this.sc.tenantId],
    );
    return r && { state: r.state, runtime_generation: num(r.runtime_generation), lifecycle_state: r.lifecycle_state };
  }

  /**
   * The tenant's first route: the one database (generation 1), active, with an empty registry
   * (generation 0) until a verify projects one.
   */
  async createInitial(now: number): Promise<void> {
    await exec(
      this.sc.db,
      `INSERT INTO tenant_routes (tenant_id, route_generation, state, runtime_generation, registry_generation,
        registry_digest, updated_at)
      VALUES (?, 1, 'active', 0, 0, NULL, ?)`,
      [this.sc.tenantId, now],
    );
  }

  /** Moves the route to its next runtime generation, only if it is still at `from` (one winner). */
  advance(
    from: { routeGeneration: number; runtimeGeneration: number },
    next: { state: string; runtimeGeneration: number; registryGeneration: number; registryDigest: string | null },
    now: number,
  ): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE tenant_routes SET state = ?, runtime_generation = ?, registry_generation = ?, registry_digest = ?,
        updated_at = ?
      WHERE tenant_id = ? AND route_generation = ? AND runtime_generation = ?`,
      [
        next.state,
        next.runtimeGeneration,
        next.registryGeneration,
        next.registryDigest,
        now,
        this.sc.tenantId,
        from.routeGeneration,
        from.runtimeGeneration,
      ],
    );
  }

  async insertPublication(p: PublicationRow): Promise<void> {
    await exec(
      this.sc.db,
      `INSERT INTO tenant_route_publications (id, tenant_id, route_generation, runtime_generation, state,
        registry_digest, jws, operation_id, published_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        p.id,
        this.sc.tenantId,
        p.route_generation,
        p.runtime_generation,
        p.state,
        p.registry_digest,
        p.jws,
        p.operation_id,
        p.published_at,
      ],
    );
  }

  async latestPublication(): Promise<PublicationRow | undefined> {
    const p = await one<Record<string, unknown>>(
      this.sc.db,
      'SELECT * FROM tenant_route_publications WHERE tenant_id = ? ORDER BY runtime_generation DESC LIMIT 1',
      [this.sc.tenantId],
    );
    return (
      p && {
        id: String(p.id),
        route_generation: num(p.route_generation),
        runtime_generation: num(p.runtime_generation),
        state: String(p.state),
        registry_digest: s(p.registry_digest),
        operation_id: s(p.operation_id),
        published_at: num(p.published_at),
        jws: String(p.jws),
      }
    );
  }
}

export class ScopedLookupRows {
  constructor(private readonly sc: ScopeRef) {}

  // ---- the reprojection -----------------------------------------------------------------

  /**
   * The next `limit` identifiers that route to the tenant (its client_ids and user ids), in
   * (created_at, id) order after the cursor: keyset pagination over both sources, stable under
   * inserts and resumable from a persisted cursor.
   */
  async sourcesAfter(afterCreatedAt: number, afterId: string, limit: number): Promise<LookupSource[]> {
    const t = this.sc.tenantId;
    const rows = await all<{ kind: string; id: string; lookup_key: string; created_at: unknown }>(
      this.sc.db,
      `SELECT kind, id, lookup_key, created_at FROM (
        SELECT 'client_id' AS kind, id, client_id AS lookup_key, created_at FROM clients
          WHERE tenant_id = ? AND (created_at > ? OR (created_at = ? AND id > ?))
        UNION ALL
        SELECT 'user_id' AS kind, id, id AS lookup_key, created_at FROM users
          WHERE tenant_id = ? AND (created_at > ? OR (created_at = ? AND id > ?))
      ) s ORDER BY created_at, id LIMIT ?`,
      [t, afterCreatedAt, afterCreatedAt, afterId, t, afterCreatedAt, afterCreatedAt, afterId, limit],
    );
    return rows.map((r) => ({ kind: r.kind, id: r.id, lookup_key: r.lookup_key, created_at: num(r.created_at) }));
  }

  /** Projects sources into the registry at `generation`. */
  async insert(sources: LookupSource[], generation: number, routeGeneration: number, now: number): Promise<void> {
    for (const row of sources) {
      await exec(
        this.sc.db,
        `INSERT INTO tenant_lookup_rows (tenant_id, registry_generation, route_generation, lookup_kind, lookup_key,
          source_id, source_created_at, projected_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        [this.sc.tenantId, generation, routeGeneration, row.kind, row.lookup_key, row.id, row.created_at, now],
      );
    }
  }

  /** The next `limit` rows of `generation` after `afterRowId`, each confirmed (1) or not (0) against its source row. */
  async confirmAfter(
    generation: number,
    afterRowId: number,
    limit: number,
  ): Promise<{ row_id: number; confirmed: number }[]> {
    const rows = await all<{ row_id: unknown; confirmed: unknown }>(
      this.sc.db,
      `SELECT l.row_id,
        CASE WHEN l.lookup_kind = 'client_id'
          THEN (SELECT COUNT(*) FROM clients c WHERE c.id = l.source_id AND c.tenant_id = l.tenant_id AND c.client_id
            = l.lookup_key)
          ELSE (SELECT COUNT(*) FROM users u WHERE u.id = l.source_id AND u.tenant_id = l.tenant_id AND u.id =
            l.lookup_key) END AS confirmed
      FROM tenant_lookup_rows l WHERE l.tenant_id = ? AND l.registry_generation = ? AND l.row_id > ? ORDER BY l.row_id
        LIMIT ?`,
      [this.sc.tenantId, generation, afterRowId, limit],
    );
    return rows.map((r) => ({ row_id: num(r.row_id), confirmed: num(r.confirmed) > 0 ? 1 : 0 }));
  }

  /** How many identifiers route to the tenant now: its clients and users. */
  async sourceCount(): Promise<number> {
    const r = await one<{ c: unknown; u: unknown }>(
      this.sc.db,
      `SELECT (SELECT COUNT(*) FROM clients WHERE tenant_id = ?) AS c, (SELECT COUNT(*) FROM users WHERE tenant_id =
        ?) AS u`,
      [this.sc.tenantId, this.sc.tenantId],
    );
    return num(r!.c) + num(r!.u);
  }

  /** The registry's rows of `generation` after (kind, key), sorted by (kind, key): pages of the digest. */
  async page(
    generation: number,
    afterKind: string,
    afterKey: string,
    limit: number,
  ): Promise<{ lookup_kind: string; lookup_key: string; source_id: string }[]> {
    return all<{ lookup_kind: string; lookup_key: string; source_id: string }>(
      this.sc.db,
      `SELECT lookup_kind, lookup_key, source_id FROM tenant_lookup_rows
      WHERE tenant_id = ? AND registry_generation = ? AND (lookup_kind > ? OR (lookup_kind = ? AND lookup_key > ?))
      ORDER BY lookup_kind, lookup_key LIMIT ?`,
      [this.sc.tenantId, generation, afterKind, afterKind, afterKey, limit],
    );
  }

  /** Rows of generations older than `generation`, except `keep` (the registry live before the deny). */
  deleteAbandoned(generation: number, keep: number): Promise<number> {
    return exec(
      this.sc.db,
      'DELETE FROM tenant_lookup_rows WHERE tenant_id = ? AND registry_generation < ? AND registry_generation <> ?',
      [this.sc.tenantId, generation, keep],
    );
  }

  /** Rows of generations newer than `generation` (a cancelled operation's half-built registry). */
  deleteNewerThan(generation: number): Promise<number> {
    return exec(this.sc.db, 'DELETE FROM tenant_lookup_rows WHERE tenant_id = ? AND registry_generation > ?', [
      this.sc.tenantId,
      generation,
    ]);
  }

  /** Every row but those of `generation` (the registry a reactivation switches to). */
  deleteAllBut(generation: number): Promise<number> {
    return exec(this.sc.db, 'DELETE FROM tenant_lookup_rows WHERE tenant_id = ? AND registry_generation <> ?', [
      this.sc.tenantId,
      generation,
    ]);
  }

  // ---- the binding smoke checks' probes -------------------------------------------------

  /** The tenant's state and client count, read through the binding. */
  async tenantProbe(): Promise<{ lifecycle_state: string; clients: number } | undefined> {
    const t = await one<{ lifecycle_state: string; clients: unknown }>(
      this.sc.db,
      `SELECT t.lifecycle_state, (SELECT COUNT(*) FROM clients c WHERE c.tenant_id = t.id) AS clients FROM tenants t
        WHERE t.id = ?`,
      [this.sc.tenantId],
    );
    return t && { lifecycle_state: t.lifecycle_state, clients: num(t.clients) };
  }

  /** A probe row (generation -1, kind `probe`), written inside a transaction that is rolled back. */
  async insertProbe(probe: string, routeGeneration: number, now: number): Promise<void> {
    await exec(
      this.sc.db,
      `INSERT INTO tenant_lookup_rows (tenant_id, registry_generation, route_generation, lookup_kind, lookup_key,
        source_id, source_created_at, projected_at)
      VALUES (?, -1, ?, 'probe', ?, ?, 0, ?)`,
      [this.sc.tenantId, routeGeneration, probe, probe, now],
    );
  }

  async countProbe(probe: string): Promise<number> {
    const r = await one<{ n: unknown }>(
      this.sc.db,
      "SELECT COUNT(*) AS n FROM tenant_lookup_rows WHERE tenant_id = ? AND lookup_kind = 'probe' AND lookup_key = ?",
      [this.sc.tenantId, probe],
    );
    return num(r!.n);
  }
}
