/**
 * The notification attempts of an approval request's steps: the email to each approver, written
 * to the outbox in the request's transaction, and the attempt row recorded beside it.
 *
 * Separate from approvals.ts: how an approver is told (channel, message, what is recorded) is its
 * own concern; the request's lifecycle only calls it once per step it creates.
 */
import type { Tx } from '../db/index.js';
import { newId } from '../crypto.js';
import type { TenantScope } from '../repositories/index.js';
import type { Outbox } from './outbox.js';
import type { TenantBranding } from './branding-types.js';
import type { MailComposer } from './mail-templates.js';

/**
 * One notification attempt for a step's approver: an email written to the outbox in the
 * request's transaction (delivered, retried and recorded by the outbox deliverer), and a row
 * saying so. An approver that cannot receive mail (inactive account) is recorded as a failed,
 * non-retryable attempt; the step stays decidable through the API and the CLI.
 */
export async function notifyApprover(
  outbox: Pick<Outbox, 'enqueueEmail'>,
  mail: { templates: MailComposer; branding: TenantBranding },
  tx: Tx,
  scope: TenantScope,
  p: {
    requestId: string;
    stepId: string;
    stepKey: string;
    approver: { email: string; status: string };
    action: string;
    resourceClass: string;
    expiresAt: number;
    now: number;
  },
): Promise<void> {
  let artifact: unknown;
  let success = false;
  if (p.approver.status === 'active') {
    const outboxId = await outbox.enqueueEmail(tx, {
      tenantId: scope.tenantId,
      to: p.approver.email,
      // The approver's locale is not known here: English (docs/email.md).
      ...(await mail.templates.compose({
        tenantId: scope.tenantId,
        kind: 'approval_requested',
        vars: {
          action: p.action,
          resource_class: p.resourceClass,
          request_id: p.requestId,
          step_key: p.stepKey,
          expires_at: new Date(p.expiresAt).toISOString(),
        },
        db: tx,
        branding: mail.branding,
      })),
    });
    artifact = { outbox_id: outboxId };
    success = true;
  } else {
    artifact = { skipped: 'approver_inactive' };
  }
  await scope.approvals.insertNotification({
    id: newId('apn'),
    approval_request_id: p.requestId,
    approval_step_id: p.stepId,
    step_key: p.stepKey,
    action: 'approval_requested',
    method: 'email',
    success,
    retryable: false,
    completion_artifact: artifact,
    created_at: p.now,
  });
  if (success) await scope.approvals.countNotified(p.stepId, p.now);
}
