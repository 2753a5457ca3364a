/** Deletes Idempotency-Key rows past their 24 h retention (see daemon/middleware/koa-idempotency.ts). */
import type { DataSource } from 'typeorm';
import { deleteInChunks } from '../../shared/db/purge.js';
import type { JobSpec } from './scheduler.js';

export const IDEMPOTENCY_PURGE_JOB = 'idempotency-purge';

export function purgeIdempotencyKeys(ds: DataSource, signal?: AbortSignal): Promise<number> {
  return deleteInChunks(ds, {
    table: 'idempotency_keys',
    key: 'id',
    where: 'expires_at < ?',
    params: [Date.now()],
    signal,
  });
}

export function idempotencyPurgeJob(ds: DataSource): JobSpec {
  return {
    name: IDEMPOTENCY_PURGE_JOB,
    schedule: '37 */10 * * * *', // every 10 minutes
    leaseMs: 5 * 60_000,
    run: async (signal) => {
      await purgeIdempotencyKeys(ds, signal);
    },
  };
}
