/**
 * The custom claim rename runner as a job (shared/services/claim-rename.ts, docs/claims.md). It
 * runs on every daemon (`lease: false`): each rename operation is claimed one-winner with its
 * own short lease, renewed by every batch, so several daemons (and an `iam claims rename`
 * waiting for its rename) share the work without copying a batch twice, and a daemon that dies
 * holds its operation only until that lease expires. Every second, and at once when a rename
 * is accepted.
 */
import type { ClaimRenameService } from '../../shared/services/claim-rename.js';
import type { JobSpec } from './scheduler.js';

export const CLAIM_RENAME_JOB = 'claim-rename';

export function claimRenameJob(runner: ClaimRenameService): JobSpec {
  return {
    name: CLAIM_RENAME_JOB,
    schedule: '* * * * * *',
    lease: false,
    logLevel: 'debug',
    run: async (signal) => {
      await runner.runDue(signal);
    },
  };
}
