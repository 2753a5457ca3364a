/**
 * Deletes login and token rows that can no longer matter, so the tables stay the size of
 * what is live. Each kind is kept a little past its own expiry:
 *
 * | Table | Deleted when |
 * |---|---|
 * | auth_requests, direct_auth_artifacts | expired |
 * | email_codes | expired an hour ago |
 * | auth_codes | expired a day ago (a replay within the day still revokes its tokens) |
 * | refresh_tokens | expired |
 * | revoked_access_tokens | the revoked token has expired (introspection rejects it by exp anyway) |
 * | sessions | expired or revoked 30 days ago (they list as the user's devices until then) |
 */
import type { DataSource } from 'typeorm';
import type { JobSpec } from './scheduler.js';
import { deleteInChunks } from '../../shared/db/purge.js';

export const AUTH_PURGE_JOB = 'auth-purge';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export async function purgeAuth(
  ds: DataSource,
  signal?: AbortSignal,
  now = Date.now(),
): Promise<Record<string, number>> {
  const plan: [string, string, string, unknown[]][] = [
    ['auth_requests', 'id', 'expires_at < ?', [now]],
    ['direct_auth_artifacts', 'id', 'expires_at < ?', [now]],
    ['email_codes', 'id', 'expires_at < ?', [now - HOUR]],
    ['auth_codes', 'id', 'expires_at < ?', [now - DAY]],
    ['refresh_tokens', 'id', 'expires_at < ?', [now]],
    ['revoked_access_tokens', 'jti', 'expires_at < ?', [now]],
    ['sessions', 'id', '(expires_at < ? OR revoked_at < ?)', [now - 30 * DAY, now - 30 * DAY]],
  ];
  const counts: Record<string, number> = {};
  for (const [table, key, where, params] of plan) {
    if (signal?.aborted) break;
    counts[table] = await deleteInChunks(ds, { table, key, where, params, signal });
  }
  return counts;
}

export function authPurgeJob(ds: DataSource): JobSpec {
  return {
    name: AUTH_PURGE_JOB,
    schedule: '41 */10 * * * *', // every 10 minutes, apart from the outbox purge
    leaseMs: 5 * 60_000,
    run: async (signal) => {
      await purgeAuth(ds, signal);
    },
  };
}
