/**
 * Test databases. By default each test file gets a fresh embedded SQLite file. When
 * IAM_TEST_DATABASE_URL names a MySQL/MariaDB server (the MariaDB lane sets it), each call
 * creates a fresh database on that server instead, dropped when the test file finishes.
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import mysql from 'mysql2/promise';
import { parseDatabaseUrl } from '../../shared/config.js';
import { connect, createDataSource, migrate } from '../../shared/db/data-source.js';

export const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdef0123456789';

export function usingMysql(): boolean {
  return /^mysql:|^mariadb:/.test(process.env.IAM_TEST_DATABASE_URL ?? '');
}

export interface TestDb {
  url: string;
  dir: string;
  drop(): Promise<void>;
}

export interface TestDbOptions {
  /**
   * An empty database, not even migrated: for the tests of migrating itself (what `db migrate`
   * applies, a command refused before it). By default a SQLite test database starts as a copy
   * of a migrated template (see `sqliteTemplate`).
   */
  empty?: boolean;
}

/** A hash of the compiled migrations: a template is rebuilt when any of them changes. */
function migrationsHash(): string {
  const dir = fileURLToPath(new URL('../../migrations/', import.meta.url));
  const hash = createHash('sha256');
  for (const f of readdirSync(dir)
    .filter((n) => n.endsWith('.js'))
    .sort())
    hash.update(f).update(readFileSync(join(dir, f)));
  return hash.digest('hex').slice(0, 16);
}

/**
 * A migrated SQLite database to copy, built once per set of compiled migrations (the file name
 * carries a hash of them) by whichever test process needs it first, and renamed into place
 * whole. Every test database used to run all the migrations itself — in the daemon it starts,
 * the `iam db migrate` it calls or `openServices` — about 0.8 s of CPU each, hundreds of times a
 * run. A copy is the same schema and rows (the migrations' own, nothing bound to a secret key),
 * and the migrate that follows finds nothing pending.
 */
async function sqliteTemplate(): Promise<string> {
  const path = join(tmpdir(), `iam-test-template-${migrationsHash()}.db`);
  if (existsSync(path)) return path;
  const building = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  const ds = await connect(createDataSource(parseDatabaseUrl(`sqlite:${building}`)));
  try {
    await migrate(ds);
  } finally {
    // Closing the last connection checkpoints the WAL into the file and removes it.
    await ds.destroy();
  }
  renameSync(building, path);
  return path;
}

export async function createTestDatabase(opts: TestDbOptions = {}): Promise<TestDb> {
  const dir = mkdtempSync(join(tmpdir(), 'iam-test-'));
  const base = process.env.IAM_TEST_DATABASE_URL;
  if (!base || !usingMysql()) {
    if (!opts.empty) copyFileSync(await sqliteTemplate(), join(dir, 'iam.db'));
    return {
      url: `sqlite:${join(dir, 'iam.db')}`,
      dir,
      drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
    };
  }
  const u = new URL(base.replace(/^mariadb:/, 'mysql:'));
  const name = `iamt_${randomBytes(6).toString('hex')}`;
  const admin = await mysql.createConnection(serverOf(u));
  try {
    if (opts.empty) await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    else await cloneMysqlTemplate(admin, await mysqlTemplate(u), name);
  } finally {
    await admin.end();
  }
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    dir,
    drop: async () => {
      const c = await mysql.createConnection(serverOf(u));
      try {
        // Since the Galera and metrics work, DROP DATABASE on the lane's MariaDB 10.11 now and then
        // leaves a trigger file's backup (`<table>.TRG-`) behind and fails with ER_DB_DROP_RMDIR
        // (1010, errno 39) after dropping every table. Not reproduced on the previous build;
        // the service never drops a database, and the lane's server and files are thrown away
        // at its end, so the test's cleanup notes it and goes on rather than failing the test.
        try {
          await c.query(`DROP DATABASE IF EXISTS \`${name}\``);
        } catch (e) {
          if ((e as { errno?: number }).errno !== 1010) throw e;
          console.warn(`test database ${name}: ${(e as Error).message}; left to the lane's cleanup`);
        }
      } finally {
        await c.end();
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function serverOf(u: URL) {
  return {
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
  };
}

/**
 * The MariaDB lane's migrated template database, `iamt_tpl_<hash>`: built once per lane by the
 * first test process to get the server-wide lock (the others wait for it, then find it ready by
 * its marker table, which the build creates last). Running the migrations per test database cost
 * some 170 DDL statements each (table copies for the ALTERs, index builds).
 */
async function mysqlTemplate(u: URL): Promise<string> {
  const name = `iamt_tpl_${migrationsHash()}`;
  const c = await mysql.createConnection(serverOf(u));
  try {
    await c.query('SELECT GET_LOCK(?, 600)', [name]);
    const [ready] = await c.query<mysql.RowDataPacket[]>(
      'SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?',
      [name, TEMPLATE_MARKER],
    );
    if (ready.length === 0) {
      await c.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await c.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
      const t = new URL(u);
      t.pathname = `/${name}`;
      const ds = await connect(createDataSource(parseDatabaseUrl(t.toString())));
      try {
        await migrate(ds);
      } finally {
        await ds.destroy();
      }
      await c.query(`CREATE TABLE \`${name}\`.${TEMPLATE_MARKER} (id INT)`);
    }
    await c.query('SELECT RELEASE_LOCK(?)', [name]);
  } finally {
    await c.end();
  }
  return name;
}

const TEMPLATE_MARKER = 'zz_template_ready';

/**
 * A new database with the template's tables (SHOW CREATE TABLE: columns, indexes, foreign keys,
 * charset as migrated), rows (the migrations table's and the migrations' own) and triggers.
 */
async function cloneMysqlTemplate(c: mysql.Connection, template: string, name: string): Promise<void> {
  await c.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  await c.query(`USE \`${name}\``);
  // Tables are created in name order, so a foreign key may name one not created yet.
  await c.query('SET FOREIGN_KEY_CHECKS = 0');
  const [tables] = await c.query<mysql.RowDataPacket[]>(
    'SELECT TABLE_NAME AS t FROM information_schema.TABLES ' +
      "WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' AND TABLE_NAME <> ?",
    [template, TEMPLATE_MARKER],
  );
  for (const { t } of tables as { t: string }[]) {
    const [[create]] = await c.query<mysql.RowDataPacket[]>(`SHOW CREATE TABLE \`${template}\`.\`${t}\``);
    await c.query(create['Create Table'] as string);
    await c.query(`INSERT INTO \`${t}\` SELECT * FROM \`${template}\`.\`${t}\``);
  }
  const [triggers] = await c.query<mysql.RowDataPacket[]>(
    'SELECT TRIGGER_NAME AS n FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ?',
    [template],
  );
  for (const { n } of triggers as { n: string }[]) {
    const [[create]] = await c.query<mysql.RowDataPacket[]>(`SHOW CREATE TRIGGER \`${template}\`.\`${n}\``);
    await c.query(create['SQL Original Statement'] as string);
  }
  await c.query('SET FOREIGN_KEY_CHECKS = 1');
}

/** A fresh database for one test, dropped by its teardown. */
export async function testDatabase(t: ExecutionContext, opts: TestDbOptions = {}): Promise<TestDb> {
  const db = await createTestDatabase(opts);
  t.teardown(() => db.drop());
  return db;
}
