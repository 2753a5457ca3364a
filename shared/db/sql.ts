/**
 * Thin SQL for hot paths (login, token issuance, revocation checks): one statement, `?`
 * placeholders (both better-sqlite3 and mysql2 take them), no query builder.
 *
 * On SQLite the statement runs on better-sqlite3 directly, prepared once and cached here:
 * TypeORM's query runner adds a logger call, two broadcaster events and four promise hops
 * per statement, which cost more than a point query itself (about 40 % of a login's
 * database time). Outside a transaction the statement still waits for the SQLite gate
 * (concurrency.ts), so it never joins another request's open transaction; inside one (an
 * EntityManager whose query runner has the transaction open) it runs at once. Errors are
 * better-sqlite3's own (`code` SQLITE_…), which retry.ts reads like TypeORM's wrapped ones.
 */
import type { DataSource } from 'typeorm';
import { runGated } from './concurrency.js';
import type { Db } from './index.js';

export type { Db };

interface SqliteStatement {
  /** Returns rows (a SELECT, or a write with RETURNING). */
  reader: boolean;
  /** Writes nothing (better-sqlite3's own reading of the statement): false for INSERT … RETURNING. */
  readonly: boolean;
  get(...p: unknown[]): unknown;
  all(...p: unknown[]): unknown[];
  run(...p: unknown[]): { changes: number };
}
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
}

/** Per connection (not per DataSource), so a DataSource opened again never reuses a closed one's. */
const statements = new WeakMap<SqliteConnection, Map<string, SqliteStatement>>();
/** Our SQL is constant text, but a few statements carry a variable-length IN list. */
const MAX_CACHED_STATEMENTS = 500;

const dataSourceOf = (db: Db): DataSource => ('manager' in db ? db : db.connection);
const inTransaction = (db: Db): boolean => !('manager' in db) && !!db.queryRunner?.isTransactionActive;

/** better-sqlite3 binds numbers, strings, bigints, buffers and null, but not booleans. */
const bind = (params: unknown[]): unknown[] =>
  params.some((p) => typeof p === 'boolean') ? params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p)) : params;

/**
 * The cached statement for `sql` on a SQLite data source; undefined on MySQL. prepared.ts
 * takes its statements from here too, so the hot paths share one cache per connection.
 */
export function sqliteStatement(ds: DataSource, sql: string): SqliteStatement | undefined {
  if (ds.options.type !== 'better-sqlite3') return undefined;
  const conn = (ds.driver as unknown as { databaseConnection: SqliteConnection }).databaseConnection;
  let cache = statements.get(conn);
  if (!cache) statements.set(conn, (cache = new Map<string, SqliteStatement>()));
  let stmt = cache.get(sql);
  if (!stmt) {
    stmt = conn.prepare(sql);
    if (cache.size >= MAX_CACHED_STATEMENTS) cache.delete(cache.keys().next().value!);
    cache.set(sql, stmt);
  }
  return stmt;
}

/**
 * Runs a synchronous better-sqlite3 call: at once inside the caller's transaction, else under
 * the gate, where a write (one that returns rows too) resolves only after the COMMIT of the
 * group it joined.
 */
async function onSqlite<T>(db: Db, ds: DataSource, stmt: SqliteStatement, fn: () => T): Promise<T> {
  return inTransaction(db) ? fn() : runGated(ds, fn, !stmt.readonly);
}

/** Runs a write and returns the number of affected rows, for one-winner conditional updates. */
export async function exec(db: Db, sql: string, params: unknown[] = []): Promise<number> {
  const ds = dataSourceOf(db);
  const stmt = sqliteStatement(ds, sql);
  if (stmt)
    return onSqlite(db, ds, stmt, () =>
      stmt.reader ? (stmt.all(...bind(params)), 0) : stmt.run(...bind(params)).changes,
    );
  if ('queryRunner' in db && db.queryRunner) {
    return (await db.queryRunner.query(sql, params, true)).affected ?? 0;
  }
  const qr = ds.createQueryRunner();
  try {
    return (await qr.query(sql, params, true)).affected ?? 0;
  } finally {
    await qr.release();
  }
}

export async function one<T>(db: Db, sql: string, params: unknown[] = []): Promise<T | undefined> {
  const ds = dataSourceOf(db);
  const stmt = sqliteStatement(ds, sql);
  if (stmt)
    return onSqlite<T | undefined>(db, ds, stmt, () =>
      stmt.reader ? (stmt.get(...bind(params)) as T | undefined) : (stmt.run(...bind(params)), undefined),
    );
  const rows = await db.query<T[]>(sql, params);
  return rows[0];
}

export async function all<T>(db: Db, sql: string, params: unknown[] = []): Promise<T[]> {
  const ds = dataSourceOf(db);
  const stmt = sqliteStatement(ds, sql);
  if (stmt)
    return onSqlite<T[]>(db, ds, stmt, () =>
      stmt.reader ? (stmt.all(...bind(params)) as T[]) : (stmt.run(...bind(params)), []),
    );
  return db.query<T[]>(sql, params);
}

/** Whether `db` is MySQL/MariaDB (row locks with FOR UPDATE, INSERT IGNORE); else SQLite. */
export const onMysql = (db: Db): boolean => dataSourceOf(db).options.type === 'mysql';

/** The dialect's "insert unless the key is there": a no-op, not an error, for a row already present. */
export const insertIgnore = (db: Db): string => (onMysql(db) ? 'INSERT IGNORE' : 'INSERT OR IGNORE');

/** BIGINT and INTEGER columns may come back as strings from mysql2; JSON columns as text. */
export const num = (v: unknown): number => (v === null || v === undefined ? (v as never) : Number(v));
export const json = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));
