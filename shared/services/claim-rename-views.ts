/**
 * What a custom claim rename answers with (docs/claims.md, "Rename"): the request body, the
 * operation as shown to an operator, and the spec's rename response. The admin route declares
 * them (request validation and the OpenAPI document); the CLI prints them.
 */
import { z } from 'zod';
import type { ClaimRenameRow } from '../repositories/index.js';

export const RenameInput = z.strictObject({
  new_field_key: z.string().min(1).max(200).describe('The new claim key (pattern in docs/claims.md)'),
});

/** The operation as shown to an operator (`GET …/rename`, `iam claims rename --no-wait`). */
export const RenameOperationView = z.looseObject({
  id: z.string(),
  state: z.enum(['copying', 'switching', 'cleanup', 'completed', 'failed']),
  old_key: z.string(),
  new_key: z.string(),
  affected_users: z.number().int(),
  copied_count: z.number().int(),
  deleted_count: z.number().int(),
  error_code: z.string().nullable(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
  completed_at: z.number().int().nullable(),
});
export type RenameOperationView = z.infer<typeof RenameOperationView>;

/** The spec's rename response, with the operation for polling. */
export const RenameResult = z.looseObject({
  schema: z.looseObject({ id: z.string(), field_key: z.string(), operation_status: z.string() }),
  affected_users: z.number().int(),
  old_key: z.string(),
  new_key: z.string(),
  operation: RenameOperationView,
});
export type RenameResult = z.infer<typeof RenameResult>;

export function operationView(op: ClaimRenameRow): RenameOperationView {
  return {
    id: op.id,
    state: op.state,
    old_key: op.old_key,
    new_key: op.new_key,
    affected_users: op.affected_users,
    copied_count: op.copied_count,
    deleted_count: op.deleted_count,
    error_code: op.error_code,
    created_at: op.created_at,
    updated_at: op.updated_at,
    completed_at: op.completed_at,
  };
}
