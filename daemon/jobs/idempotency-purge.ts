/** Deletes Idempotency-Key rows past their 24 h retention (see shared/services/idempotency.ts). */
import type { IdempotencyService } from '../../shared/services/idempotency.js';
import type { JobSpec } from './scheduler.js';

export const IDEMPOTENCY_PURGE_JOB = 'idempotency-purge';

/** @param idempotency the jobs side's service (shared/container.ts), on the jobs connection */
export function idempotencyPurgeJob(idempotency: Pick<IdempotencyService, 'purgeExpired'>): JobSpec {
  return {
    name: IDEMPOTENCY_PURGE_JOB,
    schedule: '37 */10 * * * *', // every 10 minutes
    leaseMs: 5 * 60_000,
    run: async (signal) => {
      await idempotency.purgeExpired(signal);
    },
  };
}
