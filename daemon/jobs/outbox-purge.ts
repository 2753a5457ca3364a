/**
 * Deletes finished outbox rows. At login volume the outbox gains hundreds of rows a second;
 * delivered ones (payload already erased) are kept a day for diagnosis, failed ones a week.
 * Deletes go in chunks by primary key so no statement holds locks for long.
 */
import type { DataSource } from 'typeorm';
import { deleteInChunks } from '../../shared/db/purge.js';
import type { JobSpec } from './scheduler.js';

export const OUTBOX_PURGE_JOB = 'outbox-purge';
const DAY_MS = 86_400_000;

export interface OutboxPurgeOptions {
  deliveredRetentionMs: number;
  failedRetentionMs: number;
}

export const OUTBOX_PURGE_DEFAULTS: OutboxPurgeOptions = {
  deliveredRetentionMs: DAY_MS,
  failedRetentionMs: 7 * DAY_MS,
};

/** Deletes expired rows; returns how many. */
export async function purgeOutbox(
  ds: DataSource,
  opts: OutboxPurgeOptions = OUTBOX_PURGE_DEFAULTS,
  signal?: AbortSignal,
): Promise<number> {
  let deleted = 0;
  const now = Date.now();
  for (const [status, retention] of [
    ['delivered', opts.deliveredRetentionMs],
    ['failed', opts.failedRetentionMs],
  ] as const) {
    deleted += await deleteInChunks(ds, {
      table: 'outbox',
      key: 'id',
      where: 'status = ? AND updated_at < ?',
      params: [status, now - retention],
      signal,
    });
  }
  return deleted;
}

export function outboxPurgeJob(ds: DataSource, opts: OutboxPurgeOptions = OUTBOX_PURGE_DEFAULTS): JobSpec {
  return {
    name: OUTBOX_PURGE_JOB,
    schedule: '17 */10 * * * *', // every 10 minutes, off the round second other schedules use
    leaseMs: 5 * 60_000,
    run: async (signal) => {
      await purgeOutbox(ds, opts, signal);
    },
  };
}
