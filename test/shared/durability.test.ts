/**
 * Durability on the embedded database: synchronous=FULL unless the operator chose NORMAL
 * (docs/deployment.md), and the SQLite gate refusing a write that would join a transaction it
 * did not open (shared/db/concurrency.ts). Always on an embedded SQLite file, in the MariaDB lane
 * too: both exist only there.
 */
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type SqliteSynchronous } from '../../shared/config.js';
import { ForeignTransactionError } from '../../shared/db/concurrency.js';
import { connect, createDataSource } from '../../shared/db/data-source.js';
import { exec, one } from '../../shared/db/sql.js';
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

test('the connection syncs every commit (FULL) unless NORMAL is chosen', async (t) => {
  t.is(await synchronous(await open(t)), 2);
  t.is(await synchronous(await open(t, 'FULL')), 2);
  t.is(await synchronous(await open(t, 'NORMAL')), 1);
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
