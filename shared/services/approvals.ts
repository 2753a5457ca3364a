/**
 * Approval requests (docs/approvals.md).
 *
 * An approval request names who asks (requester), about whom (target), what and for which
 * audience, and its approvers as steps. Every step must approve (quorum "all"); one deny ends the
 * request. Each step has its own deadline (`step_timeout_seconds`); the expiry job closes a
 * request with a step past its deadline as `expired` (no grant). On the last approval a grant
 * row is issued in the same transaction. A request is decided at most once: every move is a
 * conditional UPDATE on `status = 'pending'`, so of two racing deciders exactly one wins.
 * The requester never approves their own request (separation of duties).
 *
 * Beside it: the access graph the default approvers come from (relationships.ts), the approvers'
 * notification attempts (approval-notify.ts), and the expiry of overdue requests
 * (approval-expiry.ts).
 */
import type { Database } from '../db/index.js';
import { newId } from '../crypto.js';
import { ApiError, badRequest, conflict, notFound } from '../errors.js';
import {
  TenantScope,
  type ApprovalFilter,
  type ApprovalGrantRow,
  type ApprovalNotificationRow,
  type ApprovalRequestRow,
  type ApprovalStepRow,
} from '../repositories/index.js';
import {
  APPROVAL_LIMITS,
  APPROVALS_DEFAULT_LIMIT,
  type ApprovalCreate,
  type ApprovalRequestOut,
} from '../schemas/approvals.js';
import { expireDueRequests, expireRequest } from './approval-expiry.js';
import { notifyApprover } from './approval-notify.js';
import { audit, type Actor } from './audit.js';
import { canonicalize, CanonicalizationError } from './federation/jcs.js';
import type { Outbox } from './outbox.js';
import { MailTemplateService, type MailComposer } from './mail-templates.js';

/** The relationship type whose holders approve when a request names no steps. */
export const DEFAULT_APPROVER_RELATION = 'manager_of';

export interface DecisionIn {
  decision: 'approve' | 'deny';
  actor_subject_id: string;
  reason_code?: string;
  reason_note?: string;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const ref = (r: Record<string, unknown>) => ({ type: str(r.type), id: str(r.id), url: str(r.url) });

function requestView(
  tenantId: string,
  r: ApprovalRequestRow,
  steps: ApprovalStepRow[],
  grants: ApprovalGrantRow[],
  notes: ApprovalNotificationRow[],
): ApprovalRequestOut {
  const { grant_ttl_ms: _ttl, reference, ticket_reference, ...rest } = r;
  void _ttl;
  return {
    ...rest,
    tenant_id: tenantId,
    reference: ref(reference),
    ticket_reference: ref(ticket_reference),
    approvals: steps.map(({ position: _p, ...s }) => (void _p, s)),
    grants: grants.map((g) => ({ ...g, tenant_id: tenantId })),
    notification_results: notes.map((n) => ({
      approval_id: n.approval_step_id,
      step_key: n.step_key,
      action: n.action,
      method: n.method,
      success: n.success,
      retryable: n.retryable,
      completion_artifact: n.completion_artifact,
    })),
  };
}

export class ApprovalService {
  private readonly templates: MailComposer;

  /** `templates` composes the approvers' mails (the container's; without one, unbranded). */
  constructor(
    private readonly db: Database,
    private readonly outbox: Pick<Outbox, 'enqueueEmail' | 'kick'>,
    templates?: MailComposer,
  ) {
    this.templates = templates ?? new MailTemplateService(db, { issuerHost: '' });
  }

  private async subjectUser(scope: TenantScope, id: string, field: string) {
    const u = await scope.users.find(id);
    if (!u) throw new ApiError(400, 'unknown_subject', `${field}: ${id} is not a user of this tenant`);
    return u;
  }

  /** Creates a pending request, its steps, and notifies each approver through the email outbox. */
  async create(
    tenantId: string,
    input: ApprovalCreate,
    actor: Actor,
    surface: 'admin_api' | 'cli',
  ): Promise<ApprovalRequestOut> {
    let scopeCanonical: string;
    const scopeJson = input.scope_json ?? {};
    try {
      scopeCanonical = canonicalize(scopeJson);
    } catch (e) {
      // Only the canonicalizer's own refusals are the caller's fault and fit to show; anything
      // else (an engine error) is not echoed.
      if (e instanceof CanonicalizationError) throw badRequest(`body.scope_json: ${e.message}`);
      throw e;
    }
    if (scopeCanonical.length > APPROVAL_LIMITS.scopeJsonChars)
      throw badRequest(`body.scope_json: must be at most ${APPROVAL_LIMITS.scopeJsonChars} characters as JSON`);
    const keys = new Set<string>();
    for (const [i, s] of (input.steps ?? []).entries()) {
      if (keys.has(s.step_key)) throw badRequest(`body.steps.${i}.step_key: duplicate step_key ${s.step_key}`);
      keys.add(s.step_key);
    }
    const branding = await this.templates.brandingOf(tenantId);
    const id = await this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const now = Date.now();
      await this.subjectUser(scope, input.requester_subject_id, 'body.requester_subject_id');
      await this.subjectUser(scope, input.target_subject_id, 'body.target_subject_id');
      const timeoutMs = (input.step_timeout_seconds ?? APPROVAL_LIMITS.stepTimeout.default) * 1000;
      const grantTtlMs = (input.grant_ttl_seconds ?? APPROVAL_LIMITS.grantTtl.default) * 1000;
      let planned: {
        step_key: string;
        side: string;
        subject_id: string;
        relation_type: string;
        relation_source: string;
      }[];
      if (input.steps) {
        planned = input.steps.map((s) => ({
          step_key: s.step_key,
          side: s.side ?? 'approver',
          subject_id: s.subject_id,
          relation_type: s.relation_type ?? '',
          relation_source: 'explicit',
        }));
      } else {
        // Derived from the access graph: the target's managers, never the requester.
        const managers = (
          await scope.relationships.subjectsToward(input.target_subject_id, DEFAULT_APPROVER_RELATION, now)
        ).filter((m) => m !== input.requester_subject_id);
        if (managers.length === 0)
          throw new ApiError(
            422,
            'no_approvers',
            `body.steps: absent, and no user other than the requester holds a ${DEFAULT_APPROVER_RELATION} ` +
              'relationship toward the target',
          );
        planned = managers.slice(0, APPROVAL_LIMITS.steps).map((m, i) => ({
          step_key: `manager_${i + 1}`,
          side: 'approver',
          subject_id: m,
          relation_type: DEFAULT_APPROVER_RELATION,
          relation_source: 'relationship',
        }));
      }
      const approvers = [];
      for (const [i, p] of planned.entries()) {
        if (p.subject_id === input.requester_subject_id)
          throw new ApiError(
            400,
            'self_approval_forbidden',
            `body.steps.${i}.subject_id: the requester cannot approve their own request`,
          );
        approvers.push(await this.subjectUser(scope, p.subject_id, `body.steps.${i}.subject_id`));
      }
      const requestId = newId('apr');
      const expiresAt = now + timeoutMs;
      await scope.approvals.insertRequest({
        id: requestId,
        public_request_id: newId('req', 9),
        investigation_id: input.investigation_id ?? '',
        requester_subject_type: 'user',
        requester_subject_id: input.requester_subject_id,
        target_subject_type: 'user',
        target_subject_id: input.target_subject_id,
        request_surface: surface,
        requested_action: input.requested_action,
        resource_class: input.resource_class,
        audience: input.audience,
        redaction_level: input.redaction_level ?? 'standard',
        status: 'pending',
        scope_canonical: scopeCanonical,
        scope_json: scopeJson,
        reason_code: input.reason_code ?? '',
        reason_note: input.reason_note ?? '',
        reference_id: input.reference_id ?? input.reference?.id ?? '',
        reuse_scope: input.reuse_scope ?? 'single_use',
        policy_preset: input.policy_preset ?? 'default',
        resolved_policy: {
          quorum: 'all',
          steps: planned.length,
          approver_source: input.steps ? 'explicit' : `relationship:${DEFAULT_APPROVER_RELATION}`,
          step_timeout_seconds: timeoutMs / 1000,
          grant_ttl_seconds: grantTtlMs / 1000,
          on_timeout: 'expire',
          self_approval: 'forbidden',
        },
        attributes: input.attributes ?? {},
        reference: input.reference ?? {},
        ticket_reference: input.ticket_reference ?? {},
        resource_ids: input.resource_ids ?? [],
        detail_classes: input.detail_classes ?? [],
        dataset: input.dataset ?? null,
        partial_access_allowed: input.partial_access_allowed ?? false,
        has_detail: (input.detail_classes ?? []).length > 0 || (input.resource_ids ?? []).length > 0,
        grant_ttl_ms: grantTtlMs,
        requested_at: now,
        expires_at: expiresAt,
        decided_at: null,
        created_at: now,
        updated_at: now,
      });
      for (const [i, p] of planned.entries()) {
        const stepId = newId('aps');
        await scope.approvals.insertStep({
          id: stepId,
          approval_request_id: requestId,
          public_approval_id: newId('apv', 9),
          position: i,
          step_key: p.step_key,
          side: p.side,
          subject_type: 'user',
          subject_id: p.subject_id,
          relation_type: p.relation_type,
          relation_source: p.relation_source,
          status: 'pending',
          method: 'email',
          transport_channel: 'email_outbox',
          reason_code: '',
          reason_note: '',
          notification_count: 0,
          requested_at: now,
          expires_at: expiresAt,
          decided_at: null,
          created_at: now,
          updated_at: now,
        });
        await notifyApprover(this.outbox, { templates: this.templates, branding }, tx, scope, {
          requestId,
          stepId,
          stepKey: p.step_key,
          approver: approvers[i],
          action: input.requested_action,
          resourceClass: input.resource_class,
          expiresAt,
          now,
        });
      }
      await audit(tx, actor, {
        tenantId,
        action: 'approval.request.create',
        targetType: 'approval_request',
        targetId: requestId,
        summary: { requested_action: input.requested_action, steps: planned.map((p) => p.step_key) },
      });
      return requestId;
    });
    this.outbox.kick();
    return this.get(tenantId, id);
  }

  async get(tenantId: string, id: string): Promise<ApprovalRequestOut> {
    const scope = new TenantScope(this.db, tenantId);
    const r = await scope.approvals.getRequest(id);
    if (!r) throw notFound(`Approval request ${id}`);
    return (await this.views(scope, [r]))[0];
  }

  private async views(scope: TenantScope, rows: ApprovalRequestRow[]): Promise<ApprovalRequestOut[]> {
    const ids = rows.map((r) => r.id);
    const [steps, grants, notes] = await Promise.all([
      scope.approvals.stepsOf(ids),
      scope.approvals.grantsOf(ids),
      scope.approvals.notificationsOf(ids),
    ]);
    return rows.map((r) =>
      requestView(
        scope.tenantId,
        r,
        steps.filter((s) => s.approval_request_id === r.id),
        grants.filter((g) => g.approval_request_id === r.id),
        notes.filter((n) => n.approval_request_id === r.id),
      ),
    );
  }

  /** Newest first; `total` counts every request matching the filters. */
  async list(
    tenantId: string,
    filter: ApprovalFilter,
    limit = APPROVALS_DEFAULT_LIMIT,
  ): Promise<{ items: ApprovalRequestOut[]; total: number }> {
    const scope = new TenantScope(this.db, tenantId);
    const rows = await scope.approvals.listRequests(filter, limit);
    return { items: await this.views(scope, rows), total: await scope.approvals.countRequests(filter) };
  }

  /**
   * A decision on one step. Order of checks: the request exists, is pending, the step exists
   * and is pending, the actor is not the requester (separation of duties), the actor is the
   * step's approver. A step past its deadline is expired here too, so a late decision never wins
   * against the timeout.
   */
  async decide(
    tenantId: string,
    requestId: string,
    stepKey: string,
    input: DecisionIn,
    actor: Actor,
  ): Promise<ApprovalRequestOut> {
    const late = await this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const now = Date.now();
      const r = await scope.approvals.getRequest(requestId);
      if (!r) throw notFound(`Approval request ${requestId}`);
      if (r.status !== 'pending')
        throw new ApiError(409, 'approval_not_pending', `Approval request ${requestId} is ${r.status}, not pending.`, {
          status: r.status,
        });
      const steps = await scope.approvals.stepsOf([r.id]);
      const step = steps.find((s) => s.step_key === stepKey);
      if (!step) throw notFound(`Step ${stepKey} of approval request ${requestId}`);
      if (step.status !== 'pending')
        throw new ApiError(409, 'step_not_pending', `Step ${stepKey} is ${step.status}, not pending.`, {
          status: step.status,
        });
      if (input.actor_subject_id === r.requester_subject_id)
        throw new ApiError(403, 'self_approval_forbidden', 'The requester cannot decide their own approval request.');
      if (input.actor_subject_id !== step.subject_id)
        throw new ApiError(403, 'not_step_approver', `body.actor_subject_id: is not the approver of step ${stepKey}`);
      // The expiry commits; the refusal is raised after the transaction (a throw would roll it back).
      if (step.expires_at <= now) return expireRequest(scope, r, now);
      const status = input.decision === 'approve' ? 'approved' : 'denied';
      if (
        (await scope.approvals.decideStep(step.id, {
          status,
          reasonCode: input.reason_code ?? '',
          reasonNote: input.reason_note ?? '',
          method: 'admin_api',
          now,
        })) === 0
      )
        throw new ApiError(409, 'step_not_pending', `Step ${stepKey} was decided meanwhile.`);
      let outcome: string = 'pending';
      if (status === 'denied') {
        outcome = 'denied';
        await this.close(scope, r.id, 'denied', now);
        await scope.approvals.closePendingSteps(r.id, 'cancelled', 'request_denied', now);
      } else if (steps.every((s) => s.id === step.id || s.status === 'approved')) {
        outcome = 'approved';
        await this.close(scope, r.id, 'approved', now);
        await scope.approvals.insertGrant({
          id: newId('apg'),
          public_grant_id: newId('grt', 9),
          approval_request_id: r.id,
          status: 'active',
          target_audience: r.audience,
          resource_class: r.resource_class,
          redaction_level: r.redaction_level,
          scope_canonical: r.scope_canonical,
          scope_json: r.scope_json,
          requester_subject_type: r.requester_subject_type,
          requester_subject_id: r.requester_subject_id,
          actor_subject_type: 'user',
          actor_subject_id: input.actor_subject_id,
          issued_at: now,
          expires_at: now + r.grant_ttl_ms,
          created_at: now,
          updated_at: now,
        });
      }
      await audit(tx, actor, {
        tenantId,
        action: `approval.step.${status === 'approved' ? 'approve' : 'deny'}`,
        targetType: 'approval_request',
        targetId: r.id,
        summary: { step_key: stepKey, actor_subject_id: input.actor_subject_id, request_status: outcome },
      });
      return false;
    });
    if (late)
      throw new ApiError(409, 'approval_not_pending', `Approval request ${requestId} expired.`, { status: 'expired' });
    return this.get(tenantId, requestId);
  }

  private async close(scope: TenantScope, id: string, status: string, now: number): Promise<void> {
    if ((await scope.approvals.closeRequest(id, status, now)) === 0)
      throw conflict(`Approval request ${id} was decided meanwhile.`);
  }

  /** Cancels a pending request (the operator withdraws it); pending steps become `cancelled`. */
  async cancel(
    tenantId: string,
    requestId: string,
    input: { reason_code?: string; reason_note?: string },
    actor: Actor,
  ): Promise<ApprovalRequestOut> {
    await this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const now = Date.now();
      const r = await scope.approvals.getRequest(requestId);
      if (!r) throw notFound(`Approval request ${requestId}`);
      if ((await scope.approvals.closeRequest(r.id, 'cancelled', now)) === 0)
        throw new ApiError(409, 'approval_not_pending', `Approval request ${requestId} is ${r.status}, not pending.`, {
          status: r.status,
        });
      await scope.approvals.closePendingSteps(r.id, 'cancelled', input.reason_code ?? 'request_cancelled', now);
      await audit(tx, actor, {
        tenantId,
        action: 'approval.request.cancel',
        targetType: 'approval_request',
        targetId: r.id,
        summary: { reason_code: input.reason_code ?? null },
      });
    });
    return this.get(tenantId, requestId);
  }

  /**
   * The expiry job's work: every pending request with a step past its deadline is auto-denied
   * as `expired` (its pending steps `expired`, no grant). Returns how many it closed.
   */
  expireDue(now = Date.now(), batch = 100, signal?: AbortSignal): Promise<number> {
    return expireDueRequests(this.db, now, batch, signal);
  }
}
