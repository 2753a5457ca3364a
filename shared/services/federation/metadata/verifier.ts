/**
 * Runs ./worker.ts on one downloaded file: verification and inventory off the event loop, in
 * a worker thread whose V8 heap is capped (`resourceLimits`), so one huge or hostile document
 * costs at most the cap and never stalls the requests the daemon is serving.
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

export function verifyInWorker(
  file: string,
  pinnedPem: string[],
  opts: VerifyOptions = DEFAULT_VERIFY_OPTIONS,
): Promise<StreamVerifyResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./worker.js', import.meta.url), {
      workerData: { file, pinnedPem },
      resourceLimits: { maxOldGenerationSizeMb: opts.maxHeapMb, maxYoungGenerationSizeMb: 64 },
    });
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
    worker.on(
      'message',
      (m: {
        ok: boolean;
        result?: StreamVerifyResult;
        code?: string;
        message?: string;
        details?: Record<string, unknown>;
      }) => done(() => (m.ok ? resolve(m.result!) : reject(new MetadataError(m.code!, m.message!, m.details ?? {})))),
    );
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
}
