/**
 * The access graph and approval requests (docs/approvals.md):
 * - `ScopedRelationships` (through TenantScope): edges between two users of the tenant, with
 *   the other party's display fields joined from `users` of the same tenant.
 * - `ScopedApprovals` (through TenantScope): requests, their steps, grants and notification
 *   attempts. Every statement binds the scope's tenant.
 * - `ApprovalExpiryQueue`: the one cross-tenant question the expiry job asks (which pending
 *   steps are past their deadline), answered with (tenant id, request id) pairs only.
 */
import type { Db } from '../db/index.js';
import { all, exec, json, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

// ---------------------------------------------------------------- relationships

export interface RelationshipRow {
  id: string;
  subject_id: string;
  related_subject_id: string;
  relationship_type: string;
  expires_at: number | null;
  created_at: number;
}

/** An edge with the other party's display fields (`other_email`, `other_name`). */
export interface RelationshipListRow extends RelationshipRow {
  other_email: string;
  other_name: string;
}

const nullableNum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

const relRow = (r: Record<string, unknown>): RelationshipRow => ({
  id: String(r.id),
  subject_id: String(r.subject_id),
  related_subject_id: String(r.related_subject_id),
  relationship_type: String(r.relationship_type),
  expires_at: nullableNum(r.expires_at),
  created_at: num(r.created_at),
});

export class ScopedRelationships {
  constructor(private readonly s: ScopeRef) {}

  async insert(r: RelationshipRow): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO user_relationships
         (id, tenant_id, subject_id, related_subject_id, relationship_type, expires_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      [r.id, this.s.tenantId, r.subject_id, r.related_subject_id, r.relationship_type, r.expires_at, r.created_at],
    );
  }

  async get(id: string): Promise<RelationshipRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT id, subject_id, related_subject_id, relationship_type, expires_at, created_at
         FROM user_relationships WHERE tenant_id = ? AND id = ?`,
      [this.s.tenantId, id],
    );
    return r && relRow(r);
  }

  async findEdge(subjectId: string, relatedId: string, type: string): Promise<RelationshipRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT id, subject_id, related_subject_id, relationship_type, expires_at, created_at FROM user_relationships
        WHERE tenant_id = ? AND subject_id = ? AND related_subject_id = ? AND relationship_type = ?`,
      [this.s.tenantId, subjectId, relatedId, type],
    );
    return r && relRow(r);
  }

  delete(id: string): Promise<number> {
    return exec(this.s.db, 'DELETE FROM user_relationships WHERE tenant_id = ? AND id = ?', [this.s.tenantId, id]);
  }

  /**
   * Edges of `userId` still in force at `now`: `outgoing` where the user is the subject (the
   * other party is the related user), `incoming` where the user is the related one.
   */
  async list(userId: string, direction: 'outgoing' | 'incoming', now: number): Promise<RelationshipListRow[]> {
    const mine = direction === 'outgoing' ? 'subject_id' : 'related_subject_id';
    const other = direction === 'outgoing' ? 'related_subject_id' : 'subject_id';
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT r.id, r.subject_id, r.related_subject_id, r.relationship_type, r.expires_at, r.created_at,
              u.email AS other_email, u.name AS other_name
         FROM user_relationships r
         JOIN users u ON u.tenant_id = r.tenant_id AND u.id = r.${other}
        WHERE r.tenant_id = ? AND r.${mine} = ? AND (r.expires_at IS NULL OR r.expires_at > ?)
        ORDER BY r.created_at, r.id`,
      [this.s.tenantId, userId, now],
    );
    return rows.map((r) => ({ ...relRow(r), other_email: String(r.other_email), other_name: String(r.other_name) }));
  }

  /** Subjects holding an edge of `type` toward `relatedId` in force at `now` (e.g. the target's managers). */
  async subjectsToward(relatedId: string, type: string, now: number): Promise<string[]> {
    const rows = await all<{ subject_id: string }>(
      this.s.db,
      `SELECT subject_id FROM user_relationships
        WHERE tenant_id = ? AND related_subject_id = ? AND relationship_type = ?
          AND (expires_at IS NULL OR expires_at > ?)
        ORDER BY created_at, id`,
      [this.s.tenantId, relatedId, type, now],
    );
    return rows.map((r) => r.subject_id);
  }
}

// ---------------------------------------------------------------- approvals

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

export interface ApprovalFilter {
  status?: string;
  investigation_id?: string;
}

const REQUEST_COLUMNS = `id, public_request_id, investigation_id, requester_subject_type, requester_subject_id,
  target_subject_type, target_subject_id, request_surface, requested_action, resource_class, audience, redaction_level,
  status, scope_canonical, scope_json, reason_code, reason_note, reference_id, reuse_scope, policy_preset,
  resolved_policy, attributes, reference_json, ticket_reference_json, resource_ids, detail_classes, dataset,
  partial_access_allowed, has_detail, grant_ttl_ms, requested_at, expires_at, decided_at, created_at, updated_at`;

const requestRow = (r: Record<string, unknown>): ApprovalRequestRow => ({
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

const STEP_COLUMNS = `id, approval_request_id, public_approval_id, position, step_key, side, subject_type, subject_id,
  relation_type, relation_source, status, method, transport_channel, reason_code, reason_note, notification_count,
  requested_at, expires_at, decided_at, created_at, updated_at`;

const stepRow = (r: Record<string, unknown>): ApprovalStepRow => ({
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

const GRANT_COLUMNS = `id, public_grant_id, approval_request_id, status, target_audience, resource_class,
  redaction_level,
  scope_canonical, scope_json, requester_subject_type, requester_subject_id, actor_subject_type, actor_subject_id,
  issued_at, expires_at, created_at, updated_at`;

const grantRow = (r: Record<string, unknown>): ApprovalGrantRow => ({
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

const notificationRow = (r: Record<string, unknown>): ApprovalNotificationRow => ({
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

/** `?` placeholders for an IN list (never empty: callers check). */
const marks = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

export class ScopedApprovals {
  constructor(private readonly s: ScopeRef) {}

  async insertRequest(r: ApprovalRequestRow): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO approval_requests (${REQUEST_COLUMNS}, tenant_id)
       VALUES (${marks(35)}, ?)`,
      [
        r.id,
        r.public_request_id,
        r.investigation_id,
        r.requester_subject_type,
        r.requester_subject_id,
        r.target_subject_type,
        r.target_subject_id,
        r.request_surface,
        r.requested_action,
        r.resource_class,
        r.audience,
        r.redaction_level,
        r.status,
        r.scope_canonical,
        JSON.stringify(r.scope_json),
        r.reason_code,
        r.reason_note,
        r.reference_id,
        r.reuse_scope,
        r.policy_preset,
        JSON.stringify(r.resolved_policy),
        JSON.stringify(r.attributes),
        JSON.stringify(r.reference),
        JSON.stringify(r.ticket_reference),
        JSON.stringify(r.resource_ids),
        JSON.stringify(r.detail_classes),
        r.dataset === null || r.dataset === undefined ? null : JSON.stringify(r.dataset),
        r.partial_access_allowed ? 1 : 0,
        r.has_detail ? 1 : 0,
        r.grant_ttl_ms,
        r.requested_at,
        r.expires_at,
        r.decided_at,
        r.created_at,
        r.updated_at,
        this.s.tenantId,
      ],
    );
  }

  async insertStep(r: ApprovalStepRow): Promise<void> {
    await exec(this.s.db, `INSERT INTO approval_steps (${STEP_COLUMNS}, tenant_id) VALUES (${marks(21)}, ?)`, [
      r.id,
      r.approval_request_id,
      r.public_approval_id,
      r.position,
      r.step_key,
      r.side,
      r.subject_type,
      r.subject_id,
      r.relation_type,
      r.relation_source,
      r.status,
      r.method,
      r.transport_channel,
      r.reason_code,
      r.reason_note,
      r.notification_count,
      r.requested_at,
      r.expires_at,
      r.decided_at,
      r.created_at,
      r.updated_at,
      this.s.tenantId,
    ]);
  }

  async insertGrant(r: ApprovalGrantRow): Promise<void> {
    await exec(this.s.db, `INSERT INTO approval_grants (${GRANT_COLUMNS}, tenant_id) VALUES (${marks(17)}, ?)`, [
      r.id,
      r.public_grant_id,
      r.approval_request_id,
      r.status,
      r.target_audience,
      r.resource_class,
      r.redaction_level,
      r.scope_canonical,
      JSON.stringify(r.scope_json),
      r.requester_subject_type,
      r.requester_subject_id,
      r.actor_subject_type,
      r.actor_subject_id,
      r.issued_at,
      r.expires_at,
      r.created_at,
      r.updated_at,
      this.s.tenantId,
    ]);
  }

  async insertNotification(r: ApprovalNotificationRow): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO approval_notifications
         (id, tenant_id, approval_request_id, approval_step_id, step_key, action, method,
         success, retryable, completion_artifact, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        r.id,
        this.s.tenantId,
        r.approval_request_id,
        r.approval_step_id,
        r.step_key,
        r.action,
        r.method,
        r.success ? 1 : 0,
        r.retryable ? 1 : 0,
        r.completion_artifact === null || r.completion_artifact === undefined
          ? null
          : JSON.stringify(r.completion_artifact),
        r.created_at,
      ],
    );
  }

  async getRequest(id: string): Promise<ApprovalRequestRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT ${REQUEST_COLUMNS} FROM approval_requests WHERE tenant_id = ? AND id = ?`,
      [this.s.tenantId, id],
    );
    return r && requestRow(r);
  }

  private where(f: ApprovalFilter): { sql: string; params: unknown[] } {
    let sql = 'tenant_id = ?';
    const params: unknown[] = [this.s.tenantId];
    if (f.status) {
      sql += ' AND status = ?';
      params.push(f.status);
    }
    if (f.investigation_id) {
      sql += ' AND investigation_id = ?';
      params.push(f.investigation_id);
    }
    return { sql, params };
  }

  /** Newest first. */
  async listRequests(f: ApprovalFilter, limit: number): Promise<ApprovalRequestRow[]> {
    const w = this.where(f);
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT ${REQUEST_COLUMNS} FROM approval_requests WHERE ${w.sql}
        ORDER BY created_at DESC, id DESC LIMIT ${Math.max(1, Math.floor(limit))}`,
      w.params,
    );
    return rows.map(requestRow);
  }

  async countRequests(f: ApprovalFilter): Promise<number> {
    const w = this.where(f);
    const r = await one<{ n: unknown }>(
      this.s.db,
      `SELECT COUNT(*) AS n FROM approval_requests WHERE ${w.sql}`,
      w.params,
    );
    return num(r?.n ?? 0);
  }

  async stepsOf(requestIds: string[]): Promise<ApprovalStepRow[]> {
    if (requestIds.length === 0) return [];
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT ${STEP_COLUMNS} FROM approval_steps
        WHERE tenant_id = ? AND approval_request_id IN (${marks(requestIds.length)})
        ORDER BY approval_request_id, position`,
      [this.s.tenantId, ...requestIds],
    );
    return rows.map(stepRow);
  }

  async grantsOf(requestIds: string[]): Promise<ApprovalGrantRow[]> {
    if (requestIds.length === 0) return [];
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT ${GRANT_COLUMNS} FROM approval_grants
        WHERE tenant_id = ? AND approval_request_id IN (${marks(requestIds.length)})
        ORDER BY created_at, id`,
      [this.s.tenantId, ...requestIds],
    );
    return rows.map(grantRow);
  }

  async notificationsOf(requestIds: string[]): Promise<ApprovalNotificationRow[]> {
    if (requestIds.length === 0) return [];
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT id, approval_request_id, approval_step_id, step_key, action, method, success, retryable,
              completion_artifact, created_at
         FROM approval_notifications WHERE tenant_id = ? AND approval_request_id IN (${marks(requestIds.length)})
        ORDER BY created_at, id`,
      [this.s.tenantId, ...requestIds],
    );
    return rows.map(notificationRow);
  }

  /**
   * Moves a pending request to `status` (a terminal one); 0 when it was no longer pending, so
   * of two deciders racing exactly one wins.
   */
  closeRequest(id: string, status: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE approval_requests SET status = ?, decided_at = ?, updated_at = ?
        WHERE tenant_id = ? AND id = ? AND status = 'pending'`,
      [status, now, now, this.s.tenantId, id],
    );
  }

  /** Records a decision on a pending step; 0 when the step was no longer pending. */
  decideStep(
    id: string,
    d: { status: string; reasonCode: string; reasonNote: string; method: string; now: number },
  ): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE approval_steps
          SET status = ?, reason_code = ?, reason_note = ?, method = ?, decided_at = ?, updated_at = ?
        WHERE tenant_id = ? AND id = ? AND status = 'pending'`,
      [d.status, d.reasonCode, d.reasonNote, d.method, d.now, d.now, this.s.tenantId, id],
    );
  }

  /** Closes every step of the request still pending (the request ended another way). */
  closePendingSteps(requestId: string, status: string, reasonCode: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE approval_steps SET status = ?, reason_code = ?, decided_at = ?, updated_at = ?
        WHERE tenant_id = ? AND approval_request_id = ? AND status = 'pending'`,
      [status, reasonCode, now, now, this.s.tenantId, requestId],
    );
  }

  /** Pending steps of the request whose deadline is at or before `now`. */
  async overdueSteps(requestId: string, now: number): Promise<ApprovalStepRow[]> {
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT ${STEP_COLUMNS} FROM approval_steps
        WHERE tenant_id = ? AND approval_request_id = ? AND status = 'pending' AND expires_at <= ?`,
      [this.s.tenantId, requestId, now],
    );
    return rows.map(stepRow);
  }

  countNotified(stepId: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE approval_steps SET notification_count = notification_count + 1, updated_at = ?
        WHERE tenant_id = ? AND id = ?`,
      [now, this.s.tenantId, stepId],
    );
  }
}

/** Platform-level: the expiry job's scan across tenants, ids only. */
export class ApprovalExpiryQueue {
  constructor(private readonly db: Db) {}

  /** Pending requests that have a pending step past its deadline, oldest deadline first. */
  async due(now: number, limit: number): Promise<{ tenant_id: string; approval_request_id: string }[]> {
    return all<{ tenant_id: string; approval_request_id: string }>(
      this.db,
      `SELECT DISTINCT tenant_id, approval_request_id FROM approval_steps
        WHERE status = 'pending' AND expires_at <= ? ORDER BY tenant_id, approval_request_id
        LIMIT ${Math.max(1, Math.floor(limit))}`,
      [now],
    );
  }
}
