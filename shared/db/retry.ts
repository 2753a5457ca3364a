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
