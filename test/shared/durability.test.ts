/**
 * Durability on the embedded database: synchronous=FULL unless the operator chose NORMAL
 * (docs/deployment.md), and the SQLite gate refusing a write that would join a transaction it
 * did not open (shared/db/concurrency.ts). Always on an embedded SQLite file, in the MariaDB lane
 * too: both exist only there.
 */
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type SqliteSynchronous } from '../../shared/config.js';
import { ForeignTransactionError, sqliteGate } from '../../shared/db/concurrency.js';
import { connect, createDataSource } from '../../shared/db/data-source.js';
import { exec, one } from '../../shared/db/sql.js';
import { WalSync } from '../../shared/db/wal-durability.js';
import { until } from '../helpers/poll.js';
import { TEST_SECRET_KEY } from '../helpers/db.js';

async function open(t: ExecutionContext, sqliteSynchronous?: SqliteSynchronous, groupCommit = true) {
  const dir = mkdtempSync(join(tmpdir(), 'iam-dur-'));
  const ds = await connect(
    createDataSource({ kind: 'sqlite', path: join(dir, 'd.db') }, 'app', { sqliteSynchronous }),
    1,
    {
      groupCommit,
    },
  );
  t.teardown(async () => {
    await ds.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  return ds;
}

/** PRAGMA synchronous answers 1 for NORMAL and 2 for FULL. */
const synchronous = async (ds: Awaited<ReturnType<typeof open>>) =>
  Number((await ds.query<{ synchronous: number }[]>('PRAGMA synchronous'))[0].synchronous);

test('IAM_SQLITE_SYNCHRONOUS: FULL by default, NORMAL when chosen, anything else refused', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'iam-dur-cfg-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = { IAM_DATABASE_URL: `sqlite:${join(dir, 'x.db')}`, IAM_SECRET_KEY: TEST_SECRET_KEY };
  t.is(loadConfig(env).sqliteSynchronous, 'FULL');
  t.is(loadConfig({ ...env, IAM_SQLITE_SYNCHRONOUS: 'normal' }).sqliteSynchronous, 'NORMAL');
  t.throws(() => loadConfig({ ...env, IAM_SQLITE_SYNCHRONOUS: 'OFF' }), { message: /IAM_SQLITE_SYNCHRONOUS/ });
});

test('every commit is synced (FULL) unless NORMAL is chosen; the grouped connection syncs after its COMMIT, off the event loop', async (t) => {
  // Without group commit (the CLI, worker processes) SQLite syncs inside each COMMIT.
  t.is(await synchronous(await open(t, undefined, false)), 2);
  t.is(await synchronous(await open(t, 'NORMAL', false)), 1);
  // The daemon's grouped connection: SQLite's COMMIT does not sync (NORMAL), the gate's WAL
  // sync does, before any caller of the group is answered (shared/db/wal-durability.ts).
  const ds = await open(t, 'FULL');
  t.is(await synchronous(ds), 1);
  const walSync = sqliteGate(ds)!.walSync!;
  t.truthy(walSync, 'FULL on the grouped connection: the asynchronous WAL sync');
  await ds.query('CREATE TABLE rows (id TEXT PRIMARY KEY)');
  const before = walSync.syncs;
  const synced = await Promise.all(
    ['a', 'b', 'c'].map((id) =>
      ds.transaction((em) => exec(em, 'INSERT INTO rows (id) VALUES (?)', [id])).then(() => walSync.syncs),
    ),
  );
  t.true(
    synced.every((n) => n > before),
    'each caller answered after an fdatasync that followed its COMMIT',
  );
  const normal = await open(t, 'NORMAL');
  t.is(await synchronous(normal), 1);
  t.is(sqliteGate(normal)!.walSync, undefined, 'NORMAL was chosen: no sync at all per commit');
});

for (const groupCommit of [true, false]) {
  test(`a write while a transaction the gate did not open is in progress is refused (group commit ${groupCommit ? 'on' : 'off'})`, async (t) => {
    const ds = await open(t, undefined, groupCommit);
    await ds.query('CREATE TABLE rows (id TEXT PRIMARY KEY)');
    // TypeORM's own transaction, outside transaction(): the query runner's BEGIN.
    const qr = ds.createQueryRunner();
    await qr.startTransaction();
    await qr.query('INSERT INTO rows (id) VALUES (?)', ['theirs']);
    await t.throwsAsync(async () => exec(ds, 'INSERT INTO rows (id) VALUES (?)', ['mine']), {
      instanceOf: ForeignTransactionError,
    });
    // Reads are not refused; the foreign transaction goes on and ends as its owner says.
    t.truthy(await one(ds, 'SELECT id FROM rows WHERE id = ?', ['theirs']));
    await qr.rollbackTransaction();
    t.is(await one(ds, 'SELECT id FROM rows WHERE id = ?', ['theirs']), undefined);
    t.is(await one(ds, 'SELECT id FROM rows WHERE id = ?', ['mine']), undefined);
    // Once it has ended, the same write goes through.
    await exec(ds, 'INSERT INTO rows (id) VALUES (?)', ['mine']);
    t.truthy(await one(ds, 'SELECT id FROM rows WHERE id = ?', ['mine']));
  });
}

test('WalSync: asks made while a sync runs share the next one; after a failed sync every flush fails', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'iam-walsync-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'x-wal');
  writeFileSync(path, '');
  const pending: { resolve(): void; reject(e: Error): void }[] = [];
  const sync = new WalSync(path, () => new Promise<void>((resolve, reject) => pending.push({ resolve, reject })));
  const settled: string[] = [];
  const first = sync.flush().then(() => settled.push('first'));
  await until(() => pending.length === 1);
  // Asked while the first runs: it may have started before their COMMITs, so they wait for the next.
  const second = sync.flush().then(() => settled.push('second'));
  const third = sync.flush().then(() => settled.push('third'));
  pending[0].resolve();
  await first;
  await until(() => pending.length === 2);
  t.deepEqual(settled, ['first'], 'the later asks wait for a sync of their own');
  pending[1].resolve();
  await Promise.all([second, third]);
  t.is(pending.length, 2, 'two asks during one sync cost one more sync, not two');
  t.is(sync.syncs, 2);

  const failing = sync.flush();
  await until(() => pending.length === 3);
  pending[2].reject(new Error('EIO'));
  await t.throwsAsync(failing, { message: 'EIO' });
  await t.throwsAsync(sync.flush(), { message: 'EIO' }, 'a later sync could succeed without the lost pages');
  t.is(pending.length, 3);
  await sync.close();
});

test('the checkpoint thread copies the WAL into the database file while the connection never checkpoints itself', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'iam-ckpt-'));
  const path = join(dir, 'c.db');
  const ds = await connect(createDataSource({ kind: 'sqlite', path }, 'app'), 1, { groupCommit: true });
  t.teardown(async () => {
    await ds.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  const [auto] = await ds.query<{ wal_autocheckpoint: number }[]>('PRAGMA wal_autocheckpoint');
  t.is(Number(auto.wal_autocheckpoint), 0);
  await ds.query('CREATE TABLE blobs (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  const before = statSync(path).size;
  const body = 'x'.repeat(4000);
  for (let i = 0; i < 50; i++) await exec(ds, 'INSERT INTO blobs (body) VALUES (?)', [body]);
  // Fifty pages and more went to the WAL only; the worker's PASSIVE checkpoint moves them.
  await until(() => statSync(path).size >= before + 50 * 4000, { timeoutMs: 10_000 });
  t.true(statSync(path).size >= before + 50 * 4000);
});
