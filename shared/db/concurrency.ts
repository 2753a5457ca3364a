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
 *
 * Group commit. A COMMIT is the most expensive statement of a login (it appends every page
 * the transaction dirtied to the WAL), and most logins' writes are a few rows each. So the
 * physical transaction stays open until the end of the event-loop turn (setImmediate): every
 * logical transaction that runs in that turn is a SAVEPOINT inside it (RELEASE on success,
 * ROLLBACK TO on failure, so a failed one undoes only its own writes), every write outside a
 * transaction joins it too, and one COMMIT ends them all. A caller is answered only after that
 * COMMIT, so nothing is reported done that a crash could still lose; if the COMMIT fails,
 * every caller in the group gets the error. Reads outside a transaction run at once, inside
 * the open one: they may see a row another request wrote in the same turn, whose author has
 * not been answered yet (and so cannot have handed out anything that refers to it).
 *
 * On a durable (FULL) grouped connection the COMMIT itself does not wait for the disk: the
 * group's callers are answered after an fdatasync of the WAL run off the event loop, and
 * checkpoints run in a worker thread (wal-durability.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource } from 'typeorm';
import { retryTransient } from './retry.js';
import { asyncDurability, type SqlitePragmas, type WalSync } from './wal-durability.js';

const INSTALLED = Symbol('iam.sqliteGate');
const GATE = Symbol('iam.sqliteGateRunner');

interface Gate {
  run<T>(fn: () => T, write: boolean): T | Promise<T>;
  /** Physical COMMITs so far (tests read it to see that transactions were grouped). */
  commits: number;
  /** Transactions and queries holding or waiting for the gate (the metrics read it, shared/db/pool-stats.ts). */
  readonly busy: number;
  /** The WAL's asynchronous sync, on a durable grouped connection (wal-durability.ts). */
  readonly walSync?: WalSync;
}

/** The better-sqlite3 connection underneath TypeORM's driver. */
interface SqliteConn extends SqlitePragmas {
  exec(sql: string): unknown;
  inTransaction: boolean;
}

/** One physical transaction and the callers waiting for its COMMIT. */
interface Group {
  done: Promise<void>;
  resolve(): void;
  reject(e: unknown): void;
  members: number;
}

/** The logical transaction a callback runs in: the group it joined, once it has begun. */
interface TxStore {
  group?: Group | undefined;
  open: boolean;
}

/** Most logical transactions per COMMIT: bounds how long the write lock is held in one turn. */
const MAX_GROUP = 64;

/**
 * Runs a synchronous better-sqlite3 call under the gate: at once when no transaction is open
 * (no promise hop at all), else after the open transaction ends. For hot-path prepared
 * statements that bypass TypeORM. A `write` outside a transaction joins the open group and
 * resolves after its COMMIT.
 */
export function runGated<T>(ds: DataSource, fn: () => T, write = false): T | Promise<T> {
  const gate = (ds as DataSource & { [GATE]?: Gate })[GATE];
  return gate ? gate.run(fn, write) : fn();
}

/** The gate of a SQLite DataSource, if it has one. */
export function sqliteGate(ds: DataSource): Pick<Gate, 'commits' | 'busy' | 'walSync'> | undefined {
  return (ds as DataSource & { [GATE]?: Gate })[GATE];
}

const READ = /^\s*(SELECT|PRAGMA|EXPLAIN)\b/i;

/**
 * TypeORM's query runner for better-sqlite3 (typeorm/driver/sqlite-abstract) opens, commits and
 * rolls back a transaction with exactly these statements; the gate recognises them by their
 * text. typeorm is pinned to an exact version in package.json, and
 * test/shared/typeorm-statements.test.ts fails if an upgrade changes them.
 */
export const TYPEORM_BEGIN = 'BEGIN TRANSACTION';
export const TYPEORM_COMMIT = 'COMMIT';
export const TYPEORM_ROLLBACK = 'ROLLBACK';

/** A write outside any transaction arrived while a transaction the gate did not open was in progress. */
export class ForeignTransactionError extends Error {
  constructor() {
    super(
      'SQLite gate: a write outside a transaction arrived while a transaction opened outside transaction() was ' +
        'in progress; it would have joined that transaction and been reported done before its COMMIT',
    );
    this.name = 'ForeignTransactionError';
  }
}

/**
 * `groupCommit`: only for a process's one connection to the file (the daemon's, when it runs
 * as one process). Two connections grouping in one process would deadlock: one holds the write
 * lock until its turn ends, while the other's BEGIN IMMEDIATE waits synchronously under
 * busy_timeout and so stops that turn from ending. Without it, every transaction commits
 * when it ends, as a group of one.
 */
export function installSqliteGate(
  ds: DataSource,
  opts: { groupCommit?: boolean; onCheckpointError?: (e: unknown) => void } = {},
): void {
  const grouping = opts.groupCommit === true;
  if (ds.options.type !== 'better-sqlite3') return;
  const target = ds as DataSource & { [INSTALLED]?: boolean };
  if (target[INSTALLED]) return;
  target[INSTALLED] = true;
  const conn = (ds.driver as unknown as { databaseConnection: SqliteConn }).databaseConnection;
  // Only the grouped connection: it is the process's one writer, and its callers already wait
  // for their group's COMMIT, so they can as well wait for the sync after it.
  const durability = grouping ? asyncDurability(conn, opts.onCheckpointError) : undefined;
  /** Answers a committed group: at once, or once its WAL frames are on the disk. */
  const settle = (g: Group) => {
    if (durability)
      durability.sync.flush().then(
        () => g.resolve(),
        (e: unknown) => g.reject(e),
      );
    else g.resolve();
  };

  const inTx = new AsyncLocalStorage<TxStore>();
  let tail: Promise<unknown> = Promise.resolve();
  let pending = 0;
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    pending++;
    const run = tail.then(fn, fn);
    tail = run.then(
      () => {
        pending--;
      },
      () => {
        pending--;
      },
    );
    return run;
  };

  // ---- group commit ----
  let group: Group | undefined;
  /** A logical transaction is between its SAVEPOINT and its RELEASE / ROLLBACK TO. */
  let txOpen = false;
  /** The turn ended while a logical transaction was open: commit as soon as it ends. */
  let commitWhenIdle = false;

  const commit = () => {
    const g = group;
    if (!g) return;
    group = undefined;
    commitWhenIdle = false;
    try {
      conn.exec('COMMIT');
      gate.commits++;
      settle(g);
    } catch (e) {
      try {
        if (conn.inTransaction) conn.exec('ROLLBACK');
      } catch {
        /* already rolled back */
      }
      g.reject(e);
    }
  };
  const endOfTurn = () => {
    if (txOpen) commitWhenIdle = true;
    else commit();
  };
  /** Joins the open group, or opens one (BEGIN IMMEDIATE: the write lock up front, see below). */
  const join = (): Group => {
    if (group) return group;
    conn.exec('BEGIN IMMEDIATE');
    let resolve!: () => void;
    let reject!: (e: unknown) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    done.catch(() => {
      /* each waiter handles it; none may be left */
    });
    group = { done, resolve, reject, members: 0 };
    if (grouping) setImmediate(endOfTurn);
    return group;
  };
  /**
   * Some errors (SQLITE_FULL, SQLITE_IOERR, …) make SQLite roll back the whole transaction,
   * and with it the group's other members: they must not be told their writes committed.
   */
  const checkAlive = (e: unknown) => {
    if (group && !conn.inTransaction) {
      const g = group;
      group = undefined;
      g.reject(e);
    }
  };
  const afterTx = () => {
    txOpen = false;
    if (!grouping || commitWhenIdle || (group && group.members >= MAX_GROUP)) commit();
  };

  const gate: Gate = {
    commits: 0,
    walSync: durability?.sync,
    get busy() {
      return pending;
    },
    run<T>(fn: () => T, write: boolean): T | Promise<T> {
      if (inTx.getStore()) return fn();
      const step = (): T | Promise<T> => {
        // A transaction the gate did not open (TypeORM's own, outside transaction()) is in
        // progress: a write now would join it and be acknowledged before its COMMIT, or lost with
        // its ROLLBACK. That is a bug in the caller, so it fails loudly instead.
        if (write && conn.inTransaction && !group) throw new ForeignTransactionError();
        if (!write || !grouping) return fn();
        const g = join();
        let v: T;
        try {
          v = fn();
        } catch (e) {
          checkAlive(e);
          throw e;
        }
        return g.done.then(() => v);
      };
      // Idle connection: run now, synchronously.
      if (pending === 0) return step();
      return exclusive(async () => step());
    },
  };
  (ds as DataSource & { [GATE]?: Gate })[GATE] = gate;

  const mgr = ds.manager;
  const transaction = mgr.transaction.bind(mgr) as (...a: unknown[]) => Promise<unknown>;
  (mgr as unknown as { transaction: (...a: unknown[]) => Promise<unknown> }).transaction = (...args: unknown[]) => {
    if (inTx.getStore()) return transaction(...args); // nested: TypeORM makes it a savepoint
    const store: TxStore = { open: false };
    return exclusive(() => inTx.run(store, () => transaction(...args))).then(async (result) => {
      if (store.group) await store.group.done;
      return result;
    });
  };

  // The driver hands out one query runner for the connection; gate its query method.
  const qr = ds.createQueryRunner() as unknown as { query: (...a: unknown[]) => Promise<unknown> };
  const query = qr.query.bind(qr);
  qr.query = (...args: unknown[]) => {
    const store = inTx.getStore();
    if (store) {
      // The outermost BEGIN / COMMIT / ROLLBACK of a logical transaction (TypeORM issues these
      // at depth 0; nested ones are its own savepoints, passed through).
      if (args[0] === TYPEORM_BEGIN) return Promise.resolve().then(() => begin(store));
      // Never the real COMMIT / ROLLBACK: that would end every other member's work too. One
      // whose BEGIN failed has nothing of its own to end.
      if (args[0] === TYPEORM_COMMIT || args[0] === TYPEORM_ROLLBACK)
        return Promise.resolve().then(() => {
          if (store.open) end(store, args[0] === TYPEORM_COMMIT);
        });
      return query(...args);
    }
    return exclusive(async () => {
      // A transaction TypeORM opens by itself (outside transaction()) cannot nest in the group.
      if (typeof args[0] === 'string' && /^\s*BEGIN\b/i.test(args[0])) {
        commit();
        // BEGIN IMMEDIATE takes the write lock up front, waiting under busy_timeout. A
        // deferred BEGIN would take it at the first write instead, and when another process
        // (a second daemon on the same file) has written since this transaction's first read,
        // that upgrade fails at once with SQLITE_BUSY, busy_timeout or not.
        if (args[0] === TYPEORM_BEGIN) args[0] = 'BEGIN IMMEDIATE TRANSACTION';
        return query(...args);
      }
      // Such a transaction's COMMIT (the migrations' at start-up) is not followed by a sync of
      // its own: it acknowledges nothing to anyone, and the first group's fdatasync, which
      // flushes the whole WAL file, makes it durable with that group. A power loss before that
      // loses only the migration, which the next start applies again.
      const g = group;
      const r = await query(...args).catch((e: unknown) => {
        checkAlive(e);
        throw e;
      });
      if (g && typeof args[0] === 'string' && !READ.test(args[0])) await g.done;
      return r;
    });
  };

  function begin(store: TxStore): void {
    const g = join();
    conn.exec('SAVEPOINT iam_tx');
    store.group = g;
    store.open = true;
    txOpen = true;
  }

  function end(store: TxStore, ok: boolean): void {
    store.open = false;
    try {
      if (ok) {
        conn.exec('RELEASE iam_tx');
        store.group!.members++;
      } else if (conn.inTransaction) {
        conn.exec('ROLLBACK TO iam_tx');
        conn.exec('RELEASE iam_tx');
        store.group = undefined; // nothing of it is left to wait for
      }
    } catch (e) {
      checkAlive(e);
      throw e;
    } finally {
      if (!ok) checkAlive(new Error('SQLite rolled back the whole transaction'));
      afterTx();
    }
  }

  // Whatever the last turn left open is committed before the connection closes.
  const destroy = ds.destroy.bind(ds);
  ds.destroy = async () => {
    const last = group;
    commit();
    await last?.done.catch(() => undefined);
    await durability?.stop();
    return destroy();
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
