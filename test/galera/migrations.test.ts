/**
 * Two daemons started at the same moment on an empty database, on two different Galera nodes,
 * run the migrations exactly once: one takes the migration lock (a replicated row; GET_LOCK is
 * local to a node) and applies them, the other waits and finds nothing left to apply.
 */
import test from 'ava';
import { migrations } from '../../migrations/index.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { galeraDatabase, nodeRows } from '../helpers/galera.js';

test('two daemons on two nodes, started at once on an empty database, migrate exactly once', async (t) => {
  t.timeout(180_000);
  const db = await galeraDatabase(t);
  // One service, started at once: the issuer is a name, since neither port is known before.
  const env = { IAM_ISSUER: 'https://iam.galera.test', IAM_LOG_LEVEL: 'debug' };
  const daemons: Daemon[] = [];
  t.teardown(() => Promise.all(daemons.map((d) => d.stop())));
  const started = await Promise.allSettled([
    startDaemon(db.urls[0], db.dir, env, [], { startTimeoutMs: 150_000 }),
    startDaemon(db.urls[1], db.dir, env, [], { startTimeoutMs: 150_000 }),
  ]);
  for (const s of started) if (s.status === 'fulfilled') daemons.push(s.value);
  t.deepEqual(
    started.map((s) => s.status),
    ['fulfilled', 'fulfilled'],
    `both daemons started: ${started.map((s) => (s.status === 'rejected' ? String(s.reason) : 'ok')).join('\n')}`,
  );

  // Each migration is recorded once, as read on the third node.
  const rows = await nodeRows<{ name: string; n: number }>(
    db.urls[2],
    'SELECT name, COUNT(*) AS n FROM migrations GROUP BY name',
  );
  t.is(rows.length, migrations.length, 'every migration is recorded');
  t.true(
    rows.every((r) => Number(r.n) === 1),
    `each exactly once: ${JSON.stringify(rows.filter((r) => Number(r.n) !== 1))}`,
  );

  // One daemon applied them all; the other applied none.
  const applied = daemons.map((d) => {
    const line = d.logs.find((l) => l.msg === 'migrations applied');
    return Array.isArray(line?.migrations) ? line.migrations.length : 0;
  });
  t.deepEqual(
    [...applied].sort((a, b) => a - b),
    [0, migrations.length],
    `one daemon applied every migration, the other none: ${applied.join(', ')}`,
  );
  const waited = daemons.map((d) =>
    d.logs.some((l) => l.msg === 'waiting for another process to finish the migrations'),
  );
  t.log(`applied per daemon: ${applied.join(', ')}; waited for the lock: ${waited.join(', ')}`);

  // The lock is released, and both daemons serve.
  const lock = await nodeRows<{ n: number }>(db.urls[1], 'SELECT COUNT(*) AS n FROM iam_migration_lock');
  t.is(Number(lock[0].n), 0, 'the migration lock row is gone');
  for (const d of daemons) t.is((await fetch(`${d.url}/readyz`)).status, 200);
});
