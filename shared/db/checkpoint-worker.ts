/**
 * The daemon's checkpoint thread (wal-durability.ts): a connection of its own that runs a
 * PASSIVE checkpoint on a timer, so that copying WAL pages into the database and syncing both
 * files happens beside the event loop instead of inside a request's COMMIT. PASSIVE does not
 * wait for readers or the writer: what it cannot copy now it copies at a later tick.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

const { path, everyMs } = workerData as { path: string; everyMs: number };
const db = new Database(path, { fileMustExist: true });
// Never wait synchronously for a lock: a busy tick is simply skipped.
db.pragma('busy_timeout = 0');
db.pragma('synchronous = FULL');

const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (e) {
    // SQLITE_BUSY: another checkpoint (a CLI closing its connection) runs; try at the next tick.
    if ((e as { code?: string }).code !== 'SQLITE_BUSY') throw e;
  }
}, everyMs);

parentPort!.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
