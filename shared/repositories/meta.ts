/**
 * Service metadata: `service_meta` (name → value, set once per database) and the migrations
 * table TypeORM keeps. Platform-level rows, no tenant.
 */
import type { Db } from '../db/index.js';
import { all, exec, one } from '../db/sql.js';

export class ServiceMetaRepository {
  constructor(private readonly db: Db) {}

  /**
   * Records `name` = `value` unless the name is recorded already; returns whether this call
   * recorded it. A refused insert (another process won, or it was recorded earlier) is not an
   * error: the caller reads the stored value.
   */
  async insertIfAbsent(name: string, value: string, now: number): Promise<boolean> {
    try {
      await exec(this.db, 'INSERT INTO service_meta (name, value, updated_at) VALUES (?, ?, ?)', [name, value, now]);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Sets `name` to `value`, recorded or not (a platform setting an operator changes: the default
   * registration tenant, docs/registration.md). An update, else an insert, else (another
   * process inserted it meanwhile) the update again.
   */
  async set(name: string, value: string, now: number): Promise<void> {
    const sql = 'UPDATE service_meta SET value = ?, updated_at = ? WHERE name = ?';
    if ((await exec(this.db, sql, [value, now, name])) > 0) return;
    if (await this.insertIfAbsent(name, value, now)) return;
    await exec(this.db, sql, [value, now, name]);
  }

  async get(name: string): Promise<string | undefined> {
    const row = await one<{ value: string }>(this.db, 'SELECT value FROM service_meta WHERE name = ?', [name]);
    return row?.value;
  }

  /** The names of the applied migrations, in the order they were applied. */
  async appliedMigrations(): Promise<string[]> {
    const rows = await all<{ name: string }>(this.db, 'SELECT name FROM migrations ORDER BY timestamp, id');
    return rows.map((r) => r.name);
  }
}
