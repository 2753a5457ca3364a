/**
 * TypeORM runs every query of a better-sqlite3 DataSource on one connection. With concurrent
 * requests that is wrong by default: a query from request B issued while request A's
 * transaction is open joins A's transaction (and is rolled back with it), and a second
 * `transaction()` becomes a savepoint inside the first.
 *
 * This gate makes each transaction exclusive: it holds a lock for its whole duration, and a
 * query outside any transaction waits for the lock too. AsyncLocalStorage tells the queries
 * of the transaction's own callback (which must not wait for themselves) from everyone else's.
 * better-sqlite3 executes synchronously, so waiting costs little more than a promise hop.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource } from 'typeorm';
import { retryTransient } from './retry.js';

const INSTALLED = Symbol('iam.sqliteGate');
const GATE = Symbol('iam.sqliteGateRunner');

interface Gate { run<T>(fn: () => T): T | Promise<T> }

/**
 * Runs a synchronous better-sqlite3 call under the gate: at once when no transaction is open
 * (no promise hop at all), else after the open transaction ends. For hot-path prepared
 * statements that bypass TypeORM.
 */
export function runGated<T>(ds: DataSource, fn: () => T): T | Promise<T> {
  const gate = (ds as DataSource & { [GATE]?: Gate })[GATE];
  return gate ? gate.run(fn) : fn();
}

export function installSqliteGate(ds: DataSource): void {
  if (ds.options.type !== 'better-sqlite3') return;
  const target = ds as DataSource & { [INSTALLED]?: boolean };
  if (target[INSTALLED]) return;
  target[INSTALLED] = true;

  const inTx = new AsyncLocalStorage<true>();
  let tail: Promise<unknown> = Promise.resolve();
  let pending = 0;
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    pending++;
    const run = tail.then(fn, fn);
    tail = run.then(() => { pending--; }, () => { pending--; });
    return run;
  };
  (ds as DataSource & { [GATE]?: Gate })[GATE] = {
    run<T>(fn: () => T): T | Promise<T> {
      // Idle connection, or the caller's own transaction: run now, synchronously.
      if (pending === 0 || inTx.getStore()) return fn();
      return exclusive(async () => fn());
    },
  };

  const mgr = ds.manager;
  const transaction = mgr.transaction.bind(mgr) as (...a: unknown[]) => Promise<unknown>;
  (mgr as unknown as { transaction: (...a: unknown[]) => Promise<unknown> }).transaction = (...args: unknown[]) =>
    inTx.getStore() ? transaction(...args) : exclusive(() => inTx.run(true, () => transaction(...args)));

  // The driver hands out one query runner for the connection; gate its query method.
  const qr = ds.createQueryRunner() as unknown as { query: (...a: unknown[]) => Promise<unknown> };
  const query = qr.query.bind(qr);
  qr.query = (...args: unknown[]) => {
    // BEGIN IMMEDIATE takes the write lock up front, waiting under busy_timeout. TypeORM's
    // deferred BEGIN would take it at the first write instead, and when another process (a
    // second daemon on the same file) has written since this transaction's first read, that
    // upgrade fails at once with SQLITE_BUSY, busy_timeout or not.
    if (args[0] === 'BEGIN TRANSACTION') args[0] = 'BEGIN IMMEDIATE TRANSACTION';
    return inTx.getStore() ? query(...args) : exclusive(() => query(...args));
  };
}

/**
 * On MySQL/MariaDB, InnoDB resolves lock conflicts between concurrent transactions (gap locks
 * taken by an UPDATE before an INSERT, for example) by aborting one with ER_LOCK_DEADLOCK,
 * and its documentation says to retry. Top-level transactions are retried here, so every
 * caller gets that for free; a transaction callback must therefore keep side effects outside
 * the database (mail kicks, signing) until after it returns, as ours do.
 */
export function installTransactionRetry(ds: DataSource): void {
  const t = ds.options.type;
  if (t !== 'mysql' && t !== 'mariadb') return;
  const target = ds as DataSource & { [INSTALLED]?: boolean };
  if (target[INSTALLED]) return;
  target[INSTALLED] = true;
  const mgr = ds.manager;
  const transaction = mgr.transaction.bind(mgr) as (...a: unknown[]) => Promise<unknown>;
  (mgr as unknown as { transaction: (...a: unknown[]) => Promise<unknown> }).transaction = (...args: unknown[]) =>
    retryTransient(() => transaction(...args), 10_000);
}
