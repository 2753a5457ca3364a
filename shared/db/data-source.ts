/**
 * Builds the TypeORM DataSource for the configured database and applies migrations.
 * `synchronize` is never on: the schema changes only through migrations/.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { DataSource, MigrationExecutor } from 'typeorm';
import type { DatabaseConfig, SqliteSynchronous } from '../config.js';
import { entities } from './entities.js';
import { migrations } from '../../migrations/index.js';
import { installSqliteGate, installTransactionRetry } from './concurrency.js';
import { failoverDriver, type FailoverLog } from './failover.js';
import { isTransient, isUniqueViolation } from './retry.js';

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
  opts: { sqliteSynchronous?: SqliteSynchronous; log?: FailoverLog } = {},
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
    // With other hosts to fail over to, a host that does not answer is given up sooner: a
    // blackholed node must not hold a request for longer than the 5 s a failover may take.
    connectTimeout: db.hosts.length > 1 ? 2_500 : 10_000,
    // One mysql2 pool per listed host, failing over in order; Galera-aware (failover.ts).
    driver: failoverDriver({ hosts: db.hosts, syncWait: db.galeraSyncWait ?? 1, log: opts.log }),
    // sql.ts runs every statement through mysql2's execute, which keeps each text prepared on
    // its connection. The server counts them for all connections (max_prepared_stmt_count,
    // 16,382 by default); mysql2's own cap is 16,000 per connection. 128 holds the hot
    // statements and keeps 25 connections a daemon under 3,200.
    extra: { maxPreparedStatements: 128 },
  });
}

/**
 * Connects, retrying briefly: a database started alongside the daemon may still be booting.
 * `groupCommit`: see installSqliteGate (the daemon's single-process SQLite connection only).
 */
export async function connect(
  ds: DataSource,
  attempts = 10,
  opts: { groupCommit?: boolean; onCheckpointError?: (e: unknown) => void } = {},
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

/**
 * Applies pending migrations. Several daemons may start at once against one database (or one
 * Galera cluster, each on its own node), so a lock lets exactly one of them migrate while the
 * others wait, then find nothing left to apply. `onApplied` hears of each migration as soon as
 * it is applied (`iam db migrate` prints them).
 */
export async function migrate(
  ds: DataSource,
  opts: { onApplied?: (name: string) => void; lock?: MigrationLockOptions } = {},
): Promise<string[]> {
  const restore = opts.onApplied ? reportApplied(ds, opts.onApplied) : () => undefined;
  try {
    return await applyMigrations(ds, opts.lock);
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

export interface MigrationLockOptions {
  /** How long a taken lock lasts unless renewed: a crashed migrator blocks the others this long. */
  leaseMs?: number;
  /** How often the holder renews it. */
  renewMs?: number;
  /** How long a daemon waits for another's migration before it gives up. */
  waitMs?: number;
  /** Told once when this process starts waiting for another holder. */
  onWait?: (holder: string) => void;
}

/**
 * The migration lock on MySQL/MariaDB: one row in a table of its own, taken with an INSERT.
 *
 * GET_LOCK, used before, is local to the server it runs on: MariaDB does not replicate user
 * locks through Galera, so two daemons on two nodes both got "the" lock and both ran the DDL
 * (one then failed on a table that already existed). A row is replicated and certified: of two
 * INSERTs of the same key on two nodes one commits and the other fails (ER_DUP_ENTRY, or a
 * certification conflict that the server reports as ER_LOCK_DEADLOCK), on a single server as in
 * a cluster. The holder renews `expires_at` while it works; a lock whose holder crashed expires
 * and is taken over with a conditional UPDATE (one winner again).
 *
 * The table is created here, not by a migration, since it guards the migrations themselves
 * (CREATE TABLE IF NOT EXISTS is replicated in total order on Galera, so concurrent creators
 * are harmless). It holds at most one row.
 */
const LOCK_TABLE = 'iam_migration_lock';
const LOCK_KEY = 'schema';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function withMigrationLock<T>(ds: DataSource, opts: MigrationLockOptions, fn: () => Promise<T>): Promise<T> {
  const leaseMs = opts.leaseMs ?? 60_000;
  const renewMs = opts.renewMs ?? Math.max(100, Math.floor(leaseMs / 4));
  const waitMs = opts.waitMs ?? 600_000;
  const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  await ds.query(
    `CREATE TABLE IF NOT EXISTS ${LOCK_TABLE} (name VARCHAR(32) NOT NULL PRIMARY KEY, holder VARCHAR(200) NOT NULL, ` +
      'expires_at BIGINT NOT NULL) ENGINE=InnoDB',
  );
  const tryTake = async (): Promise<boolean> => {
    const now = Date.now();
    try {
      await ds.query(`INSERT INTO ${LOCK_TABLE} (name, holder, expires_at) VALUES (?, ?, ?)`, [
        LOCK_KEY,
        holder,
        now + leaseMs,
      ]);
      return true;
    } catch (e) {
      if (!isUniqueViolation(e) && !isTransient(e)) throw e;
    }
    // Taken: take it over only if it expired (its holder stopped renewing).
    try {
      const r = await ds.query<{ affectedRows?: number }>(
        `UPDATE ${LOCK_TABLE} SET holder = ?, expires_at = ? WHERE name = ? AND expires_at < ?`,
        [holder, now + leaseMs, LOCK_KEY, now],
      );
      return (r.affectedRows ?? 0) === 1;
    } catch (e) {
      if (isTransient(e)) return false;
      throw e;
    }
  };
  const end = Date.now() + waitMs;
  let told = false;
  while (!(await tryTake())) {
    if (Date.now() >= end) throw new Error('timed out waiting for the schema migration lock');
    if (!told && opts.onWait) {
      const [row] = await ds.query<{ holder?: string }[]>(`SELECT holder FROM ${LOCK_TABLE} WHERE name = ?`, [
        LOCK_KEY,
      ]);
      if (row?.holder) {
        told = true;
        opts.onWait(row.holder);
      }
    }
    await sleep(100 + Math.random() * 150);
  }
  let lost: Error | undefined;
  const renew = setInterval(() => {
    ds.query(`UPDATE ${LOCK_TABLE} SET expires_at = ? WHERE name = ? AND holder = ?`, [
      Date.now() + leaseMs,
      LOCK_KEY,
      holder,
    ]).then(
      (r: { affectedRows?: number }) => {
        if ((r.affectedRows ?? 1) === 0) lost = new Error('the schema migration lock was taken over');
      },
      () => undefined, // a missed renewal is retried at the next tick; the lease has room for several
    );
  }, renewMs);
  try {
    const out = await fn();
    if (lost) throw lost;
    return out;
  } finally {
    clearInterval(renew);
    await ds
      .query(`DELETE FROM ${LOCK_TABLE} WHERE name = ? AND holder = ?`, [LOCK_KEY, holder])
      .catch(() => undefined); // not released: it expires
  }
}

async function applyMigrations(ds: DataSource, lock: MigrationLockOptions = {}): Promise<string[]> {
  if (ds.options.type !== 'mysql') return applySqliteMigrations(ds);
  return withMigrationLock(ds, lock, async () => (await ds.runMigrations({ transaction: 'each' })).map((m) => m.name));
}

/**
 * SQLite has one writer at a time, but two processes starting at once on a fresh file (two
 * `npm start`, a daemon and `iam db migrate`) may both find a migration pending; the later
 * one's CREATE then fails on the table the other just made. Its transaction rolled back, so it
 * looks again: nothing left pending means the other applied everything; otherwise it retries
 * on what is pending now, a few times, then gives up with the error (a migration that fails
 * on its own fails each time).
 */
async function applySqliteMigrations(ds: DataSource): Promise<string[]> {
  const applied: string[] = [];
  const restore = reportApplied(ds, (name) => applied.push(name));
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await ds.runMigrations({ transaction: 'each' });
        return applied;
      } catch (e) {
        if ((await pendingMigrations(ds)).length === 0) return applied;
        if (attempt >= 10) throw e;
        await sleep(50 * attempt);
      }
    }
  } finally {
    restore();
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
