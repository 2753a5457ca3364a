/**
 * A tenant's provisioning operations (`provisioning_operations`), their steps
 * (`provisioning_steps`) and their history (`provisioning_events`, append-only). Reached through
 * the tenant's scope; the runner finds due operations of every tenant through
 * OperationLookups (operation-lookups.ts) and then works through each operation's tenant scope.
 *
 * `provisioning_steps` has no tenant column: each statement on it is bound to the scope's
 * tenant through its operation (a join, or `operation_id IN (… AND tenant_id = ?)`).
 *
 * The runner's writes are conditional on its lease (`lease_holder = ?`): a runner that lost the
 * lease changes nothing, and sees 0 rows changed.
 */
import type { JsonObject } from '../db/entities.js';
import { all, exec, json, num, one } from '../db/sql.js';
import type {
  ProvisioningEventView,
  ProvisioningOperationView,
  ProvisioningStepView,
} from '../schemas/provisioning.js';
import type { ScopeRef } from './common.js';

/**
 * The rows are the served shapes (shared/schemas/provisioning.ts, the one declaration) as
 * stored: every field present (the schema's optional ones are optional only for replayed
 * answers), the stored id and event type under their column names, and the columns the runner
 * alone reads (the input, the lease, the step order and failure count).
 */
export type ProvisioningOperationRow = Omit<
  Required<ProvisioningOperationView>,
  | 'operation_id'
  | 'mode'
  | 'preparation_result'
  | 'capacity_operation_ids'
  | 'capacity_operations'
  | 'steps'
  | 'history'
  | 'idempotent_replay'
> & {
  id: string;
  /** The creation input as stored (JSON text), checked by the first step. */
  input_json: string;
  preparation_result: JsonObject | null;
  lease_holder: string | null;
  lease_until: number | null;
};

export type ProvisioningStepRow = Required<ProvisioningStepView> & { step_order: number; failures: number };

export type ProvisioningEventRow = Omit<Required<ProvisioningEventView>, 'event'> & { event_type: string };

export interface NewProvisioningEvent {
  id: string;
  operationId: string;
  event: string;
  step: string | null;
  attempt: number | null;
  errorCode: string | null;
  errorCause: string | null;
  actorType: string;
  actorId: string;
  now: number;
}

/** What a completed step observed. */
export interface StepObservation {
  observed: string | null;
  progressCurrent: number | null;
  progressTotal: number | null;
}

const n = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const s = (v: unknown): string | null =>
  v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);

function operation(r: Record<string, unknown>): ProvisioningOperationRow {
  return {
    id: String(r.id),
    tenant_id: String(r.tenant_id),
    operation_kind: String(r.operation_kind),
    source_tenant_id: s(r.source_tenant_id),
    isolation_policy: String(r.isolation_policy),
    status: String(r.status),
    current_step: String(r.current_step),
    attempt_count: num(r.attempt_count),
    retry_count: num(r.retry_count),
    next_attempt_at: n(r.next_attempt_at),
    last_error_code: s(r.last_error_code),
    last_error_cause: s(r.last_error_cause),
    input_json: String(r.input_json),
    preparation_result:
      r.preparation_result === null || r.preparation_result === undefined
        ? null
        : json<JsonObject>(r.preparation_result),
    lease_holder: s(r.lease_holder),
    lease_until: n(r.lease_until),
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
    completed_at: n(r.completed_at),
  };
}

function step(r: Record<string, unknown>): ProvisioningStepRow {
  return {
    step_key: String(r.step_key),
    step_order: num(r.step_order),
    status: String(r.status),
    attempt_count: num(r.attempt_count),
    failures: num(r.failures),
    next_attempt_at: n(r.next_attempt_at),
    last_error_code: s(r.last_error_code),
    last_error_cause: s(r.last_error_cause),
    observed_resource_id: s(r.observed_resource_id),
    progress_current: n(r.progress_current),
    progress_total: n(r.progress_total),
    started_at: n(r.started_at),
    completed_at: n(r.completed_at),
    updated_at: num(r.updated_at),
  };
}

/** Binds a statement on provisioning_steps to the scope's tenant, through the operation. */
const OWNED_STEP = 'operation_id IN (SELECT id FROM provisioning_operations WHERE id = ? AND tenant_id = ?)';
const RUNNABLE = "('queued', 'retry_scheduled', 'running')";

export class ScopedProvisioning {
  constructor(private readonly sc: ScopeRef) {}

  private owned(operationId: string): unknown[] {
    return [operationId, this.sc.tenantId];
  }

  // ---- reads ----------------------------------------------------------------------------

  /** The tenant's latest operation. */
  async latest(): Promise<ProvisioningOperationRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.sc.db,
      'SELECT * FROM provisioning_operations WHERE tenant_id = ? ORDER BY created_at DESC, id DESC LIMIT 1',
      [this.sc.tenantId],
    );
    return r && operation(r);
  }

  async get(operationId: string): Promise<ProvisioningOperationRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.sc.db,
      'SELECT * FROM provisioning_operations WHERE tenant_id = ? AND id = ?',
      [this.sc.tenantId, operationId],
    );
    return r && operation(r);
  }

  /** The operation's steps in the order they run. */
  async steps(operationId: string): Promise<ProvisioningStepRow[]> {
    const rows = await all<Record<string, unknown>>(
      this.sc.db,
      `SELECT s.* FROM provisioning_steps s JOIN provisioning_operations o ON o.id = s.operation_id
      WHERE o.tenant_id = ? AND s.operation_id = ? ORDER BY s.step_order`,
      [this.sc.tenantId, operationId],
    );
    return rows.map(step);
  }

  /** The operation's most recent `limit` events, newest first. */
  async history(operationId: string, limit: number): Promise<ProvisioningEventRow[]> {
    const rows = await all<Record<string, unknown>>(
      this.sc.db,
      `SELECT event_type, step_key, attempt, error_code, error_cause, actor_type, actor_id, created_at FROM
        provisioning_events
      WHERE tenant_id = ? AND operation_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
      [this.sc.tenantId, operationId, limit],
    );
    return rows.map((r) => ({
      event_type: String(r.event_type),
      step_key: s(r.step_key),
      attempt: n(r.attempt),
      error_code: s(r.error_code),
      error_cause: s(r.error_cause),
      actor_type: String(r.actor_type),
      actor_id: String(r.actor_id),
      created_at: num(r.created_at),
    }));
  }

  async blockedSteps(operationId: string): Promise<string[]> {
    const rows = await all<{ step_key: string }>(
      this.sc.db,
      `SELECT s.step_key FROM provisioning_steps s JOIN provisioning_operations o ON o.id = s.operation_id
      WHERE o.tenant_id = ? AND s.operation_id = ? AND s.status = 'blocked' ORDER BY s.step_order`,
      [this.sc.tenantId, operationId],
    );
    return rows.map((r) => r.step_key);
  }

  // ---- creating -------------------------------------------------------------------------

  async insertOperation(op: {
    id: string;
    kind: string;
    isolationPolicy: string;
    firstStep: string;
    input: JsonObject;
    now: number;
  }): Promise<void> {
    await exec(
      this.sc.db,
      `INSERT INTO provisioning_operations (id, tenant_id, operation_kind, source_tenant_id, isolation_policy, status,
        current_step, attempt_count,
        retry_count, next_attempt_at, last_error_code, input_json, preparation_result, lease_holder, lease_until,
        created_at, updated_at, completed_at)
      VALUES (?, ?, ?, NULL, ?, 'queued', ?, 0, 0, ?, NULL, ?, NULL, NULL, NULL, ?, ?, NULL)`,
      [
        op.id,
        this.sc.tenantId,
        op.kind,
        op.isolationPolicy,
        op.firstStep,
        op.now,
        JSON.stringify(op.input),
        op.now,
        op.now,
      ],
    );
  }

  /** A pending step of one of the tenant's operations; 0 rows when the operation is not the tenant's. */
  insertStep(operationId: string, key: string, order: number, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `INSERT INTO provisioning_steps (operation_id, step_key, step_order, status, attempt_count, failures,
        next_attempt_at, last_error_code,
        observed_resource_id, progress_current, progress_total, started_at, completed_at, updated_at)
      SELECT id, ?, ?, 'pending', 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ? FROM provisioning_operations WHERE
        id = ? AND tenant_id = ?`,
      [key, order, now, ...this.owned(operationId)],
    );
  }

  /** One history event of one of the tenant's operations; 0 rows when the operation is not the tenant's. */
  appendEvent(e: NewProvisioningEvent): Promise<number> {
    return exec(
      this.sc.db,
      `INSERT INTO provisioning_events (id, operation_id, tenant_id, step_key, event_type, attempt, error_code,
        error_cause, actor_type, actor_id, created_at)
      SELECT ?, id, tenant_id, ?, ?, ?, ?, ?, ?, ?, ? FROM provisioning_operations WHERE id = ? AND tenant_id = ?`,
      [
        e.id,
        e.step,
        e.event,
        e.attempt,
        e.errorCode,
        e.errorCause,
        e.actorType,
        e.actorId,
        e.now,
        ...this.owned(e.operationId),
      ],
    );
  }

  // ---- the runner's lease ---------------------------------------------------------------

  /** Claims a due, unleased operation for `holder` (one winner). */
  claim(operationId: string, holder: string, leaseUntil: number, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE provisioning_operations SET status = 'running', lease_holder = ?, lease_until = ?, updated_at = ?
      WHERE tenant_id = ? AND id = ? AND status IN ${RUNNABLE} AND next_attempt_at <= ? AND (lease_until IS NULL OR
        lease_until < ?)`,
      [holder, leaseUntil, now, this.sc.tenantId, operationId, now, now],
    );
  }

  /** Gives the lease up, leaving the operation in `status`, due at `nextAttemptAt`. */
  release(
    operationId: string,
    holder: string,
    status: string,
    nextAttemptAt: number | null,
    now: number,
  ): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE provisioning_operations SET status = ?, next_attempt_at = ?, lease_holder = NULL, lease_until = NULL,
        updated_at = ?
      WHERE tenant_id = ? AND id = ? AND lease_holder = ?`,
      [status, nextAttemptAt, now, this.sc.tenantId, operationId, holder],
    );
  }

  /** An attempt of `key` begins: counted on the operation, lease renewed. */
  beginAttempt(operationId: string, holder: string, key: string, leaseUntil: number, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE provisioning_operations SET current_step = ?, attempt_count = attempt_count + 1, lease_until = ?,
        updated_at = ?
      WHERE tenant_id = ? AND id = ? AND lease_holder = ?`,
      [key, leaseUntil, now, this.sc.tenantId, operationId, holder],
    );
  }

  /** A step completed that is not the last: the operation moves on to `nextKey`, lease renewed. */
  moveTo(
    operationId: string,
    holder: string,
    nextKey: string,
    prepared: JsonObject,
    leaseUntil: number,
    now: number,
  ): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE provisioning_operations SET current_step = ?, preparation_result = ?, lease_until = ?, updated_at = ?
      WHERE tenant_id = ? AND id = ? AND lease_holder = ?`,
      [nextKey, JSON.stringify(prepared), leaseUntil, now, this.sc.tenantId, operationId, holder],
    );
  }

  /** The last step completed: the operation is `completed` and the lease given up. */
  complete(operationId: string, holder: string, lastKey: string, prepared: JsonObject, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE provisioning_operations SET status = 'completed', current_step = ?, completed_at = ?, next_attempt_at =
        NULL, preparation_result = ?,
        lease_holder = NULL, lease_until = NULL, updated_at = ?
      WHERE tenant_id = ? AND id = ? AND lease_holder = ?`,
      [lastKey, now, JSON.stringify(prepared), now, this.sc.tenantId, operationId, holder],
    );
  }

  /** A step failed: the operation is rescheduled or blocked, with the error, and the lease given up. */
  fail(
    operationId: string,
    holder: string,
    f: { status: string; code: string; cause: string; nextAttemptAt: number | null; now: number },
  ): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE provisioning_operations SET status = ?, last_error_code = ?, last_error_cause = ?, next_attempt_at = ?,
        lease_holder = NULL, lease_until = NULL, updated_at = ?
      WHERE tenant_id = ? AND id = ? AND lease_holder = ?`,
      [f.status, f.code, f.cause, f.nextAttemptAt, f.now, this.sc.tenantId, operationId, holder],
    );
  }

  // ---- steps ----------------------------------------------------------------------------

  markStepRunning(operationId: string, key: string, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE provisioning_steps SET status = 'running', attempt_count = attempt_count + 1, next_attempt_at = NULL,
        started_at = COALESCE(started_at, ?), updated_at = ?
      WHERE step_key = ? AND ${OWNED_STEP}`,
      [now, now, key, ...this.owned(operationId)],
    );
  }

  completeStep(operationId: string, key: string, o: StepObservation, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE provisioning_steps SET status = 'completed', failures = 0, completed_at = ?, observed_resource_id = ?,
        progress_current = ?, progress_total = ?, updated_at = ?
      WHERE step_key = ? AND ${OWNED_STEP}`,
      [now, o.observed, o.progressCurrent, o.progressTotal, now, key, ...this.owned(operationId)],
    );
  }

  failStep(
    operationId: string,
    key: string,
    f: { status: string; failures: number; code: string; cause: string; nextAttemptAt: number | null; now: number },
  ): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE provisioning_steps SET status = ?, failures = ?, last_error_code = ?, last_error_cause = ?,
        next_attempt_at = ?, updated_at = ?
      WHERE step_key = ? AND ${OWNED_STEP}`,
      [f.status, f.failures, f.code, f.cause, f.nextAttemptAt, f.now, key, ...this.owned(operationId)],
    );
  }

  // ---- an operator's retry --------------------------------------------------------------

  /** A blocked operation back to `queued` at `firstStep`, due now (one winner among retries). */
  requeueBlocked(operationId: string, firstStep: string, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE provisioning_operations SET status = 'queued', current_step = ?, next_attempt_at = ?, retry_count =
        retry_count + 1,
        lease_holder = NULL, lease_until = NULL, updated_at = ?
      WHERE tenant_id = ? AND id = ? AND status = 'blocked'`,
      [firstStep, now, now, this.sc.tenantId, operationId],
    );
  }

  /** Its blocked steps back to `pending`, their failure count reset (attempt counts are kept). */
  resetBlockedSteps(operationId: string, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE provisioning_steps SET status = 'pending', failures = 0, next_attempt_at = NULL, updated_at = ?
      WHERE status = 'blocked' AND ${OWNED_STEP}`,
      [now, ...this.owned(operationId)],
    );
  }
}
