/**
 * Job leases (`job_leases`): one row per leased background job, naming the daemon that runs it
 * now and until when. Platform-level rows. Every statement is a single autocommit write, so a
 * lease is never held inside a transaction across an await (daemon/jobs/scheduler.ts).
 */
import type { Db } from '../db/index.js';
import { exec } from '../db/sql.js';

export class JobLeaseRepository {
  constructor(private readonly db: Db) {}

  /**
   * Takes the lease if it is free, expired or already ours: one winner, as the database
   * serialises concurrent UPDATEs of one row. Returns the rows changed (1 = taken).
   */
  take(name: string, holder: string, until: number, now: number): Promise<number> {
    return exec(
      this.db,
      `UPDATE job_leases SET holder = ?, lease_until = ?, last_started_at = ? WHERE name = ? AND (holder IS NULL OR
        holder = ? OR lease_until < ?)`,
      [holder, until, now, name, holder, now],
    );
  }

  /** The job's first run ever: the row, already taken. A concurrent insert fails on the primary key. */
  async insertTaken(name: string, holder: string, until: number, now: number): Promise<void> {
    await exec(
      this.db,
      `INSERT INTO job_leases (name, holder, lease_until, last_started_at, last_finished_at, last_status, last_error)
        VALUES (?, ?, ?, ?, NULL, NULL, NULL)`,
      [name, holder, until, now],
    );
  }

  /** Extends a lease this holder still has; 0 when another daemon took it over. */
  renew(name: string, holder: string, until: number): Promise<number> {
    return exec(this.db, 'UPDATE job_leases SET lease_until = ? WHERE name = ? AND holder = ?', [until, name, holder]);
  }

  /** Gives the lease up and records the run; 0 when it had been taken over before the run finished. */
  release(name: string, holder: string, now: number, status: string, error: string | null): Promise<number> {
    return exec(
      this.db,
      `UPDATE job_leases SET holder = NULL, lease_until = ?, last_finished_at = ?, last_status = ?, last_error = ?
        WHERE name = ? AND holder = ?`,
      [now, now, status, error, name, holder],
    );
  }

  /** Gives up every lease this holder has (a daemon stopping). */
  releaseAll(holder: string, now: number): Promise<number> {
    return exec(this.db, 'UPDATE job_leases SET holder = NULL, lease_until = ? WHERE holder = ?', [now, holder]);
  }
}
