/**
 * The rows of an approval request (docs/approvals.md) as the approval service reads and writes
 * them: the request, its steps, grants and notification attempts, with each table's column list
 * and the mapping from a driver's row (JSON columns parsed, 0/1 to booleans). The statements
 * that read and write them are in approvals.ts.
 */
import { json, num } from '../db/sql.js';

const nullableNum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export interface ApprovalRequestRow {
  id: string;
  public_request_id: string;
  investigation_id: string;
  requester_subject_type: string;
  requester_subject_id: string;
  target_subject_type: string;
  target_subject_id: string;
  request_surface: string;
  requested_action: string;
  resource_class: string;
  audience: string;
  redaction_level: string;
  status: string;
  scope_canonical: string;
  scope_json: Record<string, unknown>;
  reason_code: string;
  reason_note: string;
  reference_id: string;
  reuse_scope: string;
  policy_preset: string;
  resolved_policy: Record<string, unknown>;
  attributes: Record<string, unknown>;
  reference: Record<string, unknown>;
  ticket_reference: Record<string, unknown>;
  resource_ids: string[];
  detail_classes: string[];
  dataset: unknown;
  partial_access_allowed: boolean;
  has_detail: boolean;
  grant_ttl_ms: number;
  requested_at: number;
  expires_at: number;
  decided_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface ApprovalStepRow {
  id: string;
  approval_request_id: string;
  public_approval_id: string;
  position: number;
  step_key: string;
  side: string;
  subject_type: string;
  subject_id: string;
  relation_type: string;
  relation_source: string;
  status: string;
  method: string;
  transport_channel: string;
  reason_code: string;
  reason_note: string;
  notification_count: number;
  requested_at: number;
  expires_at: number;
  decided_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface ApprovalGrantRow {
  id: string;
  public_grant_id: string;
  approval_request_id: string;
  status: string;
  target_audience: string;
  resource_class: string;
  redaction_level: string;
  scope_canonical: string;
  scope_json: Record<string, unknown>;
  requester_subject_type: string;
  requester_subject_id: string;
  actor_subject_type: string;
  actor_subject_id: string;
  issued_at: number;
  expires_at: number;
  created_at: number;
  updated_at: number;
}

export interface ApprovalNotificationRow {
  id: string;
  approval_request_id: string;
  approval_step_id: string;
  step_key: string;
  action: string;
  method: string;
  success: boolean;
  retryable: boolean;
  completion_artifact: unknown;
  created_at: number;
}

export const REQUEST_COLUMNS = `id, public_request_id, investigation_id, requester_subject_type, requester_subject_id,
  target_subject_type, target_subject_id, request_surface, requested_action, resource_class, audience, redaction_level,
  status, scope_canonical, scope_json, reason_code, reason_note, reference_id, reuse_scope, policy_preset,
  resolved_policy, attributes, reference_json, ticket_reference_json, resource_ids, detail_classes, dataset,
  partial_access_allowed, has_detail, grant_ttl_ms, requested_at, expires_at, decided_at, created_at, updated_at`;

export const requestRow = (r: Record<string, unknown>): ApprovalRequestRow => ({
  id: String(r.id),
  public_request_id: String(r.public_request_id),
  investigation_id: String(r.investigation_id),
  requester_subject_type: String(r.requester_subject_type),
  requester_subject_id: String(r.requester_subject_id),
  target_subject_type: String(r.target_subject_type),
  target_subject_id: String(r.target_subject_id),
  request_surface: String(r.request_surface),
  requested_action: String(r.requested_action),
  resource_class: String(r.resource_class),
  audience: String(r.audience),
  redaction_level: String(r.redaction_level),
  status: String(r.status),
  scope_canonical: String(r.scope_canonical),
  scope_json: json(r.scope_json),
  reason_code: String(r.reason_code),
  reason_note: String(r.reason_note),
  reference_id: String(r.reference_id),
  reuse_scope: String(r.reuse_scope),
  policy_preset: String(r.policy_preset),
  resolved_policy: json(r.resolved_policy),
  attributes: json(r.attributes),
  reference: json(r.reference_json),
  ticket_reference: json(r.ticket_reference_json),
  resource_ids: json(r.resource_ids),
  detail_classes: json(r.detail_classes),
  dataset: r.dataset === null || r.dataset === undefined ? null : json(r.dataset),
  partial_access_allowed: num(r.partial_access_allowed) === 1,
  has_detail: num(r.has_detail) === 1,
  grant_ttl_ms: num(r.grant_ttl_ms),
  requested_at: num(r.requested_at),
  expires_at: num(r.expires_at),
  decided_at: nullableNum(r.decided_at),
  created_at: num(r.created_at),
  updated_at: num(r.updated_at),
});

export const STEP_COLUMNS = `id, approval_request_id, public_approval_id, position, step_key, side, subject_type,
  subject_id, relation_type, relation_source, status, method, transport_channel, reason_code, reason_note,
  notification_count, requested_at, expires_at, decided_at, created_at, updated_at`;

export const stepRow = (r: Record<string, unknown>): ApprovalStepRow => ({
  id: String(r.id),
  approval_request_id: String(r.approval_request_id),
  public_approval_id: String(r.public_approval_id),
  position: num(r.position),
  step_key: String(r.step_key),
  side: String(r.side),
  subject_type: String(r.subject_type),
  subject_id: String(r.subject_id),
  relation_type: String(r.relation_type),
  relation_source: String(r.relation_source),
  status: String(r.status),
  method: String(r.method),
  transport_channel: String(r.transport_channel),
  reason_code: String(r.reason_code),
  reason_note: String(r.reason_note),
  notification_count: num(r.notification_count),
  requested_at: num(r.requested_at),
  expires_at: num(r.expires_at),
  decided_at: nullableNum(r.decided_at),
  created_at: num(r.created_at),
  updated_at: num(r.updated_at),
});

export const GRANT_COLUMNS = `id, public_grant_id, approval_request_id, status, target_audience, resource_class,
  redaction_level,
  scope_canonical, scope_json, requester_subject_type, requester_subject_id, actor_subject_type, actor_subject_id,
  issued_at, expires_at, created_at, updated_at`;

export const grantRow = (r: Record<string, unknown>): ApprovalGrantRow => ({
  id: String(r.id),
  public_grant_id: String(r.public_grant_id),
  approval_request_id: String(r.approval_request_id),
  status: String(r.status),
  target_audience: String(r.target_audience),
  resource_class: String(r.resource_class),
  redaction_level: String(r.redaction_level),
  scope_canonical: String(r.scope_canonical),
  scope_json: json(r.scope_json),
  requester_subject_type: String(r.requester_subject_type),
  requester_subject_id: String(r.requester_subject_id),
  actor_subject_type: String(r.actor_subject_type),
  actor_subject_id: String(r.actor_subject_id),
  issued_at: num(r.issued_at),
  expires_at: num(r.expires_at),
  created_at: num(r.created_at),
  updated_at: num(r.updated_at),
});

export const notificationRow = (r: Record<string, unknown>): ApprovalNotificationRow => ({
  id: String(r.id),
  approval_request_id: String(r.approval_request_id),
  approval_step_id: String(r.approval_step_id),
  step_key: String(r.step_key),
  action: String(r.action),
  method: String(r.method),
  success: num(r.success) === 1,
  retryable: num(r.retryable) === 1,
  completion_artifact:
    r.completion_artifact === null || r.completion_artifact === undefined ? null : json(r.completion_artifact),
  created_at: num(r.created_at),
});
