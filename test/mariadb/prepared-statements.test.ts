/**
 * The data layer's thin SQL on MariaDB (shared/db/sql.ts): every statement goes to mysql2's
 * `execute`, on the pool outside a transaction and on the transaction's own connection inside
 * one. These check what would break silently if that routing or the binding went wrong: a write
 * made "inside" a transaction but on another connection would survive its rollback.
 */
import test from 'ava';
import { isUniqueViolation } from '../../shared/db/index.js';
import { all, exec, num, one } from '../../shared/db/sql.js';
import { testDatabase, usingMysql } from '../helpers/db.js';
import { openServices } from '../helpers/seed.js';

type Status = { Variable_name: string; Value: string }[];

test('one, all and exec on MariaDB: prepared once per connection, bound like the text protocol, inside the transaction', async (t) => {
  // This file is in the MariaDB lane's file list only; running it elsewhere is a mistake, not a skip.
  t.true(usingMysql(), 'IAM_TEST_DATABASE_URL must name a MariaDB/MySQL server (npm run test:mariadb)');
  const db = await testDatabase(t);
  const { ds } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  await ds.query('CREATE TABLE probe (id VARCHAR(32) PRIMARY KEY, n BIGINT NULL, flag TINYINT NULL, note TEXT NULL)');

  // The binary protocol has no undefined (the text protocol wrote NULL); booleans bind as 0/1.
  t.is(
    await exec(ds, 'INSERT INTO probe (id, n, flag, note) VALUES (?, ?, ?, ?)', [
      'a',
      1_732_700_000_123,
      true,
      undefined,
    ]),
    1,
  );
  t.is(await exec(ds, 'INSERT INTO probe (id, n, flag, note) VALUES (?, ?, ?, ?)', ['b', 2, false, 'x']), 1);
  const a = await one<{ n: unknown; flag: unknown; note: unknown }>(
    ds,
    'SELECT n, flag, note FROM probe WHERE id = ?',
    ['a'],
  );
  t.is(num(a!.n), 1_732_700_000_123);
  t.is(num(a!.flag), 1);
  t.is(a!.note, null);
  // A LIMIT placeholder (the keyset pages use one) and an empty result.
  t.deepEqual(
    (await all<{ id: string }>(ds, 'SELECT id FROM probe ORDER BY id LIMIT ?', [1])).map((r) => r.id),
    ['a'],
  );
  t.is(await one(ds, 'SELECT id FROM probe WHERE id = ?', ['none']), undefined);

  // One winner of two conditional updates: affected rows come back from the result header.
  const winners = await Promise.all([
    exec(ds, 'UPDATE probe SET note = ? WHERE id = ? AND note IS NULL', ['first', 'a']),
    exec(ds, 'UPDATE probe SET note = ? WHERE id = ? AND note IS NULL', ['second', 'a']),
  ]);
  t.deepEqual(winners.sort(), [0, 1]);

  // Errors are mysql2's own, which the retry and unique-violation checks read.
  const dup = await exec(ds, 'INSERT INTO probe (id) VALUES (?)', ['b']).catch((e: unknown) => e);
  t.true(isUniqueViolation(dup));

  // Inside a transaction the statements run on its connection: rolled back with it, and the
  // text is prepared there once (the session's counters are that connection's own).
  const counters = async (tx: { query(sql: string): Promise<Status> }) => {
    const rows = await tx.query("SHOW SESSION STATUS WHERE Variable_name IN ('Com_stmt_prepare', 'Com_stmt_execute')");
    return Object.fromEntries(rows.map((r) => [r.Variable_name, Number(r.Value)]));
  };
  let seen: { prepare: number; execute: number; inside: number } | undefined;
  await ds
    .transaction(async (tx) => {
      const before = await counters(tx);
      await exec(tx, 'INSERT INTO probe (id, n) VALUES (?, ?)', ['c', 3]);
      for (let i = 0; i < 5; i++) await one(tx, 'SELECT n FROM probe WHERE id = ? /* in tx */', ['c']);
      const after = await counters(tx);
      seen = {
        prepare: after.Com_stmt_prepare - before.Com_stmt_prepare,
        execute: after.Com_stmt_execute - before.Com_stmt_execute,
        inside: (await all(tx, 'SELECT id FROM probe WHERE id = ?', ['c'])).length,
      };
      throw new Error('roll back');
    })
    .catch((e: Error) => t.is(e.message, 'roll back'));
  t.deepEqual(seen, { prepare: 2, execute: 6, inside: 1 });
  t.is(await one(ds, 'SELECT id FROM probe WHERE id = ?', ['c']), undefined);
});
