/**
 * A loopback HTTPS server for client ID metadata document tests: each path answers what the
 * test set for it (status, headers, body, an optional delay), and every request is counted by
 * path, so a test can tell whether the daemon fetched (or fetched again). The certificate is a
 * test-made one (https-issuer.ts `makeCert`); the daemon trusts it through IAM_OUTBOUND_CA_FILE.
 */
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { makeCert, type TestCert } from './https-issuer.js';

export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  body: string;
  /** Milliseconds before answering (a server that does not answer in time). */
  delayMs?: number;
}

export interface DocumentServer {
  /** https://127.0.0.1:<port> */
  origin: string;
  cert: TestCert;
  hits: Record<string, number>;
  /** Sets what `path` answers. */
  serve(path: string, answer: Answer): string;
  /** Serves `doc` as JSON at `path`, with `client_id` set to the path's URL unless the doc sets one. */
  serveDocument(path: string, doc: Record<string, unknown>, headers?: Record<string, string>): string;
  close(): Promise<void>;
}

export async function startDocumentServer(): Promise<DocumentServer> {
  const cert = makeCert();
  const hits: Record<string, number> = {};
  const answers = new Map<string, Answer>();
  const server: Server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    hits[path] = (hits[path] ?? 0) + 1;
    const a = answers.get(path) ?? { status: 404, body: '{}' };
    const send = () => {
      if (res.destroyed) return;
      res.writeHead(a.status ?? 200, { 'content-type': 'application/json', ...a.headers });
      res.end(a.body);
    };
    if (a.delayMs) setTimeout(send, a.delayMs).unref();
    else send();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const serve = (path: string, answer: Answer) => {
    answers.set(path, answer);
    return `${origin}${path}`;
  };
  return {
    origin,
    cert,
    hits,
    serve,
    serveDocument: (path, doc, headers) =>
      serve(path, { body: JSON.stringify({ client_id: `${origin}${path}`, ...doc }), headers }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(cert.dir, { recursive: true, force: true });
    },
  };
}
