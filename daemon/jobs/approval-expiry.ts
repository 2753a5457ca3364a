/**
 * Closes approval requests that have a step past its deadline: each becomes `expired` (an
 * auto-deny: no grant is issued), its pending steps `expired` (docs/approvals.md). Each request
 * is closed by a conditional UPDATE on `status = 'pending'`, so the lease only saves work: two
 * daemons running the scan at once still close each request once.
 */
import type { ApprovalService } from '../../shared/services/approvals.js';
import type { JobSpec } from './scheduler.js';

export const APPROVAL_EXPIRY_JOB = 'approval-expiry';

export function approvalExpiryJob(service: Pick<ApprovalService, 'expireDue'>): JobSpec {
  return {
    name: APPROVAL_EXPIRY_JOB,
    schedule: '*/15 * * * * *', // every 15 seconds
    leaseMs: 60_000,
    run: async (signal) => {
      await service.expireDue(Date.now(), 100, signal);
    },
  };
}
