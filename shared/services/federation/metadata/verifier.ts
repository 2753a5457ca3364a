/**
 * Runs ./worker.ts: verification and inventory off the event loop, in a worker thread whose
 * V8 heap is capped (`resourceLimits`), so one huge or hostile document costs at most the cap
 * and never stalls the requests the daemon is serving.
 *
 * Two ways in: `verifyInWorker` reads a file; `StreamingVerification` takes the bytes while
 * they are downloaded (the poller's way), so the signature pass overlaps the transfer instead
 * of following it. Chunks are acknowledged by the worker and the producer is paused while more
 * than WINDOW_BYTES are unacknowledged: a slow verifier never makes the daemon buffer the body.
 */
import { Worker } from 'node:worker_threads';
import { MetadataError } from './scan.js';
import type { StreamVerifyResult } from './stream-verify.js';

export interface VerifyOptions {
  /** Old-generation heap cap of the worker, MiB. */
  maxHeapMb: number;
  /** Wall-clock limit, ms. */
  timeoutMs: number;
}

export const DEFAULT_VERIFY_OPTIONS: VerifyOptions = { maxHeapMb: 128, timeoutMs: 300_000 };

/** Unacknowledged bytes in flight to the worker before the producer is paused. */
const WINDOW_BYTES = 8 * 1024 * 1024;
/** Bytes gathered before a message to the worker. */
const BATCH_BYTES = 1024 * 1024;

interface WorkerAnswer {
  ok?: boolean;
  ack?: number;
  result?: StreamVerifyResult;
  code?: string;
  message?: string;
  details?: Record<string, unknown>;
}

function startWorker(
  workerData: { file?: string; pinnedPem: string[] },
  opts: VerifyOptions,
  onAck: (n: number) => void,
): { worker: Worker; result: Promise<StreamVerifyResult> } {
  const worker = new Worker(new URL('./worker.js', import.meta.url), {
    workerData,
    resourceLimits: { maxOldGenerationSizeMb: opts.maxHeapMb, maxYoungGenerationSizeMb: 64 },
  });
  const result = new Promise<StreamVerifyResult>((resolve, reject) => {
    let settled = false;
    const done = (f: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      f();
      void worker.terminate();
    };
    const timer = setTimeout(
      () =>
        done(() =>
          reject(new MetadataError('metadata_verify_timeout', `verification took longer than ${opts.timeoutMs} ms`)),
        ),
      opts.timeoutMs,
    );
    worker.on('message', (m: WorkerAnswer) => {
      if (m.ack !== undefined) return onAck(m.ack);
      done(() => (m.ok ? resolve(m.result!) : reject(new MetadataError(m.code!, m.message!, m.details ?? {}))));
    });
    worker.on('error', (e: Error & { code?: string }) =>
      done(() =>
        reject(
          e.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new MetadataError('metadata_too_large', `verification needed more than ${opts.maxHeapMb} MiB`)
            : new MetadataError('metadata_verify_failed', 'the verification worker failed'),
        ),
      ),
    );
    worker.on('exit', (code) =>
      done(() => reject(new MetadataError('metadata_verify_failed', `the verification worker exited (${code})`))),
    );
  });
  return { worker, result };
}

export function verifyInWorker(
  file: string,
  pinnedPem: string[],
  opts: VerifyOptions = DEFAULT_VERIFY_OPTIONS,
): Promise<StreamVerifyResult> {
  return startWorker({ file, pinnedPem }, opts, () => undefined).result;
}

/** A verification fed chunk by chunk (see the module comment). */
export class StreamingVerification {
  readonly result: Promise<StreamVerifyResult>;
  private readonly worker: Worker;
  private unacked = 0;
  private drains: (() => void)[] = [];
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(pinnedPem: string[], opts: VerifyOptions = DEFAULT_VERIFY_OPTIONS) {
    const started = startWorker({ pinnedPem }, opts, (n) => {
      this.unacked -= n;
      if (this.unacked <= WINDOW_BYTES / 2) for (const d of this.drains.splice(0)) d();
    });
    this.worker = started.worker;
    this.result = started.result;
    // A refusal found early (a DOCTYPE, wrapping) is read by the caller after the download;
    // until then it must not count as unhandled.
    this.result.catch(() => undefined);
  }

  /**
   * Takes a chunk; false when the producer should wait for `onDrain`. TLS hands the body over
   * in records of 16 KiB; they are sent to the worker in batches of about 1 MiB (one message,
   * one decode, one parser call each instead of sixty).
   */
  push(chunk: Buffer): boolean {
    this.unacked += chunk.length;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes >= BATCH_BYTES) this.flush();
    return this.unacked <= WINDOW_BYTES;
  }

  private flush(): void {
    if (!this.pendingBytes) return;
    const batch = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    // Transferred, not copied: the batch is a fresh buffer of its own.
    const view = new Uint8Array(batch.buffer, batch.byteOffset, batch.byteLength);
    if (batch.byteOffset === 0 && batch.byteLength === batch.buffer.byteLength)
      this.worker.postMessage({ chunk: view }, [batch.buffer]);
    else this.worker.postMessage({ chunk: view });
  }

  onDrain(cb: () => void): void {
    if (this.unacked <= WINDOW_BYTES / 2) cb();
    else this.drains.push(cb);
  }

  end(): Promise<StreamVerifyResult> {
    this.flush();
    this.worker.postMessage({ end: true });
    return this.result;
  }

  abort(): void {
    for (const d of this.drains.splice(0)) d();
    void this.worker.terminate();
  }
}
