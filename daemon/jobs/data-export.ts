/**
 * Data export jobs (docs/data-export.md):
 *
 * | Job                 | When       | What                                                  |
 * |---------------------|------------|-------------------------------------------------------|
 * | `data-export`       | every 2 s  | builds pending exports, oldest first                  |
 * | `data-export-purge` | every 10 min | deletes exports past `expires_at` (24 h retention)  |
 */
import type { Database } from '../../shared/db/index.js';
import { buildPendingExports, purgeExpiredExports, type ExportNotifier } from '../../shared/services/data-export.js';
import type { JobSpec } from './scheduler.js';

export const DATA_EXPORT_JOB = 'data-export';
export const DATA_EXPORT_PURGE_JOB = 'data-export-purge';

/** `notify`: the outbox that tells each user their export is ready (the daemon always passes it). */
export function dataExportJob(db: Database, notify?: ExportNotifier): JobSpec {
  return {
    name: DATA_EXPORT_JOB,
    schedule: '*/2 * * * * *',
    // Renewed by the scheduler's heartbeat while a large export is being built.
    leaseMs: 60_000,
    logLevel: 'debug',
    run: async (signal) => {
      await buildPendingExports(db, signal, 20, notify);
    },
  };
}

/** Deletes exports past their retention; returns how many. */
export function purgeDataExports(db: Database, signal?: AbortSignal, now = Date.now()): Promise<number> {
  return purgeExpiredExports(db, signal, now);
}

export function dataExportPurgeJob(db: Database): JobSpec {
  return {
    name: DATA_EXPORT_PURGE_JOB,
    schedule: '53 */10 * * * *',
    leaseMs: 5 * 60_000,
    run: async (signal) => {
      await purgeDataExports(db, signal);
    },
  };
}
