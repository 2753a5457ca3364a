/**
 * In-process pieces for job and outbox tests: a migrated database with its `jobs` connection,
 * a logger that keeps its lines, and polling that awaits.
 */
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { connect, createDataSource } from '../../shared/db/data-source.js';
import { all } from '../../shared/db/sql.js';
import { openServices } from './seed.js';

/** A logger whose JSON lines land in `lines` (and nowhere else). */
/** Log lines are any JSON; tests read their fields. */
export function memoryLogger(level: pino.Level = 'debug'): { logger: Logger; lines: Record<string, any>[] } {
  const lines: Record<string, any>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { logger: pino({ level }, stream), lines };
}

/** The app services plus a second, `jobs`-role connection to the same database. */
export async function openWithJobs(databaseUrl: string, dataDir: string) {
  const app = await openServices(databaseUrl, dataDir);
  const jobsDs = await connect(createDataSource(app.config.database, 'jobs'));
  return {
    ...app,
    jobsDs,
    close: async () => {
      await jobsDs.destroy();
      await app.ds.destroy();
    },
  };
}

/** Another `jobs` connection, standing for another daemon on the same database. */
export function openJobsDs(config: { database: Parameters<typeof createDataSource>[0] }): Promise<DataSource> {
  return connect(createDataSource(config.database, 'jobs'));
}

export interface OutboxRow {
  id: string;
  tenant_id: string | null;
  status: string;
  attempts: number;
  next_attempt_at: number;
  claimed_by: string | null;
  claimed_until: number | null;
  last_error: string | null;
  last_error_code: string | null;
  delivered_via: string | null;
  payload_sealed: string;
  updated_at: number;
}

export async function outboxRow(ds: DataSource, id: string): Promise<OutboxRow | undefined> {
  const [r] = await all<OutboxRow>(ds, 'SELECT * FROM outbox WHERE id = ?', [id]);
  if (!r) return undefined;
  // mysql2 may hand BIGINT back as strings.
  return {
    ...r,
    attempts: Number(r.attempts),
    next_attempt_at: Number(r.next_attempt_at),
    updated_at: Number(r.updated_at),
    claimed_until: r.claimed_until === null ? null : Number(r.claimed_until),
  };
}

/**
 * A fixed wait, only where no condition can be awaited: a job's simulated work, a clock to pass,
 * or a window in which something must NOT happen. To wait for something, use until() (poll.ts).
 */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
