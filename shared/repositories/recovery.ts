/**
 * A tenant's disaster recovery (docs/recovery.md), reached through its scope:
 * ScopedRecoveryOperations: `tenant_recovery_operations`; every move is a conditional UPDATE
 * on the operation's state or its verify lease (`lease_owner = ?`), so one writer wins.
 * The tenant's route, its publications and its routing registry, which the operation drives,
 * are in tenant-routes.ts.
 * The cross-tenant reads (an operation by its id, every operation, the shard's restore count)
 * are in operation-lookups.ts.
 */
import { all, exec, json, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

export interface RecoveryOperationRow {
  id: string;
  environment_id: string;
  tenant_id: string;
  seq_no: number;
  state: string;
  reason: string;
  previous_lifecycle_state: string;
  pinned_route_generation: number;
  deny_runtime_generation: number | null;
  deny_registry_generation: number | null;
  deny_observed_at: number | null;
  drain_not_before: number | null;
  restore_reference: string | null;
  restored_at: number | null;
  migration_verified_at: number | null;
  lookup_reprojected_at: number | null;
  binding_smoke_verified_at: number | null;
  smoke_success_count: number;
  /** JSON: the smoke check results of the last verify run. */
  smoke_results: unknown;
  stabilization_not_before: number | null;
  lookup_stage: string;
  lookup_target_index: number;
  lookup_registry_generation: number;
  lookup_after_created_at: number;
  lookup_after_id: string;
  lookup_after_row_id: number;
  lookup_projected_rows: number;
  lookup_verified_rows: number;
  registry_digest: string | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  reactivated_runtime_generation: number | null;
  reactivated_at: number | null;
  cancelled_at: number | null;
  last_error_code: string | null;
  last_error_cause: string | null;
  /** JSON: the recovery targets. */
  targets: unknown;
  created_by: string;
  created_at: number;
  updated_at: number;
}

export interface NewRecoveryOperation {
  id: string;
  environmentId: string;
  seq: number;
  reason: string;
  previousLifecycleState: string;
  pinnedRouteGeneration: number;
  denyRuntimeGeneration: number;
  denyRegistryGeneration: number;
  /** The registry generation the first verify projects. */
  lookupRegistryGeneration: number;
  targets: unknown[];
  createdBy: string;
  now: number;
}

const n = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const s = (v: unknown): string | null =>
  v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);

function operation(r: Record<string, unknown>): RecoveryOperationRow {
  return {
    id: String(r.id),
    environment_id: String(r.environment_id),
    tenant_id: String(r.tenant_id),
    seq_no: num(r.seq_no),
    state: String(r.state),
    reason: String(r.reason),
    previous_lifecycle_state: String(r.previous_lifecycle_state),
    pinned_route_generation: num(r.pinned_route_generation),
    deny_runtime_generation: n(r.deny_runtime_generation),
    deny_registry_generation: n(r.deny_registry_generation),
    deny_observed_at: n(r.deny_observed_at),
    drain_not_before: n(r.drain_not_before),
    restore_reference: s(r.restore_reference),
    restored_at: n(r.restored_at),
    migration_verified_at: n(r.migration_verified_at),
    lookup_reprojected_at: n(r.lookup_reprojected_at),
    binding_smoke_verified_at: n(r.binding_smoke_verified_at),
    smoke_success_count: num(r.smoke_success_count),
    smoke_results: json(r.smoke_results),
    stabilization_not_before: n(r.stabilization_not_before),
    lookup_stage: String(r.lookup_stage),
    lookup_target_index: num(r.lookup_target_index),
    lookup_registry_generation: num(r.lookup_registry_generation),
    lookup_after_created_at: num(r.lookup_after_created_at),
    lookup_after_id: String(r.lookup_after_id),
    lookup_after_row_id: num(r.lookup_after_row_id),
    lookup_projected_rows: num(r.lookup_projected_rows),
    lookup_verified_rows: num(r.lookup_verified_rows),
    registry_digest: s(r.registry_digest),
    lease_owner: s(r.lease_owner),
    lease_expires_at: n(r.lease_expires_at),
    reactivated_runtime_generation: n(r.reactivated_runtime_generation),
    reactivated_at: n(r.reactivated_at),
    cancelled_at: n(r.cancelled_at),
    last_error_code: s(r.last_error_code),
    last_error_cause: s(r.last_error_cause),
    targets: json(r.targets),
    created_by: String(r.created_by),
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
  };
}

/** Every statement's tenant and operation binding. */
const OP = 'tenant_id = ? AND id = ?';
/** A write of the verify run that holds the lease. */
const LEASED = `${OP} AND lease_owner = ?`;
/** The cursor and counts of a lookup reprojection that starts over. */
const LOOKUP_RESET = `lookup_stage = 'pending', lookup_registry_generation = lookup_registry_generation + 1,
  lookup_after_created_at = 0, lookup_after_id = '', lookup_after_row_id = 0, lookup_projected_rows = 0,
  lookup_verified_rows = 0`;

export class ScopedRecoveryOperations {
  constructor(private readonly sc: ScopeRef) {}

  private op(id: string): unknown[] {
    return [this.sc.tenantId, id];
  }

  // ---- reads ----------------------------------------------------------------------------

  async get(id: string): Promise<RecoveryOperationRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.sc.db,
      `SELECT * FROM tenant_recovery_operations WHERE ${OP}`,
      this.op(id),
    );
    return r && operation(r);
  }

  async list(): Promise<RecoveryOperationRow[]> {
    const rows = await all<Record<string, unknown>>(
      this.sc.db,
      'SELECT * FROM tenant_recovery_operations WHERE tenant_id = ? ORDER BY created_at, id',
      [this.sc.tenantId],
    );
    return rows.map(operation);
  }

  /** The tenant's open operation (at most one: the unique index on open_tenant_id). */
  async open(): Promise<{ id: string; state: string } | undefined> {
    return one<{ id: string; state: string }>(
      this.sc.db,
      'SELECT id, state FROM tenant_recovery_operations WHERE tenant_id = ? AND open_tenant_id = ?',
      [this.sc.tenantId, this.sc.tenantId],
    );
  }

  /** The next sequence number of the tenant's operations (its ids are `dr_<tenant>_<seq>`). */
  async nextSeq(): Promise<number> {
    const r = await one<{ n: unknown }>(
      this.sc.db,
      'SELECT COALESCE(MAX(seq_no), 0) AS n FROM tenant_recovery_operations WHERE tenant_id = ?',
      [this.sc.tenantId],
    );
    return num(r!.n) + 1;
  }

  // ---- writes ---------------------------------------------------------------------------

  /** A new open operation in `publishing_deny`; a second open one fails on the unique index. */
  async insert(o: NewRecoveryOperation): Promise<void> {
    await exec(
      this.sc.db,
      `INSERT INTO tenant_recovery_operations (id, environment_id, tenant_id, seq_no, open_tenant_id, state, reason,
        previous_lifecycle_state,
        pinned_route_generation, deny_runtime_generation, deny_registry_generation, deny_observed_at, drain_not_before,
        restore_reference, restored_at, migration_verified_at, lookup_reprojected_at, binding_smoke_verified_at,
        smoke_success_count, smoke_results, stabilization_not_before,
        lookup_stage, lookup_target_index, lookup_registry_generation, lookup_after_created_at, lookup_after_id,
        lookup_after_row_id,
        lookup_projected_rows, lookup_verified_rows, registry_digest, lease_owner, lease_expires_at,
        reactivated_runtime_generation, reactivated_at, cancelled_at, last_error_code, targets, created_by,
        created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, 'publishing_deny', ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, '[]', NULL,
        'pending', 0, ?, 0, '', 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ?, ?, ?, ?)`,
      [
        o.id,
        o.environmentId,
        this.sc.tenantId,
        o.seq,
        this.sc.tenantId,
        o.reason,
        o.previousLifecycleState,
        o.pinnedRouteGeneration,
        o.denyRuntimeGeneration,
        o.denyRegistryGeneration,
        o.lookupRegistryGeneration,
        JSON.stringify(o.targets),
        o.createdBy,
        o.now,
        o.now,
      ],
    );
  }

  /** The deny read back is not the one published: recorded as the operation's error. */
  denyNotObserved(id: string, cause: string, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE tenant_recovery_operations SET last_error_code = 'deny_not_observed', last_error_cause = ?, updated_at =
        ? WHERE ${OP}`,
      [cause, now, ...this.op(id)],
    );
  }

  /** `publishing_deny` → `awaiting_restore`, with the drain deadline. */
  denyObserved(id: string, now: number, drainNotBefore: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE tenant_recovery_operations SET state = 'awaiting_restore', deny_observed_at = ?, drain_not_before = ?,
        last_error_code = NULL,
        last_error_cause = NULL, updated_at = ?
      WHERE ${OP} AND state = 'publishing_deny'`,
      [now, drainNotBefore, now, ...this.op(id)],
    );
  }

  /** `awaiting_restore` → `restore_confirmed`. */
  restoreConfirmed(id: string, reference: string, targets: unknown[], now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE tenant_recovery_operations SET state = 'restore_confirmed', restore_reference = ?, restored_at = ?,
        targets = ?,
        last_error_code = NULL, last_error_cause = NULL, updated_at = ?
      WHERE ${OP} AND state = 'awaiting_restore'`,
      [reference, now, JSON.stringify(targets), now, ...this.op(id)],
    );
  }

  /**
   * Takes the verify lease (free or expired) and moves to `verifying`, clearing the results a
   * run re-checks; `fresh` also starts the lookup reprojection over at a new registry generation.
   */
  claimVerify(id: string, owner: string, leaseUntil: number, now: number, fresh: boolean): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE tenant_recovery_operations SET lease_owner = ?, lease_expires_at = ?, state = 'verifying', updated_at = ?,
        migration_verified_at = NULL, smoke_success_count = 0, binding_smoke_verified_at = NULL,
        stabilization_not_before = NULL
        ${fresh ? `, ${LOOKUP_RESET}, registry_digest = NULL, lookup_reprojected_at = NULL` : ''}
      WHERE ${OP} AND state IN ('restore_confirmed', 'verifying', 'stabilizing') AND (lease_expires_at IS NULL OR
        lease_expires_at <= ?)`,
      [owner, leaseUntil, now, ...this.op(id), now],
    );
  }

  /** The end of a verify run: smoke results, the next state, the lease given up. */
  verifyFinished(
    id: string,
    owner: string,
    v: {
      smokeSuccessCount: number;
      smokeResults: unknown[];
      smokeVerifiedAt: number | null;
      stabilizationNotBefore: number | null;
      state: string;
      targets: unknown[];
      errorCode: string | null;
      errorCause: string | null;
      now: number;
    },
  ): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE tenant_recovery_operations SET smoke_success_count = ?, smoke_results = ?, binding_smoke_verified_at = ?,
        stabilization_not_before = ?, state = ?, targets = ?, last_error_code = ?, last_error_cause = ?, lease_owner =
        NULL,
        lease_expires_at = NULL, updated_at = ?
      WHERE ${LEASED}`,
      [
        v.smokeSuccessCount,
        JSON.stringify(v.smokeResults),
        v.smokeVerifiedAt,
        v.stabilizationNotBefore,
        v.state,
        JSON.stringify(v.targets),
        v.errorCode,
        v.errorCause,
        v.now,
        ...this.op(id),
        owner,
      ],
    );
  }

  /** A verify step failed: its error code and sanitised cause. */
  verifyFailed(id: string, owner: string, code: string, cause: string, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE tenant_recovery_operations SET last_error_code = ?, last_error_cause = ?, updated_at = ? WHERE ${LEASED}`,
      [code, cause, now, ...this.op(id), owner],
    );
  }

  releaseVerify(id: string, owner: string): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE tenant_recovery_operations SET lease_owner = NULL, lease_expires_at = NULL WHERE ${LEASED}`,
      [...this.op(id), owner],
    );
  }

  migrationsVerified(id: string, owner: string, targets: unknown[], leaseUntil: number, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE tenant_recovery_operations SET migration_verified_at = ?, targets = ?, lease_expires_at = ?, updated_at
        = ? WHERE ${LEASED}`,
      [now, JSON.stringify(targets), leaseUntil, now, ...this.op(id), owner],
    );
  }

  /** The lookup reprojection's `pending` → `scan`. */
  scanStarted(id: string, owner: string, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE tenant_recovery_operations SET lookup_stage = 'scan', updated_at = ? WHERE ${LEASED}`,
      [now, ...this.op(id), owner],
    );
  }

  /** One scan batch committed: the cursor, the count, and `verify` after the last batch. */
  scanned(
    id: string,
    owner: string,
    b: { afterCreatedAt: number; afterId: string; rows: number; stage: string; leaseUntil: number; now: number },
  ): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE tenant_recovery_operations SET lookup_after_created_at = ?, lookup_after_id = ?, lookup_projected_rows =
        lookup_projected_rows + ?,
        lookup_stage = ?, lookup_after_row_id = 0, lease_expires_at = ?, updated_at = ?
      WHERE ${LEASED}`,
      [b.afterCreatedAt, b.afterId, b.rows, b.stage, b.leaseUntil, b.now, ...this.op(id), owner],
    );
  }

  /** One verify batch counted back: the cursor and the count. */
  counted(
    id: string,
    owner: string,
    b: { afterRowId: number; confirmed: number; leaseUntil: number; now: number },
  ): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE tenant_recovery_operations SET lookup_after_row_id = ?, lookup_verified_rows = lookup_verified_rows + ?,
        lease_expires_at = ?, updated_at = ?
      WHERE ${LEASED}`,
      [b.afterRowId, b.confirmed, b.leaseUntil, b.now, ...this.op(id), owner],
    );
  }

  /** The counts did not match: the next run starts over at a fresh registry generation. */
  lookupRestarted(id: string, owner: string, now: number): Promise<number> {
    return exec(this.sc.db, `UPDATE tenant_recovery_operations SET ${LOOKUP_RESET}, updated_at = ? WHERE ${LEASED}`, [
      now,
      ...this.op(id),
      owner,
    ]);
  }

  /** The registry's digest pinned; the stage moves to `cleanup`. */
  digestPinned(id: string, owner: string, digest: string, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE tenant_recovery_operations SET registry_digest = ?, lookup_stage = 'cleanup', updated_at = ? WHERE
        ${LEASED}`,
      [digest, now, ...this.op(id), owner],
    );
  }

  lookupDone(id: string, owner: string, targets: unknown[], now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE tenant_recovery_operations SET lookup_stage = 'done', lookup_reprojected_at = ?, targets = ?, updated_at
        = ? WHERE ${LEASED}`,
      [now, JSON.stringify(targets), now, ...this.op(id), owner],
    );
  }

  /** An open operation in `fromState`, no verify running → `cancelled` (closed). */
  cancelled(id: string, fromState: string, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE tenant_recovery_operations SET state = 'cancelled', open_tenant_id = NULL, cancelled_at = ?, lease_owner
        = NULL,
        lease_expires_at = NULL, updated_at = ?
      WHERE ${OP} AND state = ? AND (lease_expires_at IS NULL OR lease_expires_at <= ?)`,
      [now, now, ...this.op(id), fromState, now],
    );
  }

  /** `stabilizing` (with the smoke run the caller checked) → `reactivated` (closed); one winner. */
  reactivated(id: string, runtimeGeneration: number, smokeVerifiedAt: number, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE tenant_recovery_operations SET state = 'reactivated', open_tenant_id = NULL, reactivated_at = ?,
        reactivated_runtime_generation = ?,
        last_error_code = NULL, last_error_cause = NULL, updated_at = ?
      WHERE ${OP} AND state = 'stabilizing' AND binding_smoke_verified_at = ?`,
      [now, runtimeGeneration, now, ...this.op(id), smokeVerifiedAt],
    );
  }
}
