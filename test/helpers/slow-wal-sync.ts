/**
 * Loaded into a daemon with `--import` by the faults lane: every fdatasync the process makes
 * through a FileHandle (the WAL sync of shared/db/wal-durability.ts) takes SLOW_WAL_SYNC_MS
 * longer, so that a batch is almost always committed and waiting for its sync when the test
 * kills the daemon (test/faults/commit-sync.test.ts).
 */
import { open, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const delayMs = Number(process.env.SLOW_WAL_SYNC_MS ?? '150');
// FileHandle is not exported: its prototype is taken from a handle on a scratch file.
const scratch = join(tmpdir(), `iam-slow-sync-${process.pid}`);
const probe = await open(scratch, 'w');
const proto = Object.getPrototypeOf(probe) as { datasync: (this: unknown) => Promise<void> };
await probe.close();
await unlink(scratch);
const datasync = proto.datasync;
proto.datasync = async function (this: unknown) {
  await new Promise((r) => setTimeout(r, delayMs));
  return datasync.call(this);
};
