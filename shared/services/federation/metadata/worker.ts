/**
 * The verification worker: streams the downloaded file through the verifier
 * (./stream-verify.ts) in a worker thread, so the CPU of a 50 MB parse never runs on the
 * daemon's event loop, under a heap cap (`resourceLimits`, ./verifier.ts).
 */
import { createReadStream } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { MetadataError } from './scan.js';
import { MetadataStreamVerifier } from './stream-verify.js';

const { file, pinnedPem } = workerData as { file: string; pinnedPem: string[] };
try {
  const v = new MetadataStreamVerifier(pinnedPem);
  for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 }))
    v.write(chunk as string);
  parentPort!.postMessage({ ok: true, result: v.finish() });
} catch (e) {
  if (e instanceof MetadataError)
    parentPort!.postMessage({ ok: false, code: e.code, message: e.message, details: e.details });
  else
    parentPort!.postMessage({
      ok: false,
      code: 'metadata_verify_failed',
      message: String((e as Error).message).slice(0, 200),
    });
}
