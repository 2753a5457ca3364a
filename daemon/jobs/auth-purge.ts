/**
 * The auth-purge job: deletes login and token rows that can no longer matter, each kind a
 * little past its own expiry (the table of retentions is in shared/services/auth/purge.ts).
 */
import type { Database } from '../../shared/db/index.js';
import { purgeExpiredAuth } from '../../shared/services/auth/purge.js';
import type { JobSpec } from './scheduler.js';

export const AUTH_PURGE_JOB = 'auth-purge';

/** Deletes what has expired past its retention; returns how many rows, by table. */
export function purgeAuth(db: Database, signal?: AbortSignal, now = Date.now()): Promise<Record<string, number>> {
  return purgeExpiredAuth(db, signal, now);
}

export function authPurgeJob(db: Database): JobSpec {
  return {
    name: AUTH_PURGE_JOB,
    schedule: '41 */10 * * * *', // every 10 minutes, apart from the outbox purge
    leaseMs: 5 * 60_000,
    run: async (signal) => {
      await purgeAuth(db, signal);
    },
  };
}
