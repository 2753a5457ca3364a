/**
 * The expiry of approval requests: a pending request with a step past its deadline closes as
 * `expired` (its pending steps `expired`, no grant), either when a late decision meets it or in
 * the expiry job's cross-tenant scan.
 *
 * Separate from approvals.ts: the timeout is the one move made by the system rather than by a
 * caller, and the job's scan is its own loop over tenants; both paths share `expireRequest`.
 */
import type { Database } from '../db/index.js';
import { ApprovalExpiryQueue, TenantScope, type ApprovalRequestRow } from '../repositories/index.js';
import { audit } from './audit.js';

/** Closes `r` as expired when one of its pending steps is past its deadline; false when none is. */
export async function expireRequest(scope: TenantScope, r: ApprovalRequestRow, now: number): Promise<boolean> {
  const overdue = await scope.approvals.overdueSteps(r.id, now);
  if (overdue.length === 0) return false;
  if ((await scope.approvals.closeRequest(r.id, 'expired', now)) === 0) return false;
  await scope.approvals.closePendingSteps(r.id, 'expired', 'timeout', now);
  await audit(
    scope.db,
    { type: 'system', id: 'approval-expiry' },
    {
      tenantId: scope.tenantId,
      action: 'approval.request.expire',
      targetType: 'approval_request',
      targetId: r.id,
      summary: { steps: overdue.map((s) => s.step_key) },
    },
  );
  return true;
}

/**
 * The expiry job's work: every pending request with a step past its deadline is auto-denied
 * as `expired` (its pending steps `expired`, no grant). Returns how many it closed.
 */
export async function expireDueRequests(
  db: Database,
  now = Date.now(),
  batch = 100,
  signal?: AbortSignal,
): Promise<number> {
  let closed = 0;
  for (;;) {
    const due = await new ApprovalExpiryQueue(db).due(now, batch);
    let progressed = 0;
    for (const d of due) {
      if (signal?.aborted) return closed;
      const done = await db.transaction(async (tx) => {
        const scope = new TenantScope(tx, d.tenant_id);
        const r = await scope.approvals.getRequest(d.approval_request_id);
        if (!r) return false;
        if (r.status !== 'pending') {
          // A step left pending under a closed request: close it so the scan moves on.
          await scope.approvals.closePendingSteps(
            r.id,
            r.status === 'expired' ? 'expired' : 'cancelled',
            'closed',
            now,
          );
          return false;
        }
        return expireRequest(scope, r, now);
      });
      progressed++;
      if (done) closed++;
    }
    if (due.length < batch || progressed === 0) return closed;
  }
}
