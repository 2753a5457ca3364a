/**
 * A connection pool's state for the metrics (docs/metrics.md, iam_db_pool_*), read from the
 * driver without a query.
 *
 * MySQL/MariaDB: the mysql2 pool under TypeORM's driver keeps its connections and waiters in
 * three queues (all connections, free ones, requests waiting for one), which mysql2 does not
 * expose through an API; they are read here, in the one place that knows the driver, and a
 * driver that lacks them reports nothing rather than a wrong number.
 *
 * SQLite: a DataSource is one better-sqlite3 connection, so the "pool" has one connection, in
 * use while the gate (concurrency.ts) runs a transaction or a query for someone, and the
 * others wait for the gate.
 */
import type { DataSource } from 'typeorm';
import { sqliteGate } from './concurrency.js';
import { FailoverPool } from './failover.js';

export interface PoolStats {
  idle: number;
  inUse: number;
  max: number;
  waiting: number;
}

interface Mysql2Pool {
  _allConnections?: { length: number };
  _freeConnections?: { length: number };
  _connectionQueue?: { length: number };
  config?: { connectionLimit?: number };
}

export function poolStats(ds: DataSource): PoolStats | undefined {
  if (!ds.isInitialized) return undefined;
  if (ds.options.type === 'better-sqlite3') {
    const gate = sqliteGate(ds);
    const conn = (ds.driver as unknown as { databaseConnection?: { inTransaction?: boolean } }).databaseConnection;
    const busy = gate?.busy ?? 0;
    const inUse = busy > 0 || conn?.inTransaction ? 1 : 0;
    return { idle: 1 - inUse, inUse, max: 1, waiting: Math.max(0, busy - 1) };
  }
  // With the failover driver (failover.ts) the driver's pool holds one mysql2 pool per host.
  const top = (ds.driver as unknown as { pool?: unknown }).pool;
  const pools = (top instanceof FailoverPool ? top.hostPools() : [top]) as (Mysql2Pool | undefined)[];
  let all = 0;
  let free = 0;
  let queued = 0;
  let max = 0;
  for (const pool of pools) {
    const a = pool?._allConnections?.length;
    const f = pool?._freeConnections?.length;
    const q = pool?._connectionQueue?.length;
    if (a === undefined || f === undefined || q === undefined) return undefined;
    all += a;
    free += f;
    queued += q;
    max = Math.max(max, pool?.config?.connectionLimit ?? a);
  }
  if (pools.length === 0) return undefined; // no connection asked for yet
  return { idle: free, inUse: all - free, max, waiting: queued };
}
