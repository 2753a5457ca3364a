/**
 * Database errors that background workers expect and survive: lock contention, and the
 * unique-key violation a racing insert produces.
 */

interface DriverishError {
  code?: string;
  errno?: number;
  message?: string;
  driverError?: { code?: string; errno?: number };
}

const codeOf = (e: unknown): string | undefined => {
  const err = e as DriverishError;
  return err?.driverError?.code ?? err?.code;
};

export function isUniqueViolation(e: unknown): boolean {
  const code = codeOf(e);
  return (
    code === 'ER_DUP_ENTRY' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    /UNIQUE constraint failed|Duplicate entry/.test((e as Error)?.message ?? '')
  );
}

const errnoOf = (e: unknown): number | undefined => {
  const err = e as DriverishError;
  return err?.driverError?.errno ?? err?.errno;
};

/**
 * Contention that goes away by itself: SQLite's writer lock (the jobs connection has no busy
 * timeout, see data-source.ts), InnoDB deadlocks and lock-wait timeouts, and Galera's
 * certification conflicts: a transaction that lost to another node's write of the same rows
 * fails at COMMIT, or is aborted by the winner's replicated write, with ER_LOCK_DEADLOCK (1213,
 * "WSREP detected deadlock/conflict"); nothing of it was applied, so it may run again.
 */
export function isTransient(e: unknown): boolean {
  const code = codeOf(e);
  const errno = errnoOf(e);
  return (
    code === 'SQLITE_BUSY' ||
    code === 'SQLITE_LOCKED' ||
    code === 'ER_LOCK_DEADLOCK' ||
    code === 'ER_LOCK_WAIT_TIMEOUT' ||
    errno === 1213 ||
    errno === 1205 ||
    /database is locked|SQLITE_BUSY|WSREP detected deadlock/.test((e as Error)?.message ?? '')
  );
}

/** mysql2's codes for a server that is gone, going, or not there yet. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_SERVER_SHUTDOWN', // 1053: the server is shutting down
  'ER_CONNECTION_KILLED', // 1927 (MariaDB): a shutdown killed the connection mid-statement
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_GONE_ERROR',
  'ER_SERVER_LOST',
  'CR_SERVER_GONE_ERROR',
  'CR_SERVER_LOST',
]);
const UNAVAILABLE_ERRNOS = new Set([1053, 1927, 2002, 2003, 2006, 2013]);
const UNAVAILABLE_MESSAGE = new RegExp(
  [
    'connection is in closed state',
    'Connection lost',
    'server closed the connection',
    'Pool is closed',
    'Server shutdown in progress',
    'Connection was killed',
  ].join('|'),
  'i',
);

/**
 * The database cannot be reached right now (a restart, a failover, the network): not the
 * request's fault and not a bug. The error renderer answers 503 `temporarily_unavailable`
 * with Retry-After for it instead of a 500 (docs/errors.md). mysql2's pool drops a connection
 * that failed this way, so once the server is back the next query opens a fresh one.
 */
export function isDatabaseUnavailable(e: unknown): boolean {
  for (let err = e as DriverishError & { cause?: unknown }, depth = 0; err && depth < 4; depth++) {
    if (err.code && UNAVAILABLE_CODES.has(err.code)) return true;
    if (typeof err.errno === 'number' && UNAVAILABLE_ERRNOS.has(err.errno)) return true;
    const d = err.driverError;
    if (d?.code && UNAVAILABLE_CODES.has(d.code)) return true;
    if (d?.errno && UNAVAILABLE_ERRNOS.has(d.errno)) return true;
    if (UNAVAILABLE_MESSAGE.test(err.message ?? '')) return true;
    err = err.cause as typeof err;
  }
  return false;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `fn`, retrying transient contention with short jittered sleeps until `timeoutMs` has
 * passed. The sleeps are asynchronous, so the transaction holding the lock can finish.
 */
export async function retryTransient<T>(fn: () => Promise<T>, timeoutMs = 5_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (!isTransient(e) || Date.now() >= end) throw e;
      await sleep(Math.min(50, 1 + i * 2) * (0.5 + Math.random()));
    }
  }
}
