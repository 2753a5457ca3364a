/**
 * The verification worker: reads the downloaded file, verifies it against the pinned
 * certificates and streams the inventory out of the signed content (./verify.ts). It runs in a
 * worker thread with a heap cap so that a 50 MB DOM neither blocks the daemon's event loop
 * nor can grow without bound: the worker dies with ERR_WORKER_OUT_OF_MEMORY instead.
 */
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { MetadataError } from './scan.js';
import { verifyMetadata } from './verify.js';

const { file, pinnedPem } = workerData as { file: string; pinnedPem: string[] };
try {
  let xml = readFileSync(file, 'utf8');
  if (xml.charCodeAt(0) === 0xfeff) xml = xml.slice(1);
  const result = verifyMetadata({ xml, pinnedPem });
  parentPort!.postMessage({ ok: true, result });
} catch (e) {
  if (e instanceof MetadataError)
    parentPort!.postMessage({ ok: false, code: e.code, message: e.message, details: e.details });
  else parentPort!.postMessage({ ok: false, code: 'metadata_verify_failed', message: (e as Error).message.slice(0, 200) });
}
