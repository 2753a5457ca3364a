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
 *
 * On MySQL/MariaDB the statement goes to mysql2's `execute` (the binary protocol, prepared once
 * per pooled connection and kept there) on the transaction's connection inside one, else on the
 * pool, as prepared.ts does for introspection: the query runner's acquire, logger and release
 * cost the daemon more CPU than a point query, and the server parses each text only once per
 * connection. Errors are mysql2's own (`code` ER_…, `errno`), which retry.ts also reads.
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

export interface MysqlExecutor {
  execute(sql: string, params: unknown[], cb: (err: Error | null, result: unknown) => void): void;
}

/**
 * Where a statement runs on MySQL: the connection of the caller's transaction, or the pool
 * (failover.ts's, which hands out a ready host's connection and takes it back).
 */
function mysqlExecutor(db: Db, ds: DataSource): MysqlExecutor {
  if (!('manager' in db) && db.queryRunner) {
    const conn = (db.queryRunner as unknown as { databaseConnection?: MysqlExecutor }).databaseConnection;
    // A query runner not yet connected (no statement has run on it) has none: TypeORM's own
    // path connects it, so the statements after it share its connection.
    if (conn) return conn;
    return {
      execute: (sql, params, cb) =>
        void db.queryRunner!.query(sql, params, true).then(
          (r) => cb(null, r.records ?? r.raw),
          (e: Error) => cb(e, undefined),
        ),
    };
  }
  return mysqlPool(ds);
}

/** The data source's mysql2 pool (failover.ts's), whose `execute` prepares on the connection it lends. */
export function mysqlPool(ds: DataSource): MysqlExecutor {
  const driver = ds.driver as unknown as { pool?: MysqlExecutor; master?: MysqlExecutor };
  return (driver.master ?? driver.pool)!;
}

/**
 * Runs a statement on MySQL/MariaDB: rows for a read, mysql2's result header (affectedRows)
 * for a write. The binary protocol has no NULL for undefined, which the text protocol wrote.
 */
function onMysqlRun<T>(db: Db, ds: DataSource, sql: string, params: unknown[]): Promise<T> {
  const bound = params.some((p) => p === undefined) ? params.map((p) => (p === undefined ? null : p)) : params;
  const target = mysqlExecutor(db, ds);
  return new Promise<T>((resolve, reject) =>
    target.execute(sql, bound, (err, result) => (err ? reject(err) : resolve(result as T))),
  );
}

/** Runs a write and returns the number of affected rows, for one-winner conditional updates. */
export async function exec(db: Db, sql: string, params: unknown[] = []): Promise<number> {
  const ds = dataSourceOf(db);
  const stmt = sqliteStatement(ds, sql);
  if (stmt)
    return onSqlite(db, ds, stmt, () =>
      stmt.reader ? (stmt.all(...bind(params)), 0) : stmt.run(...bind(params)).changes,
    );
  const result = await onMysqlRun<{ affectedRows?: number }>(db, ds, sql, params);
  return result.affectedRows ?? 0;
}

export async function one<T>(db: Db, sql: string, params: unknown[] = []): Promise<T | undefined> {
  const ds = dataSourceOf(db);
  const stmt = sqliteStatement(ds, sql);
  if (stmt)
    return onSqlite<T | undefined>(db, ds, stmt, () =>
      stmt.reader ? (stmt.get(...bind(params)) as T | undefined) : (stmt.run(...bind(params)), undefined),
    );
  const rows = await onMysqlRun<T[] | object>(db, ds, sql, params);
  return Array.isArray(rows) ? (rows[0] as T | undefined) : undefined;
}

export async function all<T>(db: Db, sql: string, params: unknown[] = []): Promise<T[]> {
  const ds = dataSourceOf(db);
  const stmt = sqliteStatement(ds, sql);
  if (stmt)
    return onSqlite<T[]>(db, ds, stmt, () =>
      stmt.reader ? (stmt.all(...bind(params)) as T[]) : (stmt.run(...bind(params)), []),
    );
  const rows = await onMysqlRun<T[] | object>(db, ds, sql, params);
  return Array.isArray(rows) ? (rows as T[]) : [];
}

/** Whether `db` is MySQL/MariaDB (row locks with FOR UPDATE, INSERT IGNORE); else SQLite. */
export const onMysql = (db: Db): boolean => dataSourceOf(db).options.type === 'mysql';

/** The dialect's "insert unless the key is there": a no-op, not an error, for a row already present. */
export const insertIgnore = (db: Db): string => (onMysql(db) ? 'INSERT IGNORE' : 'INSERT OR IGNORE');

/** BIGINT and INTEGER columns may come back as strings from mysql2; JSON columns as text. */
export const num = (v: unknown): number => (v === null || v === undefined ? (v as never) : Number(v));
export const json = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));
