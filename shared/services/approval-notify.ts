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

/**
 * One notification attempt for a step's approver: an email written to the outbox in the
 * request's transaction (delivered, retried and recorded by the outbox deliverer), and a row
 * saying so. An approver that cannot receive mail (inactive account) is recorded as a failed,
 * non-retryable attempt; the step stays decidable through the API and the CLI.
 */
export async function notifyApprover(
  outbox: Pick<Outbox, 'enqueueEmail'>,
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
      subject: `Approval requested: ${p.action} (${p.resourceClass})`,
      text:
        `Your approval is requested for "${p.action}" on ${p.resourceClass}.\n` +
        `Request ${p.requestId}, step ${p.stepKey}; it expires at ${new Date(p.expiresAt).toISOString()}.\n` +
        'Decide through your administrator (iam approvals decide).\n',
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
