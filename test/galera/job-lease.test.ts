/**
 * Job leases hold across Galera nodes: two daemons on two nodes share the scheduled jobs through
 * `job_leases` (daemon/jobs/scheduler.ts), and only one of them runs a leased job at a time.
 * Their lease UPDATEs on two nodes at the same tick conflict at certification; the loser's is
 * retried (shared/services/job-leases.ts) and then matches no row: it skips that run.
 *
 * As in test/mariadb/job-lease.test.ts, a pending data export whose row the test keeps locked
 * makes the lease holder block inside its run. Row locks are local to a Galera node, so the row
 * is locked on both daemons' nodes (two readers with FOR UPDATE on two nodes do not conflict):
 * whichever daemon wins the lease waits on its own node's lock.
 */
import test from 'ava';
import mysql from 'mysql2/promise';
import { createPendingExport } from '../../shared/services/data-export.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { connOpts, galeraDatabase, nodeRows, sleep } from '../helpers/galera.js';
import { activeTenant, openServices } from '../helpers/seed.js';
import { until } from '../helpers/poll.js';

interface LeaseRow {
  holder: string | null;
  last_status: string | null;
}

test('a leased job runs on one daemon at a time across two nodes', async (t) => {
  t.timeout(180_000);
  const db = await galeraDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.urls[0], db.dir);
  t.teardown(() => ds.destroy());
  const actor = { type: 'system' as const, id: 'test' };
  const tenant = await activeTenant(provisioning, { name: 'Lease test' }, actor);
  const user = await directory.createUser(tenant.id, { email: 'lease@example.test', name: 'Lease' }, actor);
  const exportId = await createPendingExport(ds, {
    tenantId: tenant.id,
    userId: user.id,
    sections: ['profile'],
    format: 'json',
  });

  const locks = await Promise.all(db.urls.slice(0, 2).map((u) => mysql.createConnection(connOpts(u))));
  t.teardown(() => Promise.all(locks.map((c) => c.end())));
  for (const c of locks) {
    await c.query('SET SESSION wsrep_sync_wait = 1');
    await c.query('BEGIN');
    await c.query('SELECT id FROM data_exports WHERE id = ? FOR UPDATE', [exportId]);
  }

  const daemons: Daemon[] = [];
  t.teardown(() => Promise.all(daemons.map((d) => d.stop())));
  daemons.push(await startDaemon(db.urls[0], db.dir, { IAM_LOG_LEVEL: 'debug' }));
  // One service: the second takes the first daemon's issuer.
  daemons.push(await startDaemon(db.urls[1], db.dir, { IAM_LOG_LEVEL: 'debug', IAM_ISSUER: daemons[0].url }));
  const holderOf = (d: Daemon) => {
    const h = d.logs.find((l) => l.msg === 'scheduler started')?.holder;
    return typeof h === 'string' ? h : '';
  };
  t.true(
    await until(() => daemons.every((d) => holderOf(d) !== ''), { timeoutMs: 10_000, what: 'both schedulers started' }),
  );
  const holders = daemons.map(holderOf);

  const lease = async () =>
    (await nodeRows<LeaseRow>(db.urls[2], "SELECT holder, last_status FROM job_leases WHERE name = 'data-export'"))[0];
  let held: LeaseRow | undefined;
  await until(
    async () => {
      held = await lease();
      return !!held?.holder && holders.includes(held.holder);
    },
    { timeoutMs: 30_000, intervalMs: 100, what: () => `a daemon holding the lease (${JSON.stringify(held)})` },
  );
  t.truthy(held?.holder && holders.includes(held.holder), `a daemon holds the lease: ${JSON.stringify(held)}`);
  const holderIndex = holders.indexOf(held!.holder!);
  const holder = daemons[holderIndex];
  const other = daemons[1 - holderIndex];
  const finished = (d: Daemon) => d.logs.filter((l) => l.job === 'data-export' && l.msg === 'job finished').length;
  const skips = (d: Daemon) =>
    d.logs.filter((l) => l.job === 'data-export' && /held by another daemon/.test(String(l.msg))).length;

  // While the holder is stuck in its run, the other daemon's ticks (every 2 s) are skipped.
  const skippedBefore = skips(other);
  // A window in which the other daemon must NOT run the job (its ticks skipped): nothing to await.
  await sleep(6_000);
  t.true(skips(other) - skippedBefore >= 2, `the other daemon skipped its ticks (${skips(other) - skippedBefore})`);
  t.is((await lease())?.holder, held!.holder, 'the stuck holder still holds the lease');
  t.is(finished(other), 0, 'the other daemon never ran the job meanwhile');
  t.is(finished(holder), 0, 'the holder is still in its run');
  t.false(
    daemons.some((d) =>
      d.logs.some((l) => l.job === 'data-export' && /could not take the job lease/.test(String(l.msg))),
    ),
    'lease conflicts between the nodes were retried, never given up',
  );

  // Let the run go: the holder finishes, the export is built once.
  // (A lock transaction that a replicated write aborted answers ROLLBACK with ER_LOCK_DEADLOCK.)
  for (const [i, c] of locks.entries())
    await c.query('ROLLBACK').catch((e: Error) => t.log(`lock on node ${i + 1}: ${e.message}`));
  t.true(await until(() => finished(holder) >= 1, { timeoutMs: 30_000, what: 'the holder finished its run' }));
  const [exp] = await nodeRows<{ status: string }>(db.urls[1], 'SELECT status FROM data_exports WHERE id = ?', [
    exportId,
  ]);
  t.is(exp.status, 'completed');
  t.log(`holder: daemon ${holderIndex + 1}; the other skipped ${skips(other)} ticks`);
});
