/**
 * IAM_WORKERS > 1: a supervisor forks worker processes that share the listening socket
 * (daemon/main.ts). Each worker serves requests; a worker that dies is replaced; SIGTERM to
 * the supervisor drains and stops every worker.
 */
import test from 'ava';
import { testDatabase } from '../helpers/db.js';
import { startDaemon, healthz } from '../helpers/daemon.js';
import { seed } from '../helpers/seed.js';
import { until } from '../helpers/poll.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('two workers share the port, a killed worker is replaced, and SIGTERM stops them all', async (t) => {
  const db = await testDatabase(t);
  await seed(db.url, db.dir);
  const d = await startDaemon(db.url, db.dir, { IAM_WORKERS: '2' });
  t.teardown(() => d.stop('SIGKILL'));

  const listening = () => d.logs.filter((l) => l.msg === 'listening' && typeof l.worker === 'number');
  t.true(await until(() => listening().length === 2, { timeoutMs: 20_000, what: () => d.output() }));
  const pids = listening().map((l) => Number(l.pid));
  t.is(new Set(pids).size, 2, 'two worker processes');
  t.deepEqual(
    listening()
      .map((l) => l.worker)
      .sort(),
    [1, 2],
  );
  t.is(new Set(listening().map((l) => l.port)).size, 1, 'one shared port');

  // Connections are spread over the workers: each logs the requests it served.
  for (let i = 0; i < 20; i++) t.is(await healthz(d.url), 200);
  const served = () => new Set(d.logs.filter((l) => l.msg === 'request' && l.path === '/healthz').map((l) => l.pid));
  t.true(
    await until(() => served().size === 2, {
      timeoutMs: 5_000,
      what: () => `requests served by both workers: ${[...served()].join(', ')}`,
    }),
  );

  // A worker that dies is replaced, and the service keeps answering meanwhile.
  // (A connection handed to the dying worker is lost; a client retries it, as this one does.)
  process.kill(pids[0], 'SIGKILL');
  t.is(await healthz(d.url).catch(() => healthz(d.url)), 200);
  t.true(
    await until(() => d.logs.some((l) => l.msg === 'worker exited; starting a new one' && l.pid === pids[0]), {
      timeoutMs: 5_000,
    }),
  );
  t.true(await until(() => listening().length === 3, { timeoutMs: 20_000, what: 'a new worker started' }));
  const replacement = Number(listening()[2].pid);
  t.false(pids.includes(replacement));

  // SIGTERM to the supervisor: every worker drains and stops, then the supervisor exits 0.
  const code = await d.stop('SIGTERM');
  t.is(code, 0, d.output());
  t.true(
    d.logs.filter((l) => l.msg === 'stopped' && typeof l.worker === 'number').length >= 2,
    `each running worker logged its stop:\n${d.output()}`,
  );
  t.false(alive(pids[1]));
  t.false(alive(replacement));
});
