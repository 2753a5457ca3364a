/**
 * The provisioning records the admin API and the CLI show (docs/provisioning.md): the spec's
 * "Provisioning operation" and "Step" (both extensible), plus `retry_count`, `history` and the
 * sanitised cause beside every error code. The one declaration of these shapes: the service's
 * views (shared/services/provisioning/views.ts) are the types inferred here, and the
 * repository's rows (shared/repositories/provisioning.ts) are these shapes as stored.
 */
import { z } from 'zod';

/** The interface specification's "Step" of a provisioning operation (extensible). */
const ProvisioningStepFields = z.object({
  step_key: z.string(),
  status: z.string(),
  attempt_count: z.number().int(),
  next_attempt_at: z.number().int().nullable(),
  last_error_code: z.string().nullable(),
  last_error_cause: z
    .string()
    .nullable()
    .optional()
    .describe('why the last attempt failed, sanitised (no secret, address or stack); null with no error'),
  observed_resource_id: z.string().nullable(),
  progress_current: z.number().int().nullable().optional(),
  progress_total: z.number().int().nullable().optional(),
  started_at: z.number().int().nullable(),
  completed_at: z.number().int().nullable(),
  updated_at: z.number().int(),
});
export const ProvisioningStepView = ProvisioningStepFields.loose();
export type ProvisioningStepView = z.output<typeof ProvisioningStepFields>;

/** One entry of an operation's history (`provisioning_events`, append-only). */
const ProvisioningEventFields = z.object({
  event: z.string().describe('created, attempt, completed, failed, blocked or retried'),
  step_key: z.string().nullable(),
  attempt: z.number().int().nullable(),
  error_code: z.string().nullable(),
  error_cause: z.string().nullable().optional(),
  actor_type: z.string(),
  actor_id: z.string(),
  created_at: z.number().int(),
});
export const ProvisioningEventView = ProvisioningEventFields.loose();
export type ProvisioningEventView = z.output<typeof ProvisioningEventFields>;

/** The interface specification's "Provisioning operation" (extensible); see docs/provisioning.md. */
const ProvisioningOperationFields = z.object({
  mode: z.string().optional(),
  operation_id: z.string(),
  tenant_id: z.string(),
  operation_kind: z.string(),
  source_tenant_id: z.string().nullable(),
  isolation_policy: z.string(),
  status: z.string(),
  current_step: z.string(),
  attempt_count: z.number().int(),
  next_attempt_at: z.number().int().nullable(),
  last_error_code: z.string().nullable(),
  last_error_cause: z
    .string()
    .nullable()
    .optional()
    .describe('why the last failed step failed, sanitised (no secret, address or stack); null with no error'),
  created_at: z.number().int(),
  updated_at: z.number().int(),
  completed_at: z.number().int().nullable(),
  preparation_result: z.record(z.string(), z.unknown()).nullable(),
  capacity_operation_ids: z.record(z.string(), z.string()),
  capacity_operations: z.array(z.unknown()).optional(),
  steps: z.array(ProvisioningStepView),
  retry_count: z.number().int().describe('How many times an operator requeued the operation after it was blocked.'),
  history: z.array(ProvisioningEventView).describe('Oldest first; the most recent 200 events.'),
  idempotent_replay: z.boolean().optional(),
});
export const ProvisioningOperationView = ProvisioningOperationFields.loose();
export type ProvisioningOperationView = z.output<typeof ProvisioningOperationFields>;
