/**
 * Two daemons on one MariaDB database share the scheduled jobs through `job_leases`
 * (daemon/jobs/scheduler.ts). This runs in the MariaDB lane only (ava.config.js): it holds
 * an InnoDB row lock to stop a job in the middle of its run, which SQLite cannot do.
 *
 * The `data-export` job runs every 2 s on both daemons, with a 60 s lease renewed by a
 * heartbeat. A pending export whose row the test keeps locked (SELECT … FOR UPDATE) makes the
 * lease holder block inside its run, so the test knows exactly which daemon holds the lease
 * while it runs. Then:
 *   - the other daemon's ticks are skipped for as long as the holder runs (one at a time);
 *   - the holder is killed with SIGKILL (no chance to release anything);
 *   - the other daemon takes the lease over once the last renewed `lease_until` passes, and
 *     builds the next export.
 */
import test from 'ava';
import { createPendingExport } from '../../shared/services/data-export.js';
import { num, one } from '../../shared/db/sql.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { testDatabase, usingMysql } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';
import { until } from '../helpers/poll.js';

interface LeaseRow {
  holder: string | null;
  lease_until: unknown;
  last_started_at: unknown;
  last_status: string | null;
}

test('a leased job runs on one daemon at a time and is taken over after its holder is killed', async (t) => {
  t.timeout(180_000);
  // This file is in the MariaDB lane's file list only; running it elsewhere is a mistake, not a skip.
  t.true(usingMysql(), 'IAM_TEST_DATABASE_URL must name a MariaDB/MySQL server (npm run test:mariadb)');

  const db = await testDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const actor = { type: 'system' as const, id: 'test' };
  const tenant = await activeTenant(provisioning, { name: 'Lease test' }, actor);
  const user = await directory.createUser(tenant.id, { email: 'lease@example.test', name: 'Lease' }, actor);
  const first = await createPendingExport(ds, {
    tenantId: tenant.id,
    userId: user.id,
    sections: ['profile'],
    format: 'json',
  });

  // Lock the export row before any daemon exists: whichever daemon takes the job lease first
  // reads the row, builds the export, and then waits on this lock in its UPDATE.
  const lock = ds.createQueryRunner();
  await lock.connect();
  await lock.startTransaction();
  await lock.query('SELECT id FROM data_exports WHERE id = ? FOR UPDATE', [first]);
  t.teardown(async () => {
    if (lock.isTransactionActive) await lock.rollbackTransaction();
    await lock.release();
  });

  // Both daemons are one service: same issuer, same database.
  const env = { IAM_LOG_LEVEL: 'debug' };
  // One service: the second daemon takes the first one's issuer.
  const leader = await startDaemon(db.url, db.dir, env);
  const daemons: Daemon[] = [leader, await startDaemon(db.url, db.dir, { ...env, IAM_ISSUER: leader.url })];
  t.teardown(async () => {
    await Promise.all(daemons.map((d) => d.stop('SIGKILL')));
  });
  const holderOf = (d: Daemon) => {
    const h = d.logs.find((l) => l.msg === 'scheduler started')?.holder;
    return typeof h === 'string' ? h : '';
  };
  t.true(
    await until(() => daemons.every((d) => holderOf(d) !== ''), { timeoutMs: 10_000, what: 'both schedulers started' }),
  );
  const holders = daemons.map(holderOf);

  const lease = () =>
    one<LeaseRow>(
      ds,
      "SELECT holder, lease_until, last_started_at, last_status FROM job_leases WHERE name = 'data-export'",
    );
  let held: LeaseRow | undefined;
  await until(
    async () => {
      held = await lease();
      return !!held?.holder && holders.includes(held.holder);
    },
    { timeoutMs: 30_000, intervalMs: 100, what: () => `a daemon holding the lease (${JSON.stringify(held)})` },
  );
  t.truthy(
    held?.holder && holders.includes(held.holder),
    `one of the daemons holds the data-export lease: ${JSON.stringify(held)}`,
  );
  const holderIndex = holders.indexOf(held!.holder!);
  const victim = daemons[holderIndex];
  const survivor = daemons[1 - holderIndex];

  // While the holder is stuck in its run, the other daemon's ticks (every 2 s) are skipped.
  const skippedBefore = survivor.logs.filter(
    (l) => l.job === 'data-export' && /held by another daemon/.test(String(l.msg)),
  ).length;
  // A window in which the other daemon must NOT run the job (its ticks skipped): nothing to await.
  await new Promise((r) => setTimeout(r, 5_000));
  const skipped =
    survivor.logs.filter((l) => l.job === 'data-export' && /held by another daemon/.test(String(l.msg))).length -
    skippedBefore;
  t.true(skipped >= 2, `the other daemon skipped its ticks while the lease was held (${skipped} skipped)`);
  t.is((await lease())?.holder, held!.holder, 'the stuck holder still holds the lease (its heartbeat renews it)');
  t.false(
    survivor.logs.some((l) => l.job === 'data-export' && l.msg === 'job finished'),
    'the other daemon never ran the job meanwhile',
  );

  // Kill the holder outright, then let the stuck statement go.
  await victim.stop('SIGKILL');
  const orphan = await lease();
  const orphanUntil = num(orphan!.lease_until);
  t.is(orphan!.holder, held!.holder, 'a killed holder leaves its lease behind');
  await lock.rollbackTransaction();
  const second = await createPendingExport(ds, {
    tenantId: tenant.id,
    userId: user.id,
    sections: ['profile'],
    format: 'json',
  });

  // The survivor takes over only after the orphaned lease expires, and does the work.
  const built = async () =>
    (await one<{ status: string }>(ds, 'SELECT status FROM data_exports WHERE id = ?', [second]))?.status ===
    'completed';
  await until(built, { timeoutMs: 100_000, intervalMs: 500, what: 'the export queued after the kill built' });
  t.true(await built(), 'the surviving daemon built the export queued after the kill');
  const after = await lease();
  t.true(
    after!.holder === null || after!.holder === holders[1 - holderIndex],
    `the lease is free or the survivor's: ${after!.holder}`,
  );
  t.true(num(after!.last_started_at) >= orphanUntil, 'the survivor started only after the orphaned lease expired');
  t.is(after!.last_status, 'ok');
});
