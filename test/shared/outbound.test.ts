/**
 * shared/net/outbound.ts and outbound-download.ts against a real HTTPS server on loopback: a
 * streamed body under backpressure survives the server closing the connection (the case that
 * crashes undici 7.30's HTTP/1 parser, nodejs/undici#5360), and the total deadline covers the
 * consumer of the body too.
 */
import test from 'ava';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_OUTBOUND_POLICY, exchange, OutboundError, type OutboundPolicy } from '../../shared/net/outbound.js';
import { downloadToFile } from '../../shared/net/outbound-download.js';
import { makeCert, type TestCert } from '../helpers/https-issuer.js';

const BODY = Buffer.alloc(512 * 1024, 0x61);
let cert: TestCert;
let server: Server;
let base: string;
let policy: OutboundPolicy;

test.before(async () => {
  cert = makeCert();
  server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    // The whole body, then FIN: the connection closes while the client may still be paused.
    res.writeHead(200, { 'content-type': 'application/xml', connection: 'close' });
    res.end(BODY);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  policy = { ...DEFAULT_OUTBOUND_POLICY, allowLoopback: true, extraCaPem: cert.cert, maxBytes: 1024 * 1024 };
});
test.after.always(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  if (cert) rmSync(cert.dir, { recursive: true, force: true });
});

test('a download whose second consumer applies backpressure completes when the server closes the connection', async (t) => {
  const file = join(tmpdir(), `outbound-${process.pid}-${Date.now()}.xml`);
  t.teardown(() => rmSync(file, { force: true }));
  let seen = 0;
  const r = await downloadToFile(`${base}/md.xml`, file, {}, { ...policy, idleTimeoutMs: 5_000 }, () => ({
    // Always "full": the producer waits for every drain, which comes a little later.
    push: (c) => ((seen += c.length), false),
    onDrain: (cb) => void setTimeout(cb, 5),
  }));
  t.is(r.status, 'ok');
  t.is(seen, BODY.length);
  t.true(readFileSync(file).equals(BODY));
});

test('the total deadline covers the consumer of the body', async (t) => {
  const err = await exchange(`${base}/x`, {}, { ...policy, totalTimeoutMs: 300 }, () => new Promise<never>(() => {}))
    .then(() => undefined)
    .catch((e: unknown) => e);
  t.true(err instanceof OutboundError);
  t.is((err as OutboundError).reason, 'timeout');
});
