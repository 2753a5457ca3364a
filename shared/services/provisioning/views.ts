/**
 * The provisioning records the admin API and the CLI show: the spec's "Provisioning operation"
 * and "Step" (both extensible), plus `retry_count`, `history` and the sanitised cause beside
 * every error code (`last_error_cause`, `error_cause`).
 */
import type { JsonObject } from '../../db/entities.js';
import type { ProvisioningEventRow, ProvisioningOperationRow, ProvisioningStepRow } from '../../repositories/index.js';

/** The spec's "Step" record, plus the cause of its last error. */
export interface ProvisioningStepView {
  step_key: string;
  status: string;
  attempt_count: number;
  next_attempt_at: number | null;
  last_error_code: string | null;
  /** Why the last attempt failed, sanitised (no secret, no address, no stack); null with no error. */
  last_error_cause: string | null;
  observed_resource_id: string | null;
  progress_current: number | null;
  progress_total: number | null;
  started_at: number | null;
  completed_at: number | null;
  updated_at: number;
}

export interface ProvisioningEventView {
  event: string;
  step_key: string | null;
  attempt: number | null;
  error_code: string | null;
  error_cause: string | null;
  actor_type: string;
  actor_id: string;
  created_at: number;
}

/**
 * The spec's "Provisioning operation" record, plus `last_error_cause`, `retry_count` and
 * `history` (it is extensible).
 */
export interface ProvisioningOperationView {
  operation_id: string;
  tenant_id: string;
  operation_kind: string;
  source_tenant_id: string | null;
  isolation_policy: string;
  status: string;
  current_step: string;
  attempt_count: number;
  next_attempt_at: number | null;
  last_error_code: string | null;
  last_error_cause: string | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  preparation_result: JsonObject | null;
  capacity_operation_ids: Record<string, string>;
  steps: ProvisioningStepView[];
  retry_count: number;
  history: ProvisioningEventView[];
}

/** The operation as shown; `events` newest first (as read), shown oldest first. */
export function operationView(
  op: ProvisioningOperationRow,
  steps: ProvisioningStepRow[],
  events: ProvisioningEventRow[],
): ProvisioningOperationView {
  return {
    operation_id: op.id,
    tenant_id: op.tenant_id,
    operation_kind: op.operation_kind,
    source_tenant_id: op.source_tenant_id,
    isolation_policy: op.isolation_policy,
    status: op.status,
    current_step: op.current_step,
    attempt_count: op.attempt_count,
    next_attempt_at: op.next_attempt_at,
    last_error_code: op.last_error_code,
    last_error_cause: op.last_error_cause,
    created_at: op.created_at,
    updated_at: op.updated_at,
    completed_at: op.completed_at,
    preparation_result: op.preparation_result,
    // One database holds every tenant: there is no per-data-role capacity to set up.
    capacity_operation_ids: {},
    steps: steps.map((s) => ({
      step_key: s.step_key,
      status: s.status,
      attempt_count: s.attempt_count,
      next_attempt_at: s.next_attempt_at,
      last_error_code: s.last_error_code,
      last_error_cause: s.last_error_cause,
      observed_resource_id: s.observed_resource_id,
      progress_current: s.progress_current,
      progress_total: s.progress_total,
      started_at: s.started_at,
      completed_at: s.completed_at,
      updated_at: s.updated_at,
    })),
    retry_count: op.retry_count,
    history: [...events].reverse().map((e) => ({
      event: e.event_type,
      step_key: e.step_key,
      attempt: e.attempt,
      error_code: e.error_code,
      error_cause: e.error_cause,
      actor_type: e.actor_type,
      actor_id: e.actor_id,
      created_at: e.created_at,
    })),
  };
}
