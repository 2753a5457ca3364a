/** Deletes Idempotency-Key rows past their 24 h retention (see shared/services/idempotency.ts). */
import type { Database } from '../../shared/db/index.js';
import { IdempotencyService } from '../../shared/services/idempotency.js';
import type { JobSpec } from './scheduler.js';

export const IDEMPOTENCY_PURGE_JOB = 'idempotency-purge';

export function purgeIdempotencyKeys(ds: Database, signal?: AbortSignal): Promise<number> {
  return new IdempotencyService(ds).purgeExpired(signal);
}

export function idempotencyPurgeJob(ds: Database): JobSpec {
  return {
    name: IDEMPOTENCY_PURGE_JOB,
    schedule: '37 */10 * * * *', // every 10 minutes
    leaseMs: 5 * 60_000,
    run: async (signal) => {
      await purgeIdempotencyKeys(ds, signal);
    },
  };
}
