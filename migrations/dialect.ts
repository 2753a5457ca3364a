/**
 * The few places where SQLite and MySQL/MariaDB DDL differ. Column types used by migrations
 * (VARCHAR, BIGINT, INTEGER, TEXT) mean the same on both; MySQL tables additionally get InnoDB
 * and a binary collation, so identifiers compare case-sensitively as they do in SQLite.
 */
import type { QueryRunner } from 'typeorm';

export function isMysql(qr: QueryRunner): boolean {
  const t = qr.connection.options.type;
  return t === 'mysql' || t === 'mariadb';
}

export function tableSuffix(qr: QueryRunner): string {
  return isMysql(qr) ? ' ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin' : '';
}

/** A trigger that refuses UPDATE or DELETE, making a table append-only at the database level. */
export function appendOnlyTriggers(qr: QueryRunner, table: string): string[] {
  const msg = `${table} is append-only`;
  return (['UPDATE', 'DELETE'] as const).map((op) => {
    const head = `CREATE TRIGGER ${table}_no_${op.toLowerCase()} BEFORE ${op} ON ${table}`;
    return isMysql(qr)
      ? `${head} FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '${msg}'`
      : `${head} BEGIN SELECT RAISE(ABORT, '${msg}'); END`;
  });
}

export async function runAll(qr: QueryRunner, statements: string[]): Promise<void> {
  for (const s of statements) await qr.query(s);
}
