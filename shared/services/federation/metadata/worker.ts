/**
 * The verification worker: streams a document through the verifier (./stream-verify.ts) in a
 * worker thread, so the CPU of a 50 MB parse never runs on the daemon's event loop, under a
 * heap cap (`resourceLimits`, ./verifier.ts). The document comes from a file (`file`), or in
 * chunks posted by the downloader, each acknowledged so the sender can bound what is in flight.
 */
import { createReadStream, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { MetadataError } from './scan.js';
import { MetadataStreamVerifier } from './stream-verify.js';

// The signature pass is background work: on Linux this thread takes the lowest CPU priority
// (nice 19; /proc/thread-self names its thread id), so on a busy machine the daemon's event
// loop, serving requests, is scheduled first. Elsewhere it keeps the daemon's priority.
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, 19);
} catch {
  /* no /proc/thread-self: not Linux */
}

const { file, pinnedPem } = workerData as { file?: string; pinnedPem: string[] };
const port = parentPort!;

function fail(e: unknown): void {
  if (e instanceof MetadataError) port.postMessage({ ok: false, code: e.code, message: e.message, details: e.details });
  else if (e instanceof TypeError && /encoded data was not valid/i.test(e.message))
    port.postMessage({ ok: false, code: 'metadata_xml', message: 'the document is not valid UTF-8' });
  else
    port.postMessage({
      ok: false,
      code: 'metadata_verify_failed',
      message: String((e as Error).message).slice(0, 200),
    });
}

if (file) {
  try {
    const v = new MetadataStreamVerifier(pinnedPem);
    for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 }))
      v.write(chunk as string);
    port.postMessage({ ok: true, result: v.finish() });
  } catch (e) {
    fail(e);
  }
} else {
  let failed = false;
  let v: MetadataStreamVerifier | undefined;
  // XML 1.0 §4.3.3: UTF-8 unless declared otherwise; SAML metadata is UTF-8 in practice, and
  // invalid bytes are refused rather than replaced.
  const decoder = new TextDecoder('utf-8', { fatal: true });
  port.on('message', (m: { chunk?: Uint8Array; end?: boolean }) => {
    if (failed) return;
    try {
      v ??= new MetadataStreamVerifier(pinnedPem);
      if (m.chunk) {
        const text = decoder.decode(m.chunk, { stream: true });
        if (text) v.write(text);
        port.postMessage({ ack: m.chunk.byteLength });
      } else if (m.end) {
        const tail = decoder.decode();
        if (tail) v.write(tail);
        port.postMessage({ ok: true, result: v.finish() });
      }
    } catch (e) {
      failed = true;
      fail(e);
    }
  });
}
