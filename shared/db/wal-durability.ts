/**
 * Durable SQLite commits without blocking the event loop (the daemon's grouped connection).
 *
 * With `synchronous = FULL` in WAL mode SQLite calls fsync on the WAL inside every COMMIT, and
 * better-sqlite3 runs the COMMIT on the main thread: every login waited, with the whole event
 * loop, for the disk. Here the connection runs with `synchronous = NORMAL` (the COMMIT writes
 * the WAL frames to the OS and returns) and the group's callers are answered only after an
 * fdatasync of the WAL file, run on libuv's thread pool (`WalSync`). The acknowledgement
 * contract is FULL's: nothing is reported done before its WAL frames are on the disk. NORMAL
 * keeps the other syncs FULL makes (the WAL before a checkpoint, the database after one, the
 * WAL header when the file is reused: https://sqlite.org/pragma.html#pragma_synchronous).
 *
 * Checkpoints leave the COMMIT too: the connection's automatic checkpoint (which copies pages
 * and syncs two files inside whichever COMMIT crosses 1,000 pages) is off, and a worker thread
 * with a connection of its own runs a PASSIVE checkpoint every quarter second
 * (checkpoint-worker.ts). PASSIVE never waits for the writer, and the writer never waits for
 * it. If the worker dies, the automatic checkpoint is switched back on.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';

/** The better-sqlite3 calls this needs. */
export interface SqlitePragmas {
  pragma(sql: string, opts?: { simple: boolean }): unknown;
  readonly name: string;
}

interface Waiter {
  promise: Promise<void>;
  resolve(): void;
  reject(e: unknown): void;
}

function waiter(): Waiter {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined); // each caller handles it
  return { promise, resolve, reject };
}

/**
 * fdatasync of the WAL, coalesced: a flush asked while one runs waits for the next one (which
 * starts after the running one and so covers every COMMIT before the ask); every ask made while
 * that next one waits shares it. One sync in flight and one queued, whatever the load.
 */
export class WalSync {
  private file: Promise<FileHandle> | undefined;
  private running = false;
  private queued: Waiter | undefined;
  /**
   * After a failed fdatasync Linux may have dropped the dirty pages it could not write, so a
   * later sync that succeeds proves nothing: every later flush fails with the first error
   * (as PostgreSQL treats an fsync failure) until the process restarts.
   */
  private failed: Error | undefined;
  /** Completed fdatasyncs (the tests read it). */
  syncs = 0;

  constructor(
    private readonly walPath: string,
    private readonly datasync: (f: FileHandle) => Promise<void> = (f) => f.datasync(),
  ) {}

  /** Resolves once everything committed before the call is on the disk. */
  flush(): Promise<void> {
    if (this.failed !== undefined) return Promise.reject(this.failed);
    if (!this.running) return this.start();
    this.queued ??= waiter();
    return this.queued.promise;
  }

  private start(): Promise<void> {
    this.running = true;
    const done = (async () => {
      // Opened once, on the first COMMIT (by then SQLite has created the WAL file).
      this.file ??= open(this.walPath, 'r');
      await this.datasync(await this.file);
      this.syncs++;
    })();
    const next = () => {
      this.running = false;
      const q = this.queued;
      this.queued = undefined;
      if (q)
        this.flush().then(
          () => q.resolve(),
          (e: unknown) => q.reject(e),
        );
    };
    done.then(next, (e: unknown) => {
      this.failed ??= e instanceof Error ? e : new Error(String(e));
      next();
    });
    return done;
  }

  async close(): Promise<void> {
    const f = this.file;
    this.file = undefined;
    await (await f?.catch(() => undefined))?.close();
  }
}

/** How often the worker runs a PASSIVE checkpoint. */
const CHECKPOINT_EVERY_MS = 250;

export interface AsyncDurability {
  sync: WalSync;
  /** Stops the checkpoint worker and closes the WAL handle (before the connection closes). */
  stop(): Promise<void>;
}

/**
 * Switches a FULL connection to NORMAL + asynchronous WAL sync + a checkpoint worker. Returns
 * undefined (and changes nothing) for a connection the operator set to NORMAL: it never
 * promised the disk, so it keeps SQLite's own behaviour, or for an in-memory database.
 */
export function asyncDurability(
  conn: SqlitePragmas,
  onWorkerError?: (e: unknown) => void,
): AsyncDurability | undefined {
  if (conn.pragma('synchronous', { simple: true }) !== 2 || conn.name === ':memory:' || conn.name === '') return;
  conn.pragma('synchronous = NORMAL');
  conn.pragma('wal_autocheckpoint = 0');
  const sync = new WalSync(`${conn.name}-wal`);
  const worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), {
    workerData: { path: conn.name, everyMs: CHECKPOINT_EVERY_MS },
  });
  // A checkpoint worker that stops must not leave the WAL to grow without bound.
  let stopping = false;
  const fallBack = (e: unknown) => {
    if (stopping) return;
    conn.pragma('wal_autocheckpoint = 1000');
    onWorkerError?.(e);
  };
  worker.on('error', fallBack);
  worker.on('exit', (code) => fallBack(new Error(`the checkpoint worker exited with code ${code}`)));
  worker.unref();
  return {
    sync,
    async stop() {
      stopping = true;
      // Asked to close its connection between ticks (terminating it mid-checkpoint would not).
      const exited = new Promise((r) => worker.once('exit', r));
      worker.postMessage('stop');
      const timeout = setTimeout(() => void worker.terminate(), 2_000);
      await exited;
      clearTimeout(timeout);
      await sync.close();
    },
  };
}
