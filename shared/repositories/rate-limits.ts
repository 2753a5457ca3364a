/**
 * The throttling budgets' counters (`rate_limits`), as a store for rate-limiter-flexible, so
 * every daemon on the database shares one budget per key (docs/security.md).
 *
 * Why not the library's own SQL stores: they run their statements on the connection they are
 * given, outside our transactions, and the SQLite gate (shared/db/concurrency.ts) refuses writes
 * outside its transactions. Here every change is one transaction of ours: an upsert of the row
 * (which takes its row lock on MySQL/MariaDB, and the write lock on SQLite) and the read of the
 * result, so two daemons consuming the same key at once never both see the old count.
 *
 * Platform-level rows: the key of a tenant's budget contains the tenant id, but no tenant reads
 * its rows, so there is no TenantScope. Keys are stored hashed (SHA-256): a key may name an
 * email address or an IP, which need not sit in the database in the clear.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { RateLimiterRes, type IRateLimiterOptions } from 'rate-limiter-flexible';
import type { DataSource } from 'typeorm';
import type { Db } from '../db/index.js';
import { deleteInChunks } from '../db/purge.js';
import { exec, num, one } from '../db/sql.js';

/** What the store hands the library after a change: the counter and its window's end. */
interface StoredCounter {
  points: number;
  expire: number | null;
}

// The library's typings declare the store base class, but its entry point (CommonJS, no
// `exports` map) does not export it: it is taken from its own file, the one every store extends.
const RateLimiterStoreAbstract = createRequire(import.meta.url)(
  'rate-limiter-flexible/lib/RateLimiterStoreAbstract.js',
) as typeof import('rate-limiter-flexible').RateLimiterStoreAbstract;

const isMysql = (ds: DataSource): boolean => ds.options.type === 'mysql' || ds.options.type === 'mariadb';

// A live window accumulates; an expired one starts again from these points (the `?`s after the
// values are now, twice). On MySQL the assignments run left to right, so `points` is set while
// `expire_at` is still the old one. The _SET forms set the counter and window outright (a block).
const MYSQL_ADD = `INSERT INTO rate_limits (rl_key, points, expire_at) VALUES (?, ?, ?)
  ON DUPLICATE KEY UPDATE
    points = IF(expire_at IS NULL OR expire_at > ?, points + VALUES(points), VALUES(points)),
    expire_at = IF(expire_at IS NULL OR expire_at > ?, expire_at, VALUES(expire_at))`;
const SQLITE_ADD = `INSERT INTO rate_limits (rl_key, points, expire_at) VALUES (?, ?, ?)
  ON CONFLICT (rl_key) DO UPDATE SET
    points = CASE WHEN expire_at IS NULL OR expire_at > ? THEN points + excluded.points ELSE excluded.points END,
    expire_at = CASE WHEN expire_at IS NULL OR expire_at > ? THEN expire_at ELSE excluded.expire_at END`;
const MYSQL_SET = `INSERT INTO rate_limits (rl_key, points, expire_at) VALUES (?, ?, ?)
  ON DUPLICATE KEY UPDATE points = VALUES(points), expire_at = VALUES(expire_at)`;
const SQLITE_SET = `INSERT INTO rate_limits (rl_key, points, expire_at) VALUES (?, ?, ?)
  ON CONFLICT (rl_key) DO UPDATE SET points = excluded.points, expire_at = excluded.expire_at`;

const counterOf = (r: { points: unknown; expire_at: unknown }): StoredCounter => ({
  points: num(r.points),
  expire: r.expire_at == null ? null : num(r.expire_at),
});

/** The stored form of a limiter's key (`<keyPrefix>:<key>`). */
export function rateLimitKey(rlKey: string): string {
  return createHash('sha256').update(rlKey).digest('base64url');
}

/**
 * A rate-limiter-flexible store over `rate_limits`. Construct it like any of the library's
 * limiters (`points`, `duration`, `blockDuration`, `keyPrefix`), with the data source.
 */
export class DbRateLimiter extends RateLimiterStoreAbstract {
  private readonly ds: DataSource;

  constructor(ds: DataSource, opts: Omit<IRateLimiterOptions, 'storeClient'>) {
    super({ ...opts, storeClient: ds });
    this.ds = ds;
  }

  /**
   * Adds `points` to the key's counter, or starts a new window when there is none or it has
   * expired; with `forceExpire`, sets the counter and window outright (a block). The result is
   * the one this change produced: on SQLite the upsert returns it, on MySQL it is read in the
   * upsert's transaction (MySQL has no RETURNING).
   */
  protected async _upsert(
    rlKey: string,
    points: number,
    msDuration: number,
    forceExpire = false,
  ): Promise<StoredCounter> {
    const key = rateLimitKey(rlKey);
    const now = Date.now();
    const expire = msDuration > 0 ? now + msDuration : null;
    const params = forceExpire ? [key, points, expire] : [key, points, expire, now, now];
    if (!isMysql(this.ds)) {
      // One statement, atomic by itself: the upsert returns the counter it left (RETURNING), so
      // no transaction is needed to read the result this change produced.
      const r = await one<{ points: unknown; expire_at: unknown }>(
        this.ds,
        `${forceExpire ? SQLITE_SET : SQLITE_ADD} RETURNING points, expire_at`,
        params,
      );
      return counterOf(r!);
    }
    return this.ds.transaction(async (tx) => {
      await exec(tx, forceExpire ? MYSQL_SET : MYSQL_ADD, params);
      const r = await one<{ points: unknown; expire_at: unknown }>(
        tx,
        'SELECT points, expire_at FROM rate_limits WHERE rl_key = ?',
        [key],
      );
      return counterOf(r!);
    });
  }

  /** The key's live counter, or null (none, or its window has ended). */
  protected async _get(rlKey: string): Promise<StoredCounter | null> {
    const r = await one<{ points: unknown; expire_at: unknown }>(
      this.ds,
      'SELECT points, expire_at FROM rate_limits WHERE rl_key = ? AND (expire_at IS NULL OR expire_at > ?)',
      [rateLimitKey(rlKey), Date.now()],
    );
    return r ? counterOf(r) : null;
  }

  protected async _delete(rlKey: string): Promise<boolean> {
    const n = await this.ds.transaction((tx) =>
      exec(tx, 'DELETE FROM rate_limits WHERE rl_key = ?', [rateLimitKey(rlKey)]),
    );
    return n > 0;
  }

  /** The library's answer from a stored counter (as its own SQL stores build it). */
  protected _getRateLimiterRes(_rlKey: string, changedPoints: number, result: StoredCounter): RateLimiterRes {
    const first = changedPoints === result.points;
    const consumed = first ? changedPoints : result.points;
    return new RateLimiterRes(
      Math.max(this.points - consumed, 0),
      result.expire !== null ? Math.max(result.expire - Date.now(), 0) : -1,
      consumed,
      first,
    );
  }
}

/** Deletes counters whose window ended before `before` (the auth-purge job). */
export class RateLimitHousekeeping {
  constructor(private readonly db: Db) {}

  expired(before: number, signal?: AbortSignal): Promise<number> {
    return deleteInChunks(this.db, {
      table: 'rate_limits',
      key: 'rl_key',
      where: 'expire_at < ?',
      params: [before],
      signal,
    });
  }
}
