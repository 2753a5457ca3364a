/**
 * Deletes finished outbox rows. At login volume the outbox gains hundreds of rows a second;
 * delivered ones (payload already erased) are kept a day for diagnosis, failed ones a week.
 * The Outbox service deletes them in chunks by primary key, so no statement holds locks for long.
 */
import type { Database } from '../../shared/db/index.js';
import { purgeOutbox as purge, type OutboxRetention } from '../../shared/services/outbox.js';
import type { JobSpec } from './scheduler.js';

export const OUTBOX_PURGE_JOB = 'outbox-purge';
const DAY_MS = 86_400_000;

export type OutboxPurgeOptions = OutboxRetention;

export const OUTBOX_PURGE_DEFAULTS: OutboxPurgeOptions = {
  deliveredRetentionMs: DAY_MS,
  failedRetentionMs: 7 * DAY_MS,
};

/** Deletes expired rows; returns how many. */
export function purgeOutbox(
  db: Database,
  opts: OutboxPurgeOptions = OUTBOX_PURGE_DEFAULTS,
  signal?: AbortSignal,
): Promise<number> {
  return purge(db, opts, signal);
}

export function outboxPurgeJob(db: Database, opts: OutboxPurgeOptions = OUTBOX_PURGE_DEFAULTS): JobSpec {
  return {
    name: OUTBOX_PURGE_JOB,
    schedule: '17 */10 * * * *', // every 10 minutes, off the round second other schedules use
    leaseMs: 5 * 60_000,
    run: async (signal) => {
      await purgeOutbox(db, opts, signal);
    },
  };
}
