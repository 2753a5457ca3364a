/**
 * The reads of tenant operations that cross tenants, each named and each returning tenant ids
 * (or a count), never a tenant's rows: after it, the work goes through that tenant's scope.
 * - the provisioning runner's queue: due operations of every tenant; the claim-rename runner's too;
 * - an operation named by its globally unique id (a provisioning operation `prv_…`, a recovery
 *   operation `dr_<tenant>_<n>`), presented before its tenant is known;
 * - the platform operator's list of every recovery operation, and the shard's restore count;
 * - the metadata poller's queue: federation trust sources of every tenant that are due.
 */
import type { Db } from '../db/index.js';
import { all, num, one } from '../db/sql.js';

export interface OperationRef {
  id: string;
  tenantId: string;
}

/** A due federation trust source: its `next_refresh_at` (epoch ms) is when it fell due. */
export interface DueTrustSourceRef extends OperationRef {
  dueAt: number;
}

export class OperationLookups {
  constructor(private readonly db: Db) {}

  /**
   * Provisioning operations of any tenant that are due and not leased, earliest first; not those
   * of a suspended tenant (or one under recovery): its provisioning is paused until it is resumed.
   */
  async dueProvisioning(now: number, limit: number): Promise<OperationRef[]> {
    const rows = await all<{ id: string; tenant_id: string }>(
      this.db,
      `SELECT id, tenant_id FROM provisioning_operations WHERE status IN ('queued', 'retry_scheduled', 'running') AND
        next_attempt_at <= ?
      AND (lease_until IS NULL OR lease_until < ?)
      AND NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = provisioning_operations.tenant_id
        AND t.lifecycle_state IN ('suspended', 'recovering'))
      ORDER BY next_attempt_at LIMIT ?`,
      [now, now, limit],
    );
    return rows.map((r) => ({ id: r.id, tenantId: r.tenant_id }));
  }

  /** Running custom claim renames of any tenant whose lease is free or expired, oldest first. */
  async dueClaimRenames(now: number, limit: number): Promise<OperationRef[]> {
    const rows = await all<{ id: string; tenant_id: string }>(
      this.db,
      `SELECT id, tenant_id FROM claim_rename_operations WHERE state IN ('copying', 'switching', 'cleanup') AND
        (lease_until IS NULL OR lease_until < ?) ORDER BY created_at LIMIT ?`,
      [now, limit],
    );
    return rows.map((r) => ({ id: r.id, tenantId: r.tenant_id }));
  }

  /** The tenant of a provisioning operation. */
  async provisioningTenant(operationId: string): Promise<string | undefined> {
    const r = await one<{ tenant_id: string }>(this.db, 'SELECT tenant_id FROM provisioning_operations WHERE id = ?', [
      operationId,
    ]);
    return r?.tenant_id;
  }

  /** The tenant of a recovery operation. */
  async recoveryTenant(operationId: string): Promise<string | undefined> {
    const r = await one<{ tenant_id: string }>(
      this.db,
      'SELECT tenant_id FROM tenant_recovery_operations WHERE id = ?',
      [operationId],
    );
    return r?.tenant_id;
  }

  /** Every recovery operation of every tenant, oldest first (`iam recovery list` without --tenant). */
  async recoveryOperations(): Promise<OperationRef[]> {
    const rows = await all<{ id: string; tenant_id: string }>(
      this.db,
      'SELECT id, tenant_id FROM tenant_recovery_operations ORDER BY created_at, id',
    );
    return rows.map((r) => ({ id: r.id, tenantId: r.tenant_id }));
  }

  /**
   * How many restores have been confirmed on this database, over every tenant: the restore
   * epoch of the one shard they share. A count only.
   */
  async confirmedRestores(): Promise<number> {
    const r = await one<{ n: unknown }>(
      this.db,
      'SELECT COUNT(*) AS n FROM tenant_recovery_operations WHERE restored_at IS NOT NULL',
    );
    return num(r!.n);
  }

  /**
   * Federation trust sources of any tenant whose automatic polling is due and not leased: the
   * metadata poller's queue, taken round robin across tenants (every tenant's earliest due
   * source, then every tenant's second, ...), so one tenant's many due sources never fill the
   * page ahead of another tenant's one. Ids and due times only; the poller claims each through
   * its tenant's scope (ScopedTrustSources.claim).
   */
  async dueTrustSources(now: number, limit: number): Promise<DueTrustSourceRef[]> {
    const rows = await all<{ id: string; tenant_id: string; next_refresh_at: unknown }>(
      this.db,
      `SELECT id, tenant_id, next_refresh_at FROM (
          SELECT id, tenant_id, next_refresh_at,
            ROW_NUMBER() OVER (PARTITION BY tenant_id ORDER BY next_refresh_at, id) AS tenant_rank
          FROM federation_trust_sources
          WHERE polling_mode = 'automatic' AND lifecycle_state = 'active' AND next_refresh_at IS NOT NULL
            AND next_refresh_at <= ? AND (lease_until IS NULL OR lease_until < ?)
        ) due_sources
        ORDER BY tenant_rank, next_refresh_at, id LIMIT ?`,
      [now, now, limit],
    );
    return rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, dueAt: num(r.next_refresh_at) }));
  }

  /**
   * The earliest next_refresh_at among automatic sources of any tenant that are due and not
   * being polled (no live lease), or undefined: how overdue the poller's queue is (/metrics).
   */
  async oldestDueTrustSource(now: number): Promise<number | undefined> {
    const r = await one<{ t: unknown }>(
      this.db,
      `SELECT MIN(next_refresh_at) AS t FROM federation_trust_sources
        WHERE polling_mode = 'automatic' AND lifecycle_state = 'active' AND next_refresh_at IS NOT NULL
          AND next_refresh_at <= ? AND (lease_until IS NULL OR lease_until < ?)`,
      [now, now],
    );
    return r?.t === null || r?.t === undefined ? undefined : num(r.t);
  }

  /** The tenant of a federation trust source (`fts_…`), for a platform operator naming it by id. */
  async trustSourceTenant(sourceId: string): Promise<string | undefined> {
    const r = await one<{ tenant_id: string }>(this.db, 'SELECT tenant_id FROM federation_trust_sources WHERE id = ?', [
      sourceId,
    ]);
    return r?.tenant_id;
  }
}
