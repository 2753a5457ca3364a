/**
 * Approval requests (docs/approvals.md):
 * - `ScopedApprovals` (through TenantScope): requests, their steps, grants and notification
 *   attempts. Every statement binds the scope's tenant.
 * - `ApprovalExpiryQueue`: the one cross-tenant question the expiry job asks (which pending
 *   steps are past their deadline), answered with (tenant id, request id) pairs only.
 *
 * The access graph the approvers are found in (user relationships) is in relationships.ts; the
 * row shapes and their mapping in approval-rows.ts.
 */
import type { Db } from '../db/index.js';
import { all, exec, num, one } from '../db/sql.js';
import {
  GRANT_COLUMNS,
  grantRow,
  notificationRow,
  REQUEST_COLUMNS,
  requestRow,
  STEP_COLUMNS,
  stepRow,
  type ApprovalGrantRow,
  type ApprovalNotificationRow,
  type ApprovalRequestRow,
  type ApprovalStepRow,
} from './approval-rows.js';
import type { ScopeRef } from './common.js';

export interface ApprovalFilter {
  status?: string;
  investigation_id?: string;
}

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
