/**
 * Outbound HTTPS download of a large document (SAML federation metadata) to a file, under the
 * same SSRF rules as ./safe-fetch.ts (https only, guarded DNS lookup, peer address checked on
 * connect, no redirects, loopback only when the operator allows it) plus what a large body
 * needs: a conditional GET (RFC 9110 §13.1.1 If-None-Match, §13.1.3 If-Modified-Since), the
 * body streamed to disk under a byte cap (never held in memory), an idle timeout between
 * chunks and a total deadline.
 */
import { createWriteStream, rmSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import type { Socket } from 'node:net';
import { rootCertificates, type TLSSocket } from 'node:tls';
import { checkOutboundUrl, guardedLookup, OutboundError, refusedAddress } from './safe-fetch.js';

export interface DownloadPolicy {
  allowLoopback: boolean;
  extraCaPem?: string;
  connectTimeoutMs: number;
  /** No byte received for this long ends the download. */
  idleTimeoutMs: number;
  totalTimeoutMs: number;
  maxBytes: number;
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

export function downloadToFile(
  url: string,
  file: string,
  validators: Validators,
  policy: DownloadPolicy,
  /** Made on a 200 response, and fed every chunk as it arrives. */
  tee?: () => DownloadTee,
): Promise<DownloadResult> {
  let u: URL;
  try {
    u = checkOutboundUrl(url, policy);
  } catch (e) {
    return Promise.reject(e instanceof Error ? e : new Error(String(e)));
  }
  return new Promise((resolve, reject) => {
    let settled = false;
    let out: ReturnType<typeof createWriteStream> | undefined;
    const finish = (err: Error | undefined, value?: DownloadResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      clearTimeout(connect);
      clearTimeout(idle);
      if (err) {
        req.destroy();
        out?.destroy();
        rmSync(file, { force: true });
        reject(err);
      } else resolve(value!);
    };
    const headers: Record<string, string> = {
      accept: 'application/samlmetadata+xml, application/xml;q=0.9, text/xml;q=0.8',
      'user-agent': 'iam-metadata-poller/1',
    };
    if (validators.etag) headers['if-none-match'] = validators.etag;
    if (validators.lastModified) headers['if-modified-since'] = validators.lastModified;
    const opts: RequestOptions = {
      method: 'GET',
      protocol: 'https:',
      hostname: u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname,
      port: u.port || 443,
      path: `${u.pathname}${u.search}`,
      headers,
      agent: false,
      lookup: guardedLookup(policy),
      ...(policy.extraCaPem ? { ca: [...rootCertificates, policy.extraCaPem] } : {}),
      rejectUnauthorized: true,
    };
    const req = request(opts);
    const total = setTimeout(
      () => finish(new OutboundError('timeout', `no complete answer within ${policy.totalTimeoutMs} ms`)),
      policy.totalTimeoutMs,
    );
    const connect = setTimeout(
      () => finish(new OutboundError('timeout', `could not connect within ${policy.connectTimeoutMs} ms`)),
      policy.connectTimeoutMs,
    );
    let idle: NodeJS.Timeout | undefined;
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(
        () => finish(new OutboundError('timeout', `no data for ${policy.idleTimeoutMs} ms`)),
        policy.idleTimeoutMs,
      );
    };
    req.on('socket', (socket: Socket) => {
      const check = () => {
        const peer = socket.remoteAddress;
        const cls = peer === undefined ? 'invalid' : refusedAddress(peer, policy);
        if (cls) finish(new OutboundError('blocked_address', `connected peer ${peer ?? '(unknown)'} is ${cls}`));
      };
      if (!socket.connecting && socket.remoteAddress) check();
      else socket.once('connect', check);
      (socket as TLSSocket).once('secureConnect', () => {
        clearTimeout(connect);
        touch();
      });
    });
    req.on('error', (e) => {
      if (e instanceof OutboundError) return finish(e);
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
        return finish(new OutboundError('dns', `${u.hostname} could not be resolved`));
      finish(new OutboundError('network', `request failed: ${code ?? e.message}`));
    });
    req.on('response', (res) => {
      touch();
      if (res.statusCode === 304) {
        res.resume();
        return finish(undefined, { status: 'not_modified' });
      }
      if (res.statusCode !== 200) {
        res.resume();
        return finish(undefined, { status: 'http', httpStatus: res.statusCode ?? 0 });
      }
      const declared = Number(res.headers['content-length'] ?? NaN);
      if (declared > policy.maxBytes)
        return finish(new OutboundError('too_large', `response larger than ${policy.maxBytes} bytes`));
      out = createWriteStream(file, { mode: 0o600 });
      out.on('error', (e) => finish(new OutboundError('network', `could not write the download: ${e.message}`)));
      const second = tee?.();
      let size = 0;
      // Backpressure: a slow disk or a slow second consumer pauses the socket instead of
      // buffering the body in memory; it resumes when neither is waiting.
      let waiting = 0;
      const wait = () => {
        if (waiting++ === 0) res.pause();
      };
      const release = () => {
        if (--waiting === 0 && !settled) res.resume();
      };
      res.on('data', (c: Buffer) => {
        touch();
        size += c.length;
        if (size > policy.maxBytes)
          return finish(new OutboundError('too_large', `response larger than ${policy.maxBytes} bytes`));
        if (!out!.write(c)) {
          wait();
          out!.once('drain', release);
        }
        if (second && !second.push(c)) {
          wait();
          second.onDrain(release);
        }
      });
      res.on('error', (e) => finish(new OutboundError('network', `response failed: ${e.message}`)));
      res.on('end', () => {
        if (settled) return;
        out!.end(() =>
          finish(undefined, {
            status: 'ok',
            file,
            bytes: size,
            etag: typeof res.headers.etag === 'string' ? res.headers.etag : null,
            lastModified: typeof res.headers['last-modified'] === 'string' ? res.headers['last-modified'] : null,
          }),
        );
      });
    });
    req.end();
  });
}
