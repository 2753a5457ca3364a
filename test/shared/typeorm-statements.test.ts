/**
 * The SQLite gate (shared/db/concurrency.ts) recognises TypeORM's transaction statements by
 * their text. This pins them: if an upgrade of typeorm changes what its better-sqlite3 query
 * runner sends to open, commit or roll back a transaction, this fails before the gate silently
 * stops grouping or isolating transactions. typeorm is held at an exact version for the same
 * reason.
 */
import test from 'ava';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DataSource } from 'typeorm';
import { TYPEORM_BEGIN, TYPEORM_COMMIT, TYPEORM_ROLLBACK } from '../../shared/db/concurrency.js';
import { projectRoot } from '../helpers/architecture.js';

test('typeorm is pinned to an exact version', (t) => {
  const pkg = JSON.parse(readFileSync(join(projectRoot(fileURLToPath(import.meta.url)), 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  t.regex(pkg.dependencies.typeorm, /^\d+\.\d+\.\d+$/);
});

test("TypeORM's better-sqlite3 transactions are the statements the gate matches", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'iam-typeorm-'));
  // A plain data source, without the gate, to see what TypeORM itself sends.
  const ds = new DataSource({ type: 'better-sqlite3', database: join(dir, 't.db') });
  await ds.initialize();
  t.teardown(async () => {
    await ds.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  const sent: string[] = [];
  const qr = ds.createQueryRunner();
  const query = qr.query.bind(qr);
  qr.query = ((sql: string, ...rest: unknown[]) => {
    sent.push(sql);
    return (query as (...a: unknown[]) => Promise<unknown>)(sql, ...rest);
  }) as typeof qr.query;
  t.is(ds.createQueryRunner(), qr, 'the driver hands out one query runner per connection, which the gate wraps');

  await ds.transaction(async (em) => {
    await em.query('SELECT 1');
    await em.transaction(async (inner) => inner.query('SELECT 2'));
  });
  t.deepEqual(sent, [
    TYPEORM_BEGIN,
    'SELECT 1',
    'SAVEPOINT typeorm_1',
    'SELECT 2',
    'RELEASE SAVEPOINT typeorm_1',
    TYPEORM_COMMIT,
  ]);

  sent.length = 0;
  await t.throwsAsync(() =>
    ds.transaction(async (em) => {
      await em.query('SELECT 3');
      throw new Error('undo');
    }),
  );
  t.deepEqual(sent, [TYPEORM_BEGIN, 'SELECT 3', TYPEORM_ROLLBACK]);
});
