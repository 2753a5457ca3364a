/**
 * Thin SQL for hot paths (login, token issuance, revocation checks): one statement, `?`
 * placeholders (both better-sqlite3 and mysql2 take them), no query builder. TypeORM still
 * prepares and caches the statements.
 */
import type { DataSource, EntityManager } from 'typeorm';

export type Db = DataSource | EntityManager;

/** Runs a write and returns the number of affected rows, for one-winner conditional updates. */
export async function exec(db: Db, sql: string, params: unknown[] = []): Promise<number> {
  if ('queryRunner' in db && db.queryRunner) {
    return (await db.queryRunner.query(sql, params, true)).affected ?? 0;
  }
  const ds = 'manager' in db ? db : db.connection;
  const qr = ds.createQueryRunner();
  try {
    return (await qr.query(sql, params, true)).affected ?? 0;
  } finally {
    await qr.release();
  }
}

export async function one<T>(db: Db, sql: string, params: unknown[] = []): Promise<T | undefined> {
  const rows = (await db.query(sql, params)) as T[];
  return rows[0];
}

export async function all<T>(db: Db, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await db.query(sql, params)) as T[];
}

/** Runs `fn` in a transaction. */
export function tx<T>(ds: DataSource, fn: (em: EntityManager) => Promise<T>): Promise<T> {
  return ds.transaction(fn);
}

/** BIGINT and INTEGER columns may come back as strings from mysql2; JSON columns as text. */
export const num = (v: unknown): number => (v === null || v === undefined ? (v as never) : Number(v));
export const json = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));
