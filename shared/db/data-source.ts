/**
 * Builds the TypeORM DataSource for the configured database and applies migrations.
 * `synchronize` is never on: the schema changes only through migrations/.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DataSource, MigrationExecutor } from 'typeorm';
import type { DatabaseConfig, SqliteSynchronous } from '../config.js';
import { entities } from './entities.js';
import { migrations } from '../../migrations/index.js';
import { installSqliteGate, installTransactionRetry } from './concurrency.js';

/**
 * `jobs` is the background workers' own connection (scheduler leases, outbox delivery). With
 * SQLite this matters: TypeORM runs every query of a DataSource on one better-sqlite3
 * connection, so a worker sharing it would read (and send) rows of a request's uncommitted
 * transaction, and its writes would join that transaction. A second connection sees only
 * committed rows. Its busy timeout is 0 because better-sqlite3 waits synchronously: a worker
 * waiting for a lock held by a request transaction would stall the very event loop that
 * transaction needs to finish. Workers retry SQLITE_BUSY asynchronously instead (see
 * shared/db/retry.ts) and never hold a transaction open across an await.
 */
export type DataSourceRole = 'app' | 'jobs';

/**
 * `sqliteSynchronous`: FULL unless the operator chose NORMAL (IAM_SQLITE_SYNCHRONOUS, shared/config.ts):
 * a write reported done must survive a power loss, as docs/deployment.md promises.
 */
export function createDataSource(
  db: DatabaseConfig,
  role: DataSourceRole = 'app',
  opts: { sqliteSynchronous?: SqliteSynchronous } = {},
): DataSource {
  const synchronous = opts.sqliteSynchronous ?? 'FULL';
  if (db.kind === 'sqlite') {
    mkdirSync(dirname(db.path), { recursive: true });
    return new DataSource({
      type: 'better-sqlite3',
      database: db.path,
      entities,
      migrations,
      synchronize: false,
      migrationsTransactionMode: 'each',
      // WAL lets the CLI and readers work while the daemon writes; a busy timeout turns
      // writer contention into a short wait instead of SQLITE_BUSY.
      enableWAL: true,
      prepareDatabase: (conn: { pragma(s: string): unknown }) => {
        conn.pragma('busy_timeout = 5000');
        conn.pragma('foreign_keys = ON');
        conn.pragma(`synchronous = ${synchronous}`);
        if (role === 'jobs') {
          // WAL first, while a busy wait is still allowed (TypeORM repeats it as a no-op).
          conn.pragma('journal_mode = WAL');
          conn.pragma('busy_timeout = 0');
        }
      },
    });
  }
  return new DataSource({
    type: 'mysql',
    url: db.url,
    entities,
    migrations,
    synchronize: false,
    migrationsTransactionMode: 'each',
    supportBigNumbers: true,
    bigNumberStrings: false,
    charset: 'utf8mb4_bin',
    timezone: 'Z',
    poolSize: role === 'jobs' ? 5 : 20,
    connectTimeout: 10_000,
  });
}

/**
 * Connects, retrying briefly: a database started alongside the daemon may still be booting.
 * `groupCommit`: see installSqliteGate (the daemon's single-process SQLite connection only).
 */
export async function connect(
  ds: DataSource,
  attempts = 10,
  opts: { groupCommit?: boolean } = {},
): Promise<DataSource> {
  for (let i = 1; ; i++) {
    try {
      await ds.initialize();
      installSqliteGate(ds, opts);
      installTransactionRetry(ds);
      return ds;
    } catch (e) {
      if (i >= attempts || ds.options.type !== 'mysql') throw e;
      await new Promise((r) => setTimeout(r, Math.min(2000, 200 * i)));
    }
  }
}

const LOCK_NAME = 'iam_schema_migrations';

/**
 * Applies pending migrations. On MySQL several daemons may start at once against one cluster,
 * so a named lock (GET_LOCK) lets exactly one of them migrate while the others wait.
 * `onApplied` hears of each migration as soon as it is applied (`iam db migrate` prints them).
 */
export async function migrate(ds: DataSource, opts: { onApplied?: (name: string) => void } = {}): Promise<string[]> {
  const restore = opts.onApplied ? reportApplied(ds, opts.onApplied) : () => undefined;
  try {
    return await applyMigrations(ds);
  } finally {
    restore();
  }
}

/** The migrations this code knows and the database has not applied, in the order they apply. */
export async function pendingMigrations(ds: DataSource): Promise<string[]> {
  return (await new MigrationExecutor(ds).getPendingMigrations()).map((m) => m.name);
}

/** TypeORM reports each applied migration through the logger: pass the names on, until restored. */
function reportApplied(ds: DataSource, onApplied: (name: string) => void): () => void {
  const logger = ds.logger;
  const original = logger.logSchemaBuild.bind(logger);
  logger.logSchemaBuild = (message, qr) => {
    const m = /^Migration (\S+) has been executed successfully\.$/.exec(message);
    if (m) onApplied(m[1]);
    original(message, qr);
  };
  return () => {
    logger.logSchemaBuild = original;
  };
}

async function applyMigrations(ds: DataSource): Promise<string[]> {
  if (ds.options.type !== 'mysql') {
    return (await ds.runMigrations({ transaction: 'each' })).map((m) => m.name);
  }
  const qr = ds.createQueryRunner();
  try {
    const [row] = (await qr.query('SELECT GET_LOCK(?, 60) AS got', [LOCK_NAME])) as { got: unknown }[];
    if (Number(row?.got) !== 1) throw new Error('timed out waiting for the schema migration lock');
    try {
      return (await ds.runMigrations({ transaction: 'each' })).map((m) => m.name);
    } finally {
      await qr.query('SELECT RELEASE_LOCK(?)', [LOCK_NAME]);
    }
  } finally {
    await qr.release();
  }
}

/** True when every migration the code knows has been applied. */
export async function migrationsCurrent(ds: DataSource): Promise<boolean> {
  return !(await ds.showMigrations());
}

/**
 * Readiness (GET /readyz): the database answers a query, and whether every migration the code
 * knows has been applied. Throws when the database does not answer.
 */
export async function databaseReadiness(ds: DataSource): Promise<{ migrationsCurrent: boolean }> {
  await ds.query('SELECT 1');
  return { migrationsCurrent: await migrationsCurrent(ds) };
}
