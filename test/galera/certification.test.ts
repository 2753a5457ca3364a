/**
 * Galera's certification conflicts: two transactions on two nodes that change the same row both
 * run to their COMMIT (row locks are local to a node); the first to be certified wins and the
 * other fails at COMMIT (or is aborted by the winner's replicated write) with ER_LOCK_DEADLOCK,
 * "WSREP detected deadlock/conflict". shared/db/retry.ts counts that as transient, and every
 * top-level transaction on MySQL is retried (installTransactionRetry, shared/db/concurrency.ts).
 */
import test from 'ava';
import mysql from 'mysql2/promise';
import type { DataSource } from 'typeorm';
import { parseDatabaseUrl } from '../../shared/config.js';
import { connect, createDataSource } from '../../shared/db/data-source.js';
import { isTransient } from '../../shared/db/retry.js';
import { connOpts, galeraDatabase, withNode } from '../helpers/galera.js';

/** Resolves once `n` parties have arrived. */
function barrier(n: number) {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return () => {
    if (++arrived === n) open();
    return opened;
  };
}

test('the same row changed through two nodes at once: one COMMIT fails with a transient deadlock', async (t) => {
  const db = await galeraDatabase(t);
  await withNode(db.urls[0], async (c) => {
    await c.query('CREATE TABLE counter (id INT NOT NULL PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB');
    await c.query('INSERT INTO counter (id, v) VALUES (1, 0)');
  });
  const [c1, c2] = await Promise.all([
    mysql.createConnection(connOpts(db.urls[0])),
    mysql.createConnection(connOpts(db.urls[1])),
  ]);
  t.teardown(() => Promise.all([c1.end(), c2.end()]));
  await c2.query('SET SESSION wsrep_sync_wait = 1');
  const both = barrier(2);
  const bump = async (c: mysql.Connection) => {
    await c.query('BEGIN');
    const [rows] = await c.query('SELECT v FROM counter WHERE id = 1 FOR UPDATE');
    await both(); // both have read v and hold their (node-local) row lock
    await c.query('UPDATE counter SET v = ? WHERE id = 1', [(rows as { v: number }[])[0].v + 1]);
    await c.query('COMMIT');
  };
  const results = await Promise.allSettled([bump(c1), bump(c2)]);
  const failed = results.filter((r) => r.status === 'rejected');
  t.is(failed.length, 1, 'exactly one of the two transactions is refused');
  const err = failed[0].reason as { code?: string; errno?: number; message?: string };
  t.log(`the loser got ${err.code} (${err.errno}): ${err.message}`);
  t.is(err.code, 'ER_LOCK_DEADLOCK');
  t.true(isTransient(err), 'the service counts it as transient');
});

test('transactions through the service on two nodes retry their certification conflicts: no update is lost', async (t) => {
  t.timeout(120_000);
  const db = await galeraDatabase(t);
  await withNode(db.urls[0], async (c) => {
    await c.query('CREATE TABLE counter (id INT NOT NULL PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB');
    await c.query('INSERT INTO counter (id, v) VALUES (1, 0)');
  });
  const sources: DataSource[] = await Promise.all(
    db.urls.slice(0, 2).map((u) => connect(createDataSource(parseDatabaseUrl(u)))),
  );
  t.teardown(() => Promise.all(sources.map((ds) => ds.destroy())));

  const ROUNDS = 10;
  let attempts = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const both = barrier(2);
    await Promise.all(
      sources.map((ds) => {
        let first = true;
        return ds.transaction(async (tx) => {
          attempts++;
          const [row] = await tx.query<{ v: number }[]>('SELECT v FROM counter WHERE id = 1 FOR UPDATE');
          // The first attempts meet here, so that each round has a conflict; retries go straight on.
          if (first) {
            first = false;
            await both();
          }
          await tx.query('UPDATE counter SET v = ? WHERE id = 1', [row.v + 1]);
        });
      }),
    );
  }
  const [final] = await withNode(
    db.urls[2],
    async (c) => (await c.query('SELECT v FROM counter WHERE id = 1'))[0] as { v: number }[],
  );
  t.log(`${2 * ROUNDS} increments through two nodes took ${attempts} attempts`);
  t.is(final.v, 2 * ROUNDS, 'every increment counted once, none lost');
  t.true(attempts >= 3 * ROUNDS, `each round's conflict was retried (${attempts} attempts)`);
});
