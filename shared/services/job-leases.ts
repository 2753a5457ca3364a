/**
 * Job leases for the scheduler (daemon/jobs/scheduler.ts): which daemon runs a leased job now,
 * and until when. Each call is one autocommit statement; contention (SQLite's writer lock,
 * InnoDB deadlocks) is retried here for up to `retryMs`, so a caller sees either an answer or
 * a real failure.
 */
import { isUniqueViolation, retryTransient, type Database } from '../db/index.js';
import { JobLeaseRepository } from '../repositories/index.js';

export class JobLeases {
  private readonly repo: JobLeaseRepository;

  /** @param db the jobs DataSource (its own connection; see shared/db/data-source.ts) */
  constructor(db: Database) {
    this.repo = new JobLeaseRepository(db);
  }

  /** Takes the lease if it is free, expired or already `holder`'s (one winner); false if the row is missing too. */
  async take(name: string, holder: string, until: number, now: number, retryMs: number): Promise<boolean> {
    return (await retryTransient(() => this.repo.take(name, holder, until, now), retryMs)) === 1;
  }

  /**
   * The job's first run on this database: creates its row, taken by `holder`. False when
   * another daemon created it at the same moment (that daemon won this round).
   */
  async create(name: string, holder: string, until: number, now: number, retryMs: number): Promise<boolean> {
    try {
      await retryTransient(() => this.repo.insertTaken(name, holder, until, now), retryMs);
      return true;
    } catch (e) {
      if (isUniqueViolation(e)) return false;
      throw e;
    }
  }

  /** Extends `holder`'s lease; false when another daemon has taken it over. */
  async renew(name: string, holder: string, until: number, retryMs: number): Promise<boolean> {
    return (await retryTransient(() => this.repo.renew(name, holder, until), retryMs)) === 1;
  }

  /** Gives the lease up and records the run; false when it had been taken over before. */
  async release(
    name: string,
    holder: string,
    run: { now: number; status: string; error: string | null },
    retryMs: number,
  ): Promise<boolean> {
    return (await retryTransient(() => this.repo.release(name, holder, run.now, run.status, run.error), retryMs)) === 1;
  }

  /** Gives up every lease `holder` has (a stopping daemon). */
  async releaseAll(holder: string, now: number, retryMs: number): Promise<void> {
    await retryTransient(() => this.repo.releaseAll(holder, now), retryMs);
  }
}
