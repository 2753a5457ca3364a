/**
 * The provisioning records the admin API and the CLI show: the spec's "Provisioning operation"
 * and "Step" (both extensible), plus `retry_count`, `history` and the sanitised cause beside
 * every error code (`last_error_cause`, `error_cause`). Their shapes are declared once, in
 * shared/schemas/provisioning.ts; this maps the stored rows to them.
 */
import type { ProvisioningEventRow, ProvisioningOperationRow, ProvisioningStepRow } from '../../repositories/index.js';
import type { ProvisioningOperationView } from '../../schemas/provisioning.js';

export type {
  ProvisioningEventView,
  ProvisioningOperationView,
  ProvisioningStepView,
} from '../../schemas/provisioning.js';

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
