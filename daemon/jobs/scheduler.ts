/**
 * Background jobs: a cron expression (node-cron's syntax and matcher) decides when, a row in
 * `job_leases` decides who. Several daemons
 * may share one database; before each run a daemon takes the job's lease with a one-winner
 * conditional UPDATE, so a leased job runs on one daemon at a time. A holder that dies keeps
 * the lease only until `lease_until`; a holder that runs long renews it (heartbeat) and
 * stops (its AbortSignal fires) if it finds the lease taken.
 *
 * Jobs registered with `lease: false` run on every daemon; they must claim their own rows
 * (the outbox deliverer does, row by row).
 *
 * Every lease statement (shared/repositories/jobs.ts, through shared/services/job-leases.ts)
 * runs on its own (autocommit), never inside a transaction held across an await: see the
 * `jobs` DataSource role in shared/db/data-source.ts.
 *
 * One timer serves every job: it sleeps until the earliest next slot of any job, starts the
 * jobs due then, and sleeps again. node-cron's own tasks each tick every second on a timer of
 * their own whether or not anything is due (a sixteenth of the work multiplied by sixteen jobs,
 * measured at 3 % of the event loop under login load); here only node-cron's matcher is used.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { createTask, validate, type ScheduledTask } from 'node-cron';
import type { Logger } from 'pino';
import type { Database } from '../../shared/db/index.js';
import { JobLeases } from '../../shared/services/job-leases.js';
import type { JobObserver } from '../../shared/metrics.js';

export type JobSpec = {
  /** Unique; the `job_leases` key (at most 64 characters: letters, digits, `.`, `_`, `-`). */
  name: string;
  /** Cron expression; a sixth leading field gives seconds (`*\/2 * * * * *` = every 2 s). */
  schedule: string;
  /** The work. Return when `signal` aborts (shutdown, or the lease was lost). */
  run(signal: AbortSignal): Promise<void>;
  /** Level of the per-run log line; a job that runs every few seconds uses `debug`. Failures always log at `error`. */
  logLevel?: 'info' | 'debug';
} &
  /** Leased (the default): one daemon at a time. `leaseMs` bounds how long a crashed holder blocks the others. */
  (
    | { lease?: true; leaseMs: number }
    /** Not leased: runs on every daemon; it must claim its own work one-winner. */
    | { lease: false; leaseMs?: undefined }
  );

export type RunOutcome = 'ok' | 'error' | 'aborted' | 'skipped';

interface JobState {
  spec: JobSpec;
  /** The expression's matcher (a node-cron task never started: no timer of its own). */
  matcher?: ScheduledTask;
  /** The next slot (ms epoch) the one timer starts this job at. */
  nextAt?: number;
  /** The run in progress, if any: a job is never started again while it runs. */
  running?: Promise<void>;
  /** A trigger arrived during the run: run once more right after it. */
  again: boolean;
  controller?: AbortController;
  heartbeat?: { stop(): void };
  /** Whether the `job_leases` row is known to exist (then no insert is attempted). */
  rowExists: boolean;
  /**
   * The earliest schedule slot (ms epoch) not yet served by a run: set by a tick, kept while a
   * run in progress makes ticks pass, cleared when a run starts (iam_job_lag_seconds).
   */
  dueSince?: number;
}

const NAME = /^[A-Za-z0-9._-]{1,64}$/;
const MAX_SLEEP_MS = 3_600_000;
const MAX_ERROR_CHARS = 1000;

/** `host:pid:random`: unique per process, and readable in `job_leases.holder` for an operator. */
export function newHolderId(): string {
  return `${hostname().slice(0, 64)}:${process.pid}:${randomBytes(6).toString('base64url')}`;
}

export class Scheduler {
  readonly holder: string;
  private readonly jobs = new Map<string, JobState>();
  private readonly log: Logger;
  private readonly leases: JobLeases;
  private started = false;
  private stopping = false;
  private readonly metrics: JobObserver | undefined;
  /** The one timer, armed for the earliest `nextAt` of all jobs. */
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param ds the jobs DataSource (its own connection; see shared/db/data-source.ts)
   * @param opts.metrics runs, durations and lag for /metrics (docs/metrics.md), when it is on
   */
  constructor(ds: Database, logger: Logger, opts: { holder?: string; metrics?: JobObserver } = {}) {
    this.leases = new JobLeases(ds);
    this.holder = opts.holder ?? newHolderId();
    this.log = logger.child({ component: 'scheduler' });
    this.metrics = opts.metrics;
  }

  register(spec: JobSpec): void {
    if (!NAME.test(spec.name)) throw new Error(`job name "${spec.name}" must be 1-64 letters, digits, '.', '_' or '-'`);
    if (this.jobs.has(spec.name)) throw new Error(`job ${spec.name} is already registered`);
    if (!validate(spec.schedule)) throw new Error(`job ${spec.name}: invalid cron expression "${spec.schedule}"`);
    if (spec.lease !== false && !(Number.isInteger(spec.leaseMs) && spec.leaseMs >= 1000)) {
      throw new Error(`job ${spec.name}: leaseMs must be a whole number of milliseconds, at least 1000`);
    }
    const state: JobState = { spec, again: false, rowExists: false };
    this.jobs.set(spec.name, state);
    if (this.started && !this.stopping) this.schedule(state);
  }

  start(): void {
    if (this.started || this.stopping) return;
    this.started = true;
    for (const s of this.jobs.values()) this.schedule(s);
    this.log.info({ holder: this.holder, jobs: [...this.jobs.keys()] }, 'scheduler started');
  }

  /**
   * Runs a job now, outside its schedule (the outbox kick uses this). If it is running, it runs
   * once more when the current run ends. Resolves when that run has finished.
   */
  trigger(name: string): Promise<void> {
    const s = this.jobs.get(name);
    if (!s) throw new Error(`no job named ${name}`);
    return this.runSoon(s, true);
  }

  /**
   * Stops scheduling, aborts running jobs' signals and waits for them up to `timeoutMs`, then
   * releases every lease this process holds. main.ts calls it on SIGTERM before closing the
   * database.
   */
  async stop(timeoutMs = 5_000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const s of this.jobs.values()) {
      await s.matcher?.destroy();
      s.matcher = undefined;
      s.nextAt = undefined;
      s.controller?.abort(new Error('scheduler stopping'));
    }
    const running = [...this.jobs.values()].map((s) => s.running).filter((p): p is Promise<void> => !!p);
    if (running.length) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        Promise.allSettled(running).then(() => false),
        new Promise<boolean>((r) => {
          timer = setTimeout(() => r(true), timeoutMs);
        }),
      ]);
      clearTimeout(timer);
      if (timedOut)
        this.log.warn(
          { timeoutMs },
          'jobs still running at shutdown; their leases are released and they are abandoned',
        );
    }
    for (const s of this.jobs.values()) s.heartbeat?.stop();
    // Normally each run released its own lease; this also covers one abandoned above.
    try {
      await this.leases.releaseAll(this.holder, Date.now(), 2_000);
    } catch (e) {
      this.log.warn({ err: e }, 'could not release job leases; they expire by themselves');
    }
    this.log.info('scheduler stopped');
  }

  private schedule(s: JobState): void {
    s.matcher = createTask(s.spec.schedule, () => undefined, { name: s.spec.name });
    s.nextAt = s.matcher.getNextRuns(1)[0].getTime();
    this.arm();
  }

  /** Sets the one timer for the earliest next slot. */
  private arm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopping) return;
    let soonest = Infinity;
    for (const s of this.jobs.values()) if (s.nextAt !== undefined && s.nextAt < soonest) soonest = s.nextAt;
    if (soonest === Infinity) return;
    // Capped: setTimeout takes at most 2^31 - 1 ms (a yearly job would fire at once); a tick
    // with nothing due only arms it again.
    this.timer = setTimeout(this.tick, Math.min(Math.max(0, soonest - Date.now()), MAX_SLEEP_MS));
  }

  /**
   * Starts every job whose slot has come, then arms the timer for the next one (a timer that
   * fired a millisecond early by the wall clock is simply armed again). A job still running
   * when its slot comes is skipped for that slot (runSoon).
   */
  private readonly tick = (): void => {
    const now = Date.now();
    for (const s of this.jobs.values()) {
      if (s.nextAt === undefined || s.nextAt > now || !s.matcher) continue;
      const slot = s.nextAt;
      s.nextAt = s.matcher.getNextRuns(1)[0].getTime();
      if (s.nextAt <= slot) s.nextAt = slot + 1_000; // never the same slot twice
      void this.runSoon(s, false, slot);
    }
    this.arm();
  };

  private runSoon(s: JobState, triggered: boolean, slot?: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (slot !== undefined) s.dueSince ??= slot;
    if (s.running) {
      // Not started twice: a scheduled tick is dropped, a trigger is remembered.
      if (triggered) s.again = true;
      else this.log.debug({ job: s.spec.name }, 'job still running; tick skipped');
      return s.running;
    }
    s.running = (async () => {
      try {
        do {
          s.again = false;
          await this.runOnce(s);
        } while (s.again && !this.stopping);
      } finally {
        s.running = undefined;
      }
    })();
    return s.running;
  }

  /** One run: lease (if leased) → run with heartbeat → record and release → log. Never throws. */
  private async runOnce(s: JobState): Promise<RunOutcome> {
    const { spec } = s;
    const leased = spec.lease !== false;
    const startedAt = Date.now();
    if (s.dueSince !== undefined) {
      // A run now serves every slot that passed since the earliest unserved one.
      this.metrics?.jobLag(spec.name, Math.max(0, startedAt - s.dueSince) / 1000);
      s.dueSince = undefined;
    }
    if (leased) {
      let won: boolean;
      try {
        won = await this.acquire(s, startedAt);
      } catch (e) {
        this.log.warn({ job: spec.name, err: e }, 'could not take the job lease; skipping this run');
        this.metrics?.jobRun(spec.name, 'skipped', undefined);
        return 'skipped';
      }
      if (!won) {
        this.log.debug({ job: spec.name }, 'job lease held by another daemon; skipping this run');
        this.metrics?.jobRun(spec.name, 'skipped', undefined);
        return 'skipped';
      }
    }
    const controller = new AbortController();
    s.controller = controller;
    // stop() came while this run was taking its lease: start it already aborted.
    if (this.stopping) controller.abort(new Error('scheduler stopping'));
    const heartbeat = leased ? this.startHeartbeat(spec.name, spec.leaseMs, controller) : undefined;
    s.heartbeat = heartbeat;
    let outcome: RunOutcome = 'ok';
    let error: unknown;
    try {
      await spec.run(controller.signal);
      if (controller.signal.aborted) outcome = 'aborted';
    } catch (e) {
      outcome = controller.signal.aborted ? 'aborted' : 'error';
      error = e;
    } finally {
      heartbeat?.stop();
      s.heartbeat = undefined;
      s.controller = undefined;
    }
    const finishedAt = Date.now();
    this.metrics?.jobRun(spec.name, outcome, (finishedAt - startedAt) / 1000);
    if (leased) await this.release(spec.name, finishedAt, outcome, error);
    const line = { job: spec.name, durationMs: finishedAt - startedAt, outcome, ...(error ? { err: error } : {}) };
    if (outcome === 'error') this.log.error(line, 'job failed');
    else this.log[spec.logLevel ?? 'info'](line, 'job finished');
    return outcome;
  }

  /**
   * One winner: the UPDATE matches only a free, expired or already-ours lease, and the
   * database serialises concurrent UPDATEs of one row, so exactly one daemon sees a row
   * affected. The first run ever inserts the row; a concurrent insert by another daemon fails
   * on the primary key, and that daemon has won this round.
   */
  private async acquire(s: JobState, now: number): Promise<boolean> {
    const name = s.spec.name;
    const until = now + s.spec.leaseMs!;
    if (await this.leases.take(name, this.holder, until, now, 1_000)) {
      s.rowExists = true;
      return true;
    }
    if (s.rowExists) return false;
    const created = await this.leases.create(name, this.holder, until, now, 1_000);
    s.rowExists = true;
    return created;
  }

  /** Renews the lease a third of the way through it; a lease found taken aborts the run. */
  private startHeartbeat(name: string, leaseMs: number, controller: AbortController): { stop(): void } {
    const every = Math.max(250, Math.floor(leaseMs / 3));
    let stopped = false;
    const timer = setInterval(() => {
      void this.leases.renew(name, this.holder, Date.now() + leaseMs, every).then(
        (renewed) => {
          // A renewal that lands after the run released the lease matches nothing: not a loss.
          if (!renewed && !stopped && !controller.signal.aborted) {
            this.log.warn({ job: name }, 'job lease lost to another daemon; aborting this run');
            controller.abort(new Error('lease lost'));
          }
        },
        (e: unknown) => {
          if (!stopped) this.log.warn({ job: name, err: e }, 'could not renew the job lease');
        },
      );
    }, every);
    timer.unref();
    return {
      stop: () => {
        stopped = true;
        clearInterval(timer);
      },
    };
  }

  private async release(name: string, now: number, outcome: RunOutcome, error: unknown): Promise<void> {
    const message = error === undefined ? null : String((error as Error)?.message ?? error).slice(0, MAX_ERROR_CHARS);
    try {
      const released = await this.leases.release(name, this.holder, { now, status: outcome, error: message }, 5_000);
      if (!released) this.log.warn({ job: name }, 'job lease was taken over before the run finished');
    } catch (e) {
      this.log.warn({ job: name, err: e }, 'could not release the job lease; it expires by itself');
    }
  }
}
