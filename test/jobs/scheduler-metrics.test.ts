/**
 * What the scheduler reports to the metrics (docs/metrics.md, iam_job_*): every run's outcome
 * (ok, error, skipped when another daemon holds the lease) with its duration, and the lag of a
 * scheduled run against the earliest schedule slot it serves, slots that passed while the
 * previous run was still going included.
 */
import test from 'ava';
import { Scheduler } from '../../daemon/jobs/scheduler.js';
import type { JobObserver, JobOutcome } from '../../shared/metrics.js';
import { testDatabase } from '../helpers/db.js';
import { memoryLogger, openJobsDs } from '../helpers/jobs.js';
import { openServices } from '../helpers/seed.js';
import { until } from '../helpers/poll.js';

/** A schedule that never fires during a test: runs come from trigger() only. */
const NEVER = '0 0 0 1 1 *';

class Recorder implements JobObserver {
  runs: { job: string; outcome: JobOutcome; seconds: number | undefined }[] = [];
  lags: { job: string; seconds: number }[] = [];
  jobRun(job: string, outcome: JobOutcome, seconds: number | undefined): void {
    this.runs.push({ job, outcome, seconds });
  }
  jobLag(job: string, seconds: number): void {
    this.lags.push({ job, seconds });
  }
}

async function setup(t: import('ava').ExecutionContext, daemons: number) {
  const db = await testDatabase(t);
  const app = await openServices(db.url, db.dir);
  const { logger } = memoryLogger();
  const out: { scheduler: Scheduler; metrics: Recorder }[] = [];
  for (let i = 0; i < daemons; i++) {
    const ds = await openJobsDs(app.config);
    const metrics = new Recorder();
    const scheduler = new Scheduler(ds, logger, { holder: `metrics-daemon-${i}:${process.pid}`, metrics });
    out.push({ scheduler, metrics });
    t.teardown(async () => {
      await scheduler.stop(1000);
      await ds.destroy();
    });
  }
  t.teardown(() => app.ds.destroy());
  return out;
}

test('runs are reported with their outcome: ok, error, and skipped while another daemon holds the lease', async (t) => {
  const [a, b] = await setup(t, 2);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let started = false;
  for (const { scheduler } of [a, b]) {
    scheduler.register({ name: 'fine', schedule: NEVER, leaseMs: 10_000, run: () => Promise.resolve() });
    scheduler.register({
      name: 'broken',
      schedule: NEVER,
      leaseMs: 10_000,
      run: () => Promise.reject(new Error('boom')),
    });
    scheduler.register({
      name: 'long',
      schedule: NEVER,
      leaseMs: 10_000,
      run: async () => {
        started = true;
        await held;
      },
    });
    scheduler.start();
  }
  await a.scheduler.trigger('fine');
  await a.scheduler.trigger('broken');
  // a holds the lease of `long` while b tries it: b's run is skipped and reported so.
  const running = a.scheduler.trigger('long');
  t.true(await until(() => started));
  await b.scheduler.trigger('long');
  release();
  await running;

  const of = (r: Recorder, job: string) => r.runs.filter((x) => x.job === job);
  t.deepEqual(
    of(a.metrics, 'fine').map((r) => r.outcome),
    ['ok'],
  );
  t.true(of(a.metrics, 'fine')[0].seconds! >= 0);
  t.deepEqual(
    of(a.metrics, 'broken').map((r) => r.outcome),
    ['error'],
  );
  t.deepEqual(of(b.metrics, 'long'), [{ job: 'long', outcome: 'skipped', seconds: undefined }]);
  t.deepEqual(
    of(a.metrics, 'long').map((r) => r.outcome),
    ['ok'],
  );
  // Triggered runs serve no schedule slot: no lag.
  t.deepEqual(a.metrics.lags, []);
  t.deepEqual(b.metrics.lags, []);
});

test('a run that outlasts its interval makes the next run late by at least one slot', async (t) => {
  const [{ scheduler, metrics }] = await setup(t, 1);
  let runs = 0;
  scheduler.register({
    name: 'slow',
    // Every second; the first run lasts past at least two slots.
    schedule: '* * * * * *',
    leaseMs: 10_000,
    run: async () => {
      runs++;
      if (runs === 1) await new Promise((r) => setTimeout(r, 2_200));
    },
  });
  scheduler.start();
  t.true(await until(() => metrics.lags.length >= 2, { timeoutMs: 20_000 }));
  // The first run starts at its own slot. A slot passed during it (it lasted 2.2 s with a slot
  // every second); the next run starts at a later slot, a whole second or more after that one.
  t.true(metrics.lags[0].seconds >= 0);
  t.true(metrics.lags[1].seconds >= 1, `lag of the run after the slow one: ${metrics.lags[1].seconds} s`);
});
