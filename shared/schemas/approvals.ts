/**
 * Input and output shapes of the access graph and approval requests (docs/approvals.md). The
 * output records follow the interface specification's field names exactly; they are extensible
 * (`z.looseObject`), so consumers tolerate the fields this service adds.
 */
import { z } from 'zod';

/** The relationship types an operator may use without a prefix (docs/approvals.md, "Relationships"). */
export const RELATIONSHIP_TYPES = [
  'manager_of',
  'delegate_of',
  'guardian_of',
  'assistant_of',
  'backup_approver_of',
  'sponsor_of',
] as const;
/** A tenant's own type: `custom:` and a lower-case name. */
export const CUSTOM_RELATIONSHIP_TYPE = /^custom:[a-z][a-z0-9_]{0,59}$/;

export const APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'expired', 'cancelled'] as const;
export const STEP_STATUSES = ['pending', 'approved', 'denied', 'expired', 'cancelled'] as const;

export const APPROVALS_DEFAULT_LIMIT = 50;
export const APPROVALS_MAX_LIMIT = 200;

export const APPROVAL_LIMITS = {
  steps: 10,
  /** Step timeout, seconds: default one day, at most 30 days. */
  stepTimeout: { min: 1, max: 30 * 86_400, default: 86_400 },
  /** Grant lifetime after the last approval, seconds: default one hour, at most 30 days. */
  grantTtl: { min: 60, max: 30 * 86_400, default: 3_600 },
  /** Relationship expiry: at most 10 years ahead. */
  relationshipHorizonMs: 10 * 365 * 86_400_000,
  resourceIds: 100,
  detailClasses: 50,
  scopeJsonChars: 16_384,
} as const;

const subjectId = z.string().trim().min(1).max(128);
const key = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_.:-]{0,63}$/, 'must be 1 to 64 of a-z 0-9 _ . : - starting with a letter or digit');
const shortText = (max: number) => z.string().trim().max(max);

export const relationshipType = z
  .string()
  .refine(
    (v) => (RELATIONSHIP_TYPES as readonly string[]).includes(v) || CUSTOM_RELATIONSHIP_TYPE.test(v),
    `must be one of ${RELATIONSHIP_TYPES.join(', ')}, or custom:<name> (lower-case, at most 60 characters)`,
  );

export const RelationshipInput = z.strictObject({
  related_subject_id: subjectId.describe('the other user of the same tenant'),
  relationship_type: relationshipType.describe(
    `${RELATIONSHIP_TYPES.join(', ')}, or custom:<name>; "A manager_of B" reads subject A, related B`,
  ),
  expires_at: z
    .number()
    .int()
    .positive()
    .nullable()
    .optional()
    .describe('epoch milliseconds; the edge is no longer listed or used from then on; null or absent: no expiry'),
});

export const RelationshipView = z.looseObject({
  id: z.string(),
  subject_id: z.string(),
  related_subject_id: z.string(),
  relationship_type: z.string(),
  expires_at: z.number().int().nullable(),
  created_at: z.number().int(),
  related_email: z.string().optional(),
  related_name: z.string().optional(),
  subject_email: z.string().optional(),
  subject_name: z.string().optional(),
});

export const RelationshipsResult = z.looseObject({
  user_id: z.string(),
  outgoing_relationships: z.array(RelationshipView).optional(),
  incoming_relationships: z.array(RelationshipView).optional(),
});

const refObject = z.strictObject({
  type: shortText(64),
  id: shortText(128),
  url: z.union([z.url({ protocol: /^https?$/ }), z.literal('')]).optional(),
});

export const StepInput = z.strictObject({
  step_key: key,
  side: key.optional().describe('which side of the request the approver stands on; default "approver"'),
  subject_type: z.literal('user').optional().describe('only "user" today'),
  subject_id: subjectId,
  relation_type: shortText(80).optional(),
});

export const ApprovalCreateInput = z.strictObject({
  requester_subject_type: z.literal('user').optional(),
  requester_subject_id: subjectId,
  target_subject_type: z.literal('user').optional(),
  target_subject_id: subjectId,
  requested_action: key,
  resource_class: key,
  audience: z.string().trim().min(1).max(512),
  scope_json: z.record(z.string(), z.unknown()).optional(),
  reason_code: key.optional(),
  reason_note: shortText(2000).optional(),
  investigation_id: shortText(128).optional(),
  reference_id: shortText(128).optional(),
  reference: refObject.optional(),
  ticket_reference: refObject.optional(),
  redaction_level: key.optional(),
  reuse_scope: key.optional(),
  policy_preset: key.optional(),
  attributes: z.record(z.string(), z.unknown()).optional(),
  resource_ids: z.array(shortText(256).min(1)).max(APPROVAL_LIMITS.resourceIds).optional(),
  detail_classes: z.array(key).max(APPROVAL_LIMITS.detailClasses).optional(),
  dataset: z.unknown().optional(),
  partial_access_allowed: z.boolean().optional(),
  step_timeout_seconds: z
    .number()
    .int()
    .min(APPROVAL_LIMITS.stepTimeout.min)
    .max(APPROVAL_LIMITS.stepTimeout.max)
    .optional()
    .describe('each step must be decided within this many seconds (default 86400, at most 30 days)'),
  grant_ttl_seconds: z
    .number()
    .int()
    .min(APPROVAL_LIMITS.grantTtl.min)
    .max(APPROVAL_LIMITS.grantTtl.max)
    .optional()
    .describe('lifetime of the grant issued on approval (default 3600, at most 30 days)'),
  steps: z
    .array(StepInput)
    .min(1)
    .max(APPROVAL_LIMITS.steps)
    .optional()
    .describe('the approvers; absent: one step per user holding a manager_of edge toward the target'),
});
export type ApprovalCreate = z.output<typeof ApprovalCreateInput>;

export const DecisionInput = z.strictObject({
  decision: z.enum(['approve', 'deny']),
  actor_subject_id: subjectId.describe("the deciding user: the step's approver"),
  reason_code: key.optional(),
  reason_note: shortText(2000).optional(),
});

export const CancelInput = z.strictObject({
  reason_code: key.optional(),
  reason_note: shortText(2000).optional(),
});

export const ApprovalStepView = z.looseObject({
  id: z.string(),
  public_approval_id: z.string(),
  approval_request_id: z.string(),
  step_key: z.string(),
  side: z.string(),
  subject_type: z.string(),
  subject_id: z.string(),
  relation_type: z.string(),
  relation_source: z.string(),
  status: z.string(),
  method: z.string(),
  transport_channel: z.string(),
  reason_code: z.string(),
  reason_note: z.string(),
  notification_count: z.number().int(),
  requested_at: z.number().int(),
  expires_at: z.number().int(),
  decided_at: z.number().int().nullable(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});

export const ApprovalGrantView = z.looseObject({
  id: z.string(),
  public_grant_id: z.string(),
  approval_request_id: z.string(),
  tenant_id: z.string(),
  status: z.string(),
  target_audience: z.string(),
  resource_class: z.string(),
  redaction_level: z.string(),
  scope_canonical: z.string(),
  requester_subject_type: z.string(),
  requester_subject_id: z.string(),
  actor_subject_type: z.string(),
  actor_subject_id: z.string(),
  scope_json: z.record(z.string(), z.unknown()),
  issued_at: z.number().int(),
  expires_at: z.number().int(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});

export const NotificationResultView = z.looseObject({
  approval_id: z.string(),
  step_key: z.string(),
  action: z.string(),
  method: z.string(),
  completion_artifact: z.unknown(),
  success: z.boolean(),
  retryable: z.boolean(),
});

const ref = z.looseObject({ type: z.string(), id: z.string(), url: z.string() });

export const ApprovalRequestView = z.looseObject({
  id: z.string(),
  public_request_id: z.string(),
  tenant_id: z.string(),
  investigation_id: z.string(),
  requester_subject_type: z.string(),
  requester_subject_id: z.string(),
  target_subject_type: z.string(),
  target_subject_id: z.string(),
  request_surface: z.string(),
  requested_action: z.string(),
  resource_class: z.string(),
  audience: z.string(),
  redaction_level: z.string(),
  status: z.string(),
  scope_canonical: z.string(),
  reason_code: z.string(),
  reason_note: z.string(),
  reference_id: z.string(),
  reuse_scope: z.string(),
  policy_preset: z.string(),
  scope_json: z.record(z.string(), z.unknown()),
  resolved_policy: z.record(z.string(), z.unknown()),
  attributes: z.record(z.string(), z.unknown()),
  reference: ref,
  ticket_reference: ref,
  resource_ids: z.array(z.string()),
  detail_classes: z.array(z.string()),
  dataset: z.unknown(),
  partial_access_allowed: z.boolean(),
  has_detail: z.boolean(),
  requested_at: z.number().int(),
  expires_at: z.number().int(),
  decided_at: z.number().int().nullable(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
  approvals: z.array(ApprovalStepView),
  grants: z.array(ApprovalGrantView),
  notification_results: z.array(NotificationResultView).optional(),
});
export type ApprovalRequestOut = z.output<typeof ApprovalRequestView>;

export const ApprovalList = z.looseObject({ items: z.array(ApprovalRequestView), total: z.number().int() });
