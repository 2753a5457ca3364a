/**
 * A webhook receiver on loopback for the plugin tests: a real HTTPS server (a throwaway
 * certificate from https-issuer.ts; the daemon trusts it through IAM_OUTBOUND_CA_FILE) that
 * records every request and answers each path with the status the test sets. `delayMs` holds
 * each request that long before it is recorded and answered (a slow receiver), so a test can
 * kill the sender with deliveries in flight.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { makeCert, type TestCert } from './https-issuer.js';

export interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: Record<string, unknown>;
}

export interface WebhookReceiver {
  url: string;
  cert: TestCert;
  received: Received[];
  /** The status answered on `path` from now on (200 by default). */
  setStatus(path: string, status: number): void;
  waitFor(pred: (r: Received) => boolean, timeoutMs?: number): Promise<Received>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(opts: { delayMs?: number } = {}): Promise<WebhookReceiver> {
  const cert = makeCert();
  const received: Received[] = [];
  const statuses = new Map<string, number>();
  const waiters = new Set<{ pred: (r: Received) => boolean; resolve: (r: Received) => void }>();
  const server: Server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    req.on('end', () => (opts.delayMs ? void setTimeout(answer, opts.delayMs) : answer()));
    const answer = () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(body) as Record<string, unknown>;
      } catch {
        /* recorded as is */
      }
      const r: Received = { path: req.url ?? '/', headers: req.headers, body, json };
      const status = statuses.get(r.path) ?? 200;
      if (status >= 200 && status < 300) {
        received.push(r);
        for (const w of waiters)
          if (w.pred(r)) {
            waiters.delete(w);
            w.resolve(r);
          }
      }
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end('{}');
    };
  });
  // A sender killed mid-request resets its connection: its business, not the receiver's.
  server.on('clientError', (_e, sock) => sock.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    cert,
    received,
    setStatus: (path, status) => statuses.set(path, status),
    waitFor: (pred, timeoutMs = 20_000) => {
      const found = received.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const w = {
          pred,
          resolve: (r: Received) => {
            clearTimeout(timer);
            resolve(r);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(new Error(`no matching webhook request within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(w);
      });
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(cert.dir, { recursive: true, force: true });
    },
  };
}

/** Checks `X-IAM-Signature: t=…,v1=…` (HMAC-SHA256 over "<t>.<body>") with `secret`. */
export function signatureValid(r: Received, secret: string): boolean {
  const header = String(r.headers['x-iam-signature'] ?? '');
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!m) return false;
  const want = createHmac('sha256', secret).update(`${m[1]}.${r.body}`).digest();
  return timingSafeEqual(want, Buffer.from(m[2], 'hex'));
}
