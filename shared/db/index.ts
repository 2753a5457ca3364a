/**
 * What the layers above the data layer may know of the database: a handle to it (`Database`),
 * a transaction on it (`Tx`), and either (`Db`). Services take these types from here and pass
 * them to repositories; they never import TypeORM, the SQL helpers or the SQLite gate
 * (docs/architecture.md, test/architecture.test.ts).
 *
 * `db.transaction(async (tx) => …)` runs a transaction: on SQLite under the gate
 * (concurrency.ts), on MySQL/MariaDB retried on deadlock. Keep side effects outside the
 * database (mail kicks, signing) until it has returned.
 */
import type { DataSource, EntityManager } from 'typeorm';

export type Database = DataSource;
export type Tx = EntityManager;
export type Db = Database | Tx;

export { isDatabaseUnavailable, isTransient, isUniqueViolation, retryTransient } from './retry.js';
export { poolStats, type PoolStats } from './pool-stats.js';
