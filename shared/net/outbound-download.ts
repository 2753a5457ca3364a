/**
 * Download of a large document (SAML federation metadata) to a file, through the one outbound
 * client (./outbound.ts: https only, guarded lookup, connected peer checked, no redirects,
 * loopback only when the operator allows it) plus what a large body needs: a conditional GET
 * (RFC 9110 §13.1.1 If-None-Match, §13.1.3 If-Modified-Since), the body streamed to disk under
 * a byte cap (never held in memory), an idle timeout between chunks and a total deadline.
 */
import { createWriteStream, rmSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { exchange, OutboundError, type OutboundPolicy } from './outbound.js';

export interface DownloadPolicy extends OutboundPolicy {
  /** No byte received for this long ends the download. */
  idleTimeoutMs: number;
}

export interface Validators {
  etag?: string | null;
  lastModified?: string | null;
}

/** A second consumer of the body (e.g. a verifier), with backpressure. */
export interface DownloadTee {
  /** False when the producer should pause until `onDrain`. */
  push(chunk: Buffer): boolean;
  onDrain(cb: () => void): void;
}

export type DownloadResult =
  | { status: 'not_modified' }
  | { status: 'ok'; file: string; bytes: number; etag: string | null; lastModified: string | null }
  | { status: 'http'; httpStatus: number };

export async function downloadToFile(
  url: string,
  file: string,
  validators: Validators,
  policy: DownloadPolicy,
  /** Made on a 200 response, and fed every chunk as it arrives. */
  tee?: () => DownloadTee,
): Promise<DownloadResult> {
  const headers: Record<string, string> = {
    accept: 'application/samlmetadata+xml, application/xml;q=0.9, text/xml;q=0.8',
    'user-agent': 'iam-metadata-poller/1',
  };
  if (validators.etag) headers['if-none-match'] = validators.etag;
  if (validators.lastModified) headers['if-modified-since'] = validators.lastModified;
  let out: WriteStream | undefined;
  try {
    return await exchange(url, { headers }, policy, async (reply): Promise<DownloadResult> => {
      if (reply.status === 304) return { status: 'not_modified' };
      if (reply.status !== 200) return { status: 'http', httpStatus: reply.status };
      const chunks = reply.chunks();
      const sink = createWriteStream(file, { mode: 0o600 });
      out = sink;
      const writeFailed = new Promise<never>((_, reject) =>
        sink.on('error', (e) => reject(new OutboundError('network', `could not write the download: ${e.message}`))),
      );
      writeFailed.catch(() => undefined);
      const second = tee?.();
      let size = 0;
      const body = async () => {
        for await (const c of chunks) {
          size += c.length;
          // Backpressure: a slow disk or a slow second consumer pauses the socket instead of
          // buffering the body in memory; reading resumes when neither is waiting.
          const waits: Promise<unknown>[] = [];
          if (!sink.write(c)) waits.push(once(sink, 'drain'));
          if (second && !second.push(c)) waits.push(new Promise<void>((resolve) => second.onDrain(resolve)));
          if (waits.length) await Promise.all(waits);
        }
        await new Promise<void>((resolve) => sink.end(resolve));
      };
      await Promise.race([body(), writeFailed]);
      return {
        status: 'ok',
        file,
        bytes: size,
        etag: typeof reply.headers.etag === 'string' ? reply.headers.etag : null,
        lastModified: typeof reply.headers['last-modified'] === 'string' ? reply.headers['last-modified'] : null,
      };
    });
  } catch (e) {
    out?.destroy();
    rmSync(file, { force: true });
    throw e;
  }
}
