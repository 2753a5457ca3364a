/**
 * The MySQL/MariaDB connection pool behind TypeORM (its `driver` option): one mysql2 pool per
 * host of IAM_DATABASE_URL's host list, and Galera awareness.
 *
 * Failover. New connections go to the first host in the list that answers and is ready; a host
 * that refuses, resets, times out or is not ready is skipped for `retryDownMs` and the next one
 * is tried at once, so a daemon whose node dies is on the next node with its next connection
 * (docs/deployment.md has the lane's figures). Connections to the dead node close with it and
 * mysql2 drops them from its pool; a statement that finds its host gone or not ready has the
 * host's pooled connections checked again before reuse (see watch). The first host is tried
 * again once its pause ends, so the daemon goes back to its own node when that returns. A
 * statement that was running when the node died fails, as it would on a single server; nothing
 * is replayed blindly (a COMMIT cut off is ambiguous).
 *
 * Galera. A node can accept connections before it may serve queries (joining, or cut off from
 * the primary component, where every statement fails with ER_UNKNOWN_COM_ERROR "WSREP has not
 * yet prepared node for application use"): a new connection is checked (`wsrep_ready`) before
 * it is handed out. Writes are certified cluster-wide before COMMIT returns, but other nodes
 * apply them asynchronously, so a read on node B just after a commit on node A can miss it
 * (a revoked token still active). Every session on a Galera node therefore sets
 * `wsrep_sync_wait` (1: reads wait until the node has applied everything committed
 * cluster-wide before they began), the causal reads docs/deployment.md measures. A server
 * without wsrep pays one query per host, at its first connection, and nothing after.
 */
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import type { Pool, PoolConnection, PoolOptions } from 'mysql2';

/** mysql2 is loaded with the first pool: a daemon or `iam` on SQLite never pays its import. */
const mysql = (): typeof import('mysql2') => createRequire(import.meta.url)('mysql2') as typeof import('mysql2');

export interface DbHost {
  host: string;
  port: number;
}

/** Where the pool reports failovers (the daemon's logger). */
export interface FailoverLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface FailoverOptions {
  hosts: DbHost[];
  /** How long a host that failed is passed over before it is tried again. */
  retryDownMs?: number;
  /** wsrep_sync_wait for every session on a Galera node (0 turns causal reads off). */
  syncWait?: number;
  log?: FailoverLog;
}

/** errno of "WSREP has not yet prepared node for application use". */
const ER_UNKNOWN_COM_ERROR = 1047;
const ER_UNKNOWN_SYSTEM_VARIABLE = 1193;

/** Errors that say the host is gone or cannot serve, not that the statement was wrong. */
const HOST_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_UNKNOWN_COM_ERROR',
  'NODE_NOT_READY',
]);

interface ErrLike {
  code?: string;
  errno?: number;
}

export function isHostError(e: unknown): boolean {
  const err = e as ErrLike;
  return (!!err?.code && HOST_ERRORS.has(err.code)) || err?.errno === ER_UNKNOWN_COM_ERROR;
}

class NodeNotReady extends Error {
  readonly code = 'NODE_NOT_READY';
}

type Cb<T> = (err: Error | null, value?: T) => void;

const q = <T>(c: PoolConnection, sql: string): Promise<T> =>
  new Promise((resolve, reject) => c.query(sql, (err, rows) => (err ? reject(err) : resolve(rows as T))));

/** The part of mysql2's Pool that TypeORM's MySQL driver and shared/db/prepared.ts use. */
export class FailoverPool extends EventEmitter {
  private readonly pools: (Pool | undefined)[];
  private readonly downUntil: number[];
  /** Per host: whether wsrep is on there (undefined until its first connection says). */
  private readonly galera: (boolean | undefined)[];
  /** Per connection: the host generation it was checked in (see hostFailed). */
  private readonly prepared = new WeakMap<object, number>();
  /** Per host: bumped when the host fails, so its pooled connections are checked again. */
  private readonly generation: number[];
  /** Connections that saw their host fail: destroyed, not pooled, when released. */
  private readonly doomed = new WeakSet<object>();
  private current = 0;
  private readonly retryDownMs: number;
  private readonly syncWait: number;

  constructor(
    private readonly options: PoolOptions,
    private readonly failover: FailoverOptions,
  ) {
    super();
    const n = failover.hosts.length;
    this.pools = new Array<Pool | undefined>(n).fill(undefined);
    this.downUntil = new Array<number>(n).fill(0);
    this.galera = new Array<boolean | undefined>(n).fill(undefined);
    this.generation = new Array<number>(n).fill(0);
    this.retryDownMs = failover.retryDownMs ?? 1_000;
    this.syncWait = failover.syncWait ?? 1;
  }

  /** The mysql2 pools opened so far, one per host that was tried (the metrics read them). */
  hostPools(): Pool[] {
    return this.pools.filter((p): p is Pool => p !== undefined);
  }

  /** The host new connections go to now (0-based index in the list). */
  get currentHost(): number {
    return this.current;
  }

  private pool(i: number): Pool {
    let p = this.pools[i];
    if (!p) {
      const { host, port } = this.failover.hosts[i];
      p = mysql().createPool({ ...this.options, host, port });
      this.pools[i] = p;
    }
    return p;
  }

  /** Hosts in list order, those passed over (still in their pause) last, as a last resort. */
  private order(): number[] {
    const now = Date.now();
    const all = this.failover.hosts.map((_, i) => i);
    const up = all.filter((i) => this.downUntil[i] <= now);
    const down = all.filter((i) => this.downUntil[i] > now).sort((a, b) => this.downUntil[a] - this.downUntil[b]);
    return [...up, ...down];
  }

  private fromPool(i: number): Promise<PoolConnection> {
    return new Promise((resolve, reject) => this.pool(i).getConnection((err, c) => (err ? reject(err) : resolve(c))));
  }

  /** Once per connection: is the node ready (Galera), and its session settings. */
  private async prepare(c: PoolConnection, i: number): Promise<void> {
    if (this.galera[i] === false) return;
    let row: { w: unknown; r: unknown } | undefined;
    try {
      [row] = await q<{ w: unknown; r: unknown }[]>(
        c,
        'SELECT @@wsrep_on AS w, (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS ' +
          "WHERE VARIABLE_NAME = 'WSREP_READY') AS r",
      );
    } catch (e) {
      // MySQL has no wsrep variables at all.
      if ((e as ErrLike).errno !== ER_UNKNOWN_SYSTEM_VARIABLE) throw e;
    }
    const on = !!row && Number(row.w) === 1;
    this.galera[i] = on;
    if (!on) return;
    if (String(row!.r).toUpperCase() !== 'ON') throw new NodeNotReady(`host ${i + 1} is not ready (wsrep_ready OFF)`);
    if (this.syncWait > 0) await q(c, `SET SESSION wsrep_sync_wait = ${Number(this.syncWait)}`);
  }

  private async acquire(): Promise<PoolConnection> {
    let last: unknown;
    for (const i of this.order()) {
      let c: PoolConnection | undefined;
      try {
        c = await this.fromPool(i);
        const seen = this.prepared.get(c);
        if (seen !== this.generation[i]) {
          await this.prepare(c, i);
          if (seen === undefined) this.watch(c, i);
          this.prepared.set(c, this.generation[i]);
        }
        this.downUntil[i] = 0;
        if (this.current !== i) {
          const from = this.current;
          this.current = i;
          this.failover.log?.info(
            { database_host: this.label(i), previous_host: this.label(from) },
            'database connections go to another host',
          );
        }
        return c;
      } catch (e) {
        c?.destroy();
        if (!isHostError(e)) throw e;
        last = e;
        this.downUntil[i] = Date.now() + this.retryDownMs;
        this.failover.log?.warn(
          { database_host: this.label(i), err: (e as ErrLike).code ?? String(e) },
          this.failover.hosts.length > 1 ? 'database host failed; trying the next' : 'database host failed',
        );
      }
    }
    throw last;
  }

  /**
   * Watches a connection's statements: one that fails because the host is gone or not ready
   * (a node that left the primary component answers ER_UNKNOWN_COM_ERROR to everything) passes
   * the host over, has the host's other pooled connections checked again before reuse, and is
   * itself destroyed when released. Without this, connections opened while the node was fine
   * would keep failing until they closed.
   */
  private watch(c: PoolConnection, i: number): void {
    const conn = c as unknown as Record<'query' | 'execute', (...a: unknown[]) => unknown> & { release(): void };
    for (const m of ['query', 'execute'] as const) {
      const original = conn[m].bind(c);
      conn[m] = (...args: unknown[]) => {
        const k = args.length - 1;
        const cb = args[k];
        if (typeof cb === 'function') {
          args[k] = (err: unknown, ...rest: unknown[]) => {
            if (err && isHostError(err)) this.hostFailed(i, err, c);
            (cb as (...x: unknown[]) => void)(err, ...rest);
          };
        }
        return original(...args);
      };
    }
    const release = conn.release.bind(c);
    conn.release = () => (this.doomed.has(c) ? c.destroy() : release());
  }

  private hostFailed(i: number, err: unknown, c: PoolConnection): void {
    this.doomed.add(c);
    if (this.downUntil[i] > Date.now()) return; // already known
    this.downUntil[i] = Date.now() + this.retryDownMs;
    this.generation[i]++;
    this.failover.log?.warn(
      { database_host: this.label(i), err: (err as ErrLike).code ?? String(err) },
      'database host failed during a statement; new connections go to the next host',
    );
  }

  private label(i: number): string {
    const h = this.failover.hosts[i];
    return `${h.host}:${h.port}`;
  }

  getConnection(cb: Cb<PoolConnection>): void {
    this.acquire().then(
      (c) => cb(null, c),
      (e: Error) => cb(e),
    );
  }

  /** As mysql2's Pool.execute: a pooled connection's prepared statement, released after. */
  execute(sql: string, params: unknown[], cb: (err: Error | null, rows?: unknown, fields?: unknown) => void): void {
    this.getConnection((err, c) => {
      if (err || !c) return cb(err);
      c.execute(sql, params as never, (e: Error | null, rows: unknown, fields: unknown) => {
        c.release();
        cb(e, rows, fields);
      });
    });
  }

  end(cb?: (err?: Error | null) => void): void {
    Promise.all(
      this.pools.map((p) => (p ? new Promise<void>((resolve) => p.end(() => resolve())) : Promise.resolve())),
    ).then(
      () => cb?.(null),
      (e: Error) => cb?.(e),
    );
  }
}

/** A stand-in for the mysql2 module in TypeORM's `driver` option: its pools fail over. */
export function failoverDriver(opts: FailoverOptions): { createPool(options: PoolOptions): FailoverPool } {
  return { createPool: (options) => new FailoverPool(options, opts) };
}
