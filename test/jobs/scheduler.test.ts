/**
 * The scheduler's database lease: with several daemons (here: several DataSources on one
 * database) a leased job runs on one of them at a time; a dead holder's lease is taken over
 * once it expires; runs are recorded in job_leases and logged; stop() is bounded.
 * Also runs against MariaDB when IAM_TEST_DATABASE_URL points at it (test/lanes/mariadb.sh).
 */
import test from 'ava';
import { Scheduler, type JobSpec } from '../../daemon/jobs/scheduler.js';
import { all } from '../../shared/db/sql.js';
import { testDatabase } from '../helpers/db.js';
import { memoryLogger, openJobsDs, sleep } from '../helpers/jobs.js';
import { openServices } from '../helpers/seed.js';
import { until } from '../helpers/poll.js';

/** A schedule that never fires during a test: runs come from trigger() only. */
const NEVER = '0 0 0 1 1 *';

interface LeaseRow {
  holder: string | null;
  lease_until: number;
  last_started_at: number | null;
  last_finished_at: number | null;
  last_status: string | null;
  last_error: string | null;
}
async function lease(ds: import('typeorm').DataSource, name: string): Promise<LeaseRow | undefined> {
  const [r] = await all<LeaseRow>(
    ds,
    'SELECT holder, lease_until, last_started_at, last_finished_at, last_status, last_error FROM job_leases WHERE ' +
      'name = ?',
    [name],
  );
  return (
    r && {
      ...r,
      lease_until: Number(r.lease_until),
      last_started_at: r.last_started_at === null ? null : Number(r.last_started_at),
      last_finished_at: r.last_finished_at === null ? null : Number(r.last_finished_at),
    }
  );
}

async function setup(t: import('ava').ExecutionContext, daemons: number) {
  const db = await testDatabase(t);
  const app = await openServices(db.url, db.dir);
  const { logger, lines } = memoryLogger();
  const schedulers: Scheduler[] = [];
  for (let i = 0; i < daemons; i++) {
    const ds = await openJobsDs(app.config);
    const s = new Scheduler(ds, logger, { holder: `test-daemon-${i}:${process.pid}` });
    schedulers.push(s);
    t.teardown(async () => {
      await s.stop(1000);
      await ds.destroy();
    });
  }
  t.teardown(() => app.ds.destroy());
  return { ds: app.ds, schedulers, lines };
}

/** A job that records how many of its runs overlap, across every scheduler it is registered with. */
function overlapProbe(name: string, runMs: number, leaseMs: number) {
  const probe = { active: 0, maxActive: 0, runs: [] as string[] };
  const spec = (who: string): JobSpec => ({
    name,
    schedule: '* * * * * *',
    leaseMs,
    logLevel: 'debug',
    run: async () => {
      probe.active++;
      probe.maxActive = Math.max(probe.maxActive, probe.active);
      probe.runs.push(who);
      await sleep(runMs);
      probe.active--;
    },
  });
  return { probe, spec };
}

test('two daemons on one database never run a leased job at the same time', async (t) => {
  const {
    ds,
    schedulers: [a, b],
  } = await setup(t, 2);
  // Each run outlasts the 1 s tick, so without the lease the other daemon would start one meanwhile.
  const { probe, spec } = overlapProbe('contended', 1200, 10_000);
  a.register(spec('a'));
  b.register(spec('b'));
  a.start();
  b.start();
  t.true(await until(() => probe.runs.length >= 4, { timeoutMs: 30_000, what: () => `runs: ${probe.runs.join(',')}` }));
  await Promise.all([a.stop(), b.stop()]);
  t.is(probe.maxActive, 1, 'a leased job ran on two daemons at once');
  const row = await lease(ds, 'contended');
  t.is(row?.holder, null, 'stop() released the lease');
  // The last run may have been cut short by stop() (its signal aborted).
  t.true(['ok', 'aborted'].includes(row!.last_status!));
  t.true(row!.last_finished_at! >= row!.last_started_at!);
});

test('a run longer than its lease keeps it by renewing it, so no other daemon starts meanwhile', async (t) => {
  const {
    schedulers: [a, b],
  } = await setup(t, 2);
  // 1 s lease, 2.5 s runs: only the heartbeat keeps the other daemon out.
  const { probe, spec } = overlapProbe('long-runner', 2500, 1000);
  a.register(spec('a'));
  b.register(spec('b'));
  a.start();
  b.start();
  t.true(await until(() => probe.runs.length >= 3, { timeoutMs: 40_000, what: () => `runs: ${probe.runs.join(',')}` }));
  await Promise.all([a.stop(), b.stop()]);
  t.is(probe.maxActive, 1);
});

test('a lease left by a dead holder is respected until it expires, then taken over', async (t) => {
  const {
    ds,
    schedulers: [s],
  } = await setup(t, 1);
  // A daemon that took the lease and died: its row stays, with lease_until in the near future.
  const deadUntil = Date.now() + 2500;
  await ds.query(
    'INSERT INTO job_leases (name, holder, lease_until, last_started_at, last_finished_at, last_status, ' +
      'last_error) VALUES (?, ?, ?, ?, NULL, NULL, NULL)',
    ['orphaned', 'dead-host:4242:gone', deadUntil, Date.now() - 1000],
  );
  const started: number[] = [];
  s.register({
    name: 'orphaned',
    schedule: '* * * * * *',
    leaseMs: 5000,
    run: () => {
      started.push(Date.now());
      return Promise.resolve();
    },
  });
  s.start();
  t.true(await until(() => started.length >= 1, { timeoutMs: 20_000, what: 'the expired lease was never taken over' }));
  t.true(started[0] >= deadUntil, "ran while the dead holder's lease was still valid");
  t.true(await until(async () => (await lease(ds, 'orphaned'))?.last_status === 'ok'));
  const row = await lease(ds, 'orphaned');
  t.not(row?.holder, 'dead-host:4242:gone');
  t.true(row!.last_started_at! >= deadUntil);
});

test('concurrent first runs: the lease row is created once and exactly one daemon runs', async (t) => {
  const { ds, schedulers } = await setup(t, 3);
  let runs = 0;
  for (const s of schedulers) {
    // Long enough that the winner still holds the lease when the others try.
    s.register({
      name: 'first-ever',
      schedule: NEVER,
      leaseMs: 10_000,
      run: async () => {
        runs++;
        await sleep(500);
      },
    });
  }
  await Promise.all(schedulers.map((s) => s.trigger('first-ever')));
  t.is(runs, 1);
  t.is(
    Number((await all<{ n: number }>(ds, 'SELECT COUNT(*) AS n FROM job_leases WHERE name = ?', ['first-ever']))[0].n),
    1,
  );
});

test('a job still running is not started again; a trigger during a run runs it once more afterwards', async (t) => {
  const {
    schedulers: [s],
  } = await setup(t, 1);
  let runs = 0;
  let active = 0;
  let maxActive = 0;
  s.register({
    name: 'local',
    schedule: NEVER,
    lease: false,
    run: async () => {
      runs++;
      active++;
      maxActive = Math.max(maxActive, active);
      await sleep(300);
      active--;
    },
  });
  await Promise.all([s.trigger('local'), s.trigger('local'), s.trigger('local'), s.trigger('local')]);
  t.is(maxActive, 1);
  t.is(runs, 2, 'the triggers that arrived during the first run coalesce into one more run');

  // Cron ticks are dropped while a run is in progress.
  let cronRuns = 0;
  let cronActive = 0;
  let cronMax = 0;
  s.register({
    name: 'slow-tick',
    schedule: '* * * * * *',
    lease: false,
    run: async () => {
      cronRuns++;
      cronActive++;
      cronMax = Math.max(cronMax, cronActive);
      await sleep(2200);
      cronActive--;
    },
  });
  s.start();
  t.true(await until(() => cronRuns >= 2, { timeoutMs: 20_000 }));
  t.is(cronMax, 1);
});

test('each run is recorded in job_leases and logged with its name, duration and outcome; a failure too', async (t) => {
  const {
    ds,
    schedulers: [s],
    lines,
  } = await setup(t, 1);
  s.register({ name: 'fine', schedule: NEVER, leaseMs: 5000, run: async () => {} });
  s.register({
    name: 'broken',
    schedule: NEVER,
    leaseMs: 5000,
    run: () => Promise.reject(new Error('boom: the job failed')),
  });
  await s.trigger('fine');
  await s.trigger('broken');
  const fine = await lease(ds, 'fine');
  t.is(fine?.last_status, 'ok');
  t.is(fine?.holder, null);
  t.is(fine?.last_error, null);
  const broken = await lease(ds, 'broken');
  t.is(broken?.last_status, 'error');
  t.is(broken?.last_error, 'boom: the job failed');
  t.is(broken?.holder, null, 'a failed run releases its lease too');
  const ok = lines.find((l) => l.job === 'fine' && l.msg === 'job finished');
  t.is(ok?.outcome, 'ok');
  t.is(typeof ok?.durationMs, 'number');
  const failed = lines.find((l) => l.job === 'broken' && l.msg === 'job failed');
  t.is(failed?.outcome, 'error');
  t.is(failed?.level, 50);
  t.regex(String(failed?.err?.message), /boom/);
});

test('stop() aborts running jobs, waits for them, and releases their leases; it is bounded', async (t) => {
  const {
    ds,
    schedulers: [s],
  } = await setup(t, 1);
  let sawAbort = false;
  let running = false;
  s.register({
    name: 'cooperative',
    schedule: NEVER,
    leaseMs: 60_000,
    run: (signal) =>
      new Promise<void>((resolve) => {
        running = true;
        signal.addEventListener('abort', () => {
          sawAbort = true;
          setTimeout(resolve, 100);
        });
      }),
  });
  // Never finishes: stop() must not wait for it forever.
  s.register({ name: 'stubborn', schedule: NEVER, leaseMs: 60_000, run: () => new Promise<void>(() => {}) });
  void s.trigger('cooperative');
  void s.trigger('stubborn');
  t.true(
    await until(
      async () =>
        running && (await lease(ds, 'stubborn'))?.holder !== null && (await lease(ds, 'stubborn')) !== undefined,
    ),
  );
  await s.stop(1000);
  t.true(sawAbort);
  const coop = await lease(ds, 'cooperative');
  t.is(coop?.holder, null);
  t.is(coop?.last_status, 'aborted');
  t.is((await lease(ds, 'stubborn'))?.holder, null, "an abandoned job's lease is released too");
  // Stopped: triggers and ticks no longer start anything.
  let after = 0;
  s.register({
    name: 'late',
    schedule: '* * * * * *',
    lease: false,
    run: () => {
      after++;
      return Promise.resolve();
    },
  });
  await s.trigger('late');
  t.is(after, 0);
});

test('register() refuses bad names, bad cron expressions and missing lease times', (t) => {
  const s = new Scheduler({} as never, memoryLogger().logger, { holder: 'x' });
  t.throws(() => s.register({ name: 'bad name!', schedule: '* * * * *', leaseMs: 5000, run: async () => {} }), {
    message: /name/,
  });
  t.throws(() => s.register({ name: 'ok', schedule: 'every minute', leaseMs: 5000, run: async () => {} }), {
    message: /cron/,
  });
  t.throws(() => s.register({ name: 'ok', schedule: '* * * * *', leaseMs: 10, run: async () => {} }), {
    message: /leaseMs/,
  });
  s.register({ name: 'ok', schedule: '* * * * *', leaseMs: 5000, run: async () => {} });
  t.throws(() => s.register({ name: 'ok', schedule: '* * * * *', lease: false, run: async () => {} }), {
    message: /already/,
  });
});

test('one timer serves every job: each runs at its own slots, and idle jobs add no timers', async (t) => {
  const { schedulers } = await setup(t, 1);
  const [s] = schedulers;
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const runs = { everySecond: 0, everyOther: 0 };
  s.register({
    name: 't.every-second',
    schedule: '* * * * * *',
    lease: false,
    run: () => Promise.resolve(void runs.everySecond++),
  });
  s.register({
    name: 't.every-other',
    schedule: '*/2 * * * * *',
    lease: false,
    run: () => Promise.resolve(void runs.everyOther++),
  });
  for (let i = 0; i < 8; i++)
    s.register({ name: `t.idle-${i}`, schedule: NEVER, leaseMs: 5_000, run: () => Promise.resolve() });
  const before = timers();
  s.start();
  t.is(timers() - before, 1, 'ten jobs, one timer');
  await until(() => runs.everyOther >= 2, { timeoutMs: 10_000 });
  // Each at its own pace: the every-second job ran about twice as often.
  t.true(runs.everySecond >= 3, `every second: ${runs.everySecond} runs`);
  t.true(runs.everySecond > runs.everyOther, `every other second: ${runs.everyOther} runs`);
});
