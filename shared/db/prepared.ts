/**
 * Prepared statements for the hottest read paths (introspection), bypassing TypeORM's query
 * runner: better-sqlite3's statement objects run synchronously through the SQLite gate, and
 * mysql2's `execute` keeps a server-side prepared statement per pooled connection.
 */
import type { DataSource } from 'typeorm';
import { runGated } from './concurrency.js';
import { mysqlPool, sqliteStatement } from './sql.js';

export type PreparedGet<T> = (params: unknown[]) => T | undefined | Promise<T | undefined>;

export function preparedGet<T>(ds: DataSource, sql: string): PreparedGet<T> {
  const stmt = sqliteStatement(ds, sql);
  if (stmt) {
    return (params) => runGated(ds, () => stmt.get(...params) as T | undefined);
  }
  const pool = mysqlPool(ds);
  return (params) =>
    new Promise<T | undefined>((resolve, reject) => {
      pool.execute(sql, params, (err, rows) => (err ? reject(err) : resolve((rows as T[])[0])));
    });
}
