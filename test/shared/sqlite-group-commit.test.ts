/**
 * Group commit in the SQLite gate (shared/db/concurrency.ts): the transactions and writes of
 * one event-loop turn share one COMMIT, and nobody is answered before it. Always on an
 * embedded SQLite file, in the MariaDB lane too: the gate exists only there.
 *
 * "Committed" is checked from a second, independent connection, which sees only what is on
 * disk: a caller answered before the COMMIT would find its row missing there.
 */
import test from 'ava';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { sqliteGate } from '../../shared/db/concurrency.js';
import { connect, createDataSource } from '../../shared/db/data-source.js';
import { exec, one } from '../../shared/db/sql.js';

async function open(t: import('ava').ExecutionContext, groupCommit: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'iam-gc-'));
  const path = join(dir, 'gc.db');
  const ds = await connect(createDataSource({ kind: 'sqlite', path }), 1, {
    groupCommit,
  });
  await ds.query('CREATE TABLE rows (id TEXT PRIMARY KEY, tag TEXT NOT NULL)');
  // A deferred foreign key is checked at COMMIT, not at the statement: the one way to make a
  // real COMMIT fail on demand.
  await ds.query('CREATE TABLE parents (id TEXT PRIMARY KEY)');
  await ds.query(
    'CREATE TABLE children (id TEXT PRIMARY KEY, parent_id TEXT REFERENCES parents(id) DEFERRABLE INITIALLY DEFERRED)',
  );
  const other = new Database(path, { readonly: true });
  t.teardown(async () => {
    other.close();
    await ds.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  const onDisk = (id: string) =>
    other.prepare('SELECT tag FROM rows WHERE id = ?').get(id) as { tag: string } | undefined;
  return { ds, onDisk, gate: sqliteGate(ds)! };
}

const insert = (ds: DataSource, id: string) =>
  ds.transaction(async (em) => {
    await exec(em, 'INSERT INTO rows (id, tag) VALUES (?, ?)', [id, 'tx']);
    return id;
  });

test('transactions started in one turn share one COMMIT, and each caller is answered only after it', async (t) => {
  const { ds, onDisk, gate } = await open(t, true);
  const before = gate.commits;
  const seenAtAnswer: (string | undefined)[] = [];
  const ids = ['a', 'b', 'c', 'd', 'e'];
  await Promise.all(
    ids.map((id) =>
      insert(ds, id).then((got) => {
        seenAtAnswer.push(onDisk(got)?.tag);
      }),
    ),
  );
  t.is(gate.commits - before, 1, 'five transactions, one physical COMMIT');
  t.deepEqual(seenAtAnswer, ['tx', 'tx', 'tx', 'tx', 'tx'], 'every row was on disk when its caller was answered');
});

test('a failing transaction in a group undoes only its own writes', async (t) => {
  const { ds, onDisk, gate } = await open(t, true);
  const before = gate.commits;
  const results = await Promise.allSettled([
    insert(ds, 'ok1'),
    ds.transaction(async (em) => {
      await exec(em, 'INSERT INTO rows (id, tag) VALUES (?, ?)', ['bad', 'tx']);
      throw new Error('refused after writing');
    }),
    insert(ds, 'ok2'),
  ]);
  t.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  t.is((results[1] as PromiseRejectedResult).reason.message, 'refused after writing');
  t.is(onDisk('ok1')?.tag, 'tx');
  t.is(onDisk('ok2')?.tag, 'tx');
  t.is(onDisk('bad'), undefined, 'the failed one was rolled back to its savepoint');
  t.is(gate.commits - before, 1);
});

test('a write outside a transaction (one with RETURNING too) joins the group and resolves after its COMMIT; a read does not wait', async (t) => {
  const { ds, onDisk, gate } = await open(t, true);
  const before = gate.commits;
  const tx = insert(ds, 'in-tx');
  const plain = exec(ds, 'INSERT INTO rows (id, tag) VALUES (?, ?)', ['plain', 'autocommit']).then(
    () => onDisk('plain')?.tag,
  );
  t.is(await plain, 'autocommit', 'on disk when the write resolved');
  await tx;
  t.is(gate.commits - before, 1, 'the plain write and the transaction shared the COMMIT');
  // A read runs at once inside the open group: it sees a write of the same turn, whose own
  // caller is still waiting for the COMMIT.
  const order: string[] = [];
  const w = exec(ds, 'INSERT INTO rows (id, tag) VALUES (?, ?)', ['w', 'pending']).then(() => {
    order.push('write answered');
  });
  const r = one<{ tag: string }>(ds, 'SELECT tag FROM rows WHERE id = ?', ['w']).then((row) => {
    order.push(`read ${row?.tag}`);
  });
  await Promise.all([w, r]);
  t.deepEqual(order, ['read pending', 'write answered']);
  // A duplicate key fails that statement alone; the group goes on and commits the rest.
  const dup = exec(ds, 'INSERT INTO rows (id, tag) VALUES (?, ?)', ['plain', 'again']);
  const next = insert(ds, 'after-dup');
  await t.throwsAsync(dup, { any: true, message: /UNIQUE/ });
  t.is(await next, 'after-dup');
  t.is(onDisk('after-dup')?.tag, 'tx');
  // A write that returns rows (RETURNING) is a write: it joins the group a transaction opened
  // and resolves after the COMMIT, with its rows.
  const opener = insert(ds, 'ret-group');
  const returned = one<{ tag: string }>(ds, 'INSERT INTO rows (id, tag) VALUES (?, ?) RETURNING tag', [
    'ret',
    'returned',
  ]).then((row) => ({ row, onDisk: onDisk('ret')?.tag }));
  t.deepEqual(await returned, { row: { tag: 'returned' }, onDisk: 'returned' });
  await opener;
});

test('a COMMIT that fails fails every caller in its group, keeps none of their rows, and the connection goes on', async (t) => {
  const { ds, onDisk, gate } = await open(t, true);
  const before = gate.commits;
  const results = await Promise.allSettled([
    insert(ds, 'innocent'),
    ds.transaction(async (em) => {
      await exec(em, 'INSERT INTO children (id, parent_id) VALUES (?, ?)', ['orphan', 'missing']);
    }),
  ]);
  t.deepEqual(
    results.map((r) => r.status),
    ['rejected', 'rejected'],
  );
  t.regex(String((results[0] as PromiseRejectedResult).reason), /FOREIGN KEY/);
  t.is(onDisk('innocent'), undefined, 'nothing of the failed group is on disk');
  t.is(gate.commits - before, 0);
  // The group was rolled back as a whole: the next transaction starts clean and commits.
  t.is(await insert(ds, 'later'), 'later');
  t.is(onDisk('later')?.tag, 'tx');
});

test('without groupCommit (tests, the CLI, worker processes) each transaction commits by itself', async (t) => {
  const { ds, onDisk, gate } = await open(t, false);
  const before = gate.commits;
  await Promise.all(['x', 'y', 'z'].map((id) => insert(ds, id)));
  t.is(gate.commits - before, 3);
  t.is(onDisk('y')?.tag, 'tx');
});
