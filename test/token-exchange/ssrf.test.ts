/**
 * shared/net: the address classifier and the SSRF-safe fetch, against a real HTTPS server on
 * loopback (self-signed certificate made with openssl).
 */
import test from 'ava';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { classifyAddress } from '../../shared/net/address.js';
import {
  checkOutboundUrl,
  DEFAULT_OUTBOUND_POLICY,
  fetchJson,
  guardedLookup,
  OutboundError,
  type OutboundPolicy,
} from '../../shared/net/outbound.js';
import { issuerProblem } from '../../shared/services/token-exchange/settings.js';
import { makeCert, type TestCert } from '../helpers/https-issuer.js';

test('IPv4: every special range is classified, public addresses are not', (t) => {
  const cases: [string, string | undefined][] = [
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'this-network'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.254', 'cgnat'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['192.0.0.8', 'ietf-protocol'],
    ['192.0.2.10', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['192.88.99.1', '6to4-relay'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    // Neighbours of the ranges are public.
    ['8.8.8.8', undefined],
    ['1.1.1.1', undefined],
    ['172.15.255.255', undefined],
    ['172.32.0.0', undefined],
    ['100.63.255.255', undefined],
    ['100.128.0.0', undefined],
    ['192.167.255.255', undefined],
    ['198.17.255.255', undefined],
    ['198.20.0.0', undefined],
    ['223.255.255.255', undefined],
    ['11.0.0.1', undefined],
    ['126.255.255.255', undefined],
    ['128.0.0.1', undefined],
  ];
  for (const [a, want] of cases) t.is<string | undefined, string | undefined>(classifyAddress(a), want, a);
});

test('IPv6: special ranges, and every form that embeds an IPv4 address, are refused', (t) => {
  const cases: [string, string | undefined][] = [
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'ipv4-mapped'],
    ['::ffff:7f00:1', 'ipv4-mapped'],
    ['::ffff:10.0.0.1', 'ipv4-mapped'],
    ['::ffff:8.8.8.8', 'ipv4-mapped'],
    ['::FFFF:169.254.169.254', 'ipv4-mapped'],
    ['::ffff:0:a00:1', 'ipv4-mapped'],
    ['::127.0.0.1', 'ipv4-compatible'],
    ['::8.8.8.8', 'ipv4-compatible'],
    ['64:ff9b::10.0.0.1', 'nat64'],
    ['64:ff9b:1::1', 'nat64'],
    ['100::1', 'discard-only'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001::1', 'teredo'],
    ['2001:2::1', 'ietf-protocol'],
    ['2002:7f00:1::1', '6to4'],
    ['5f00::1', 'srv6'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['ff05::1:3', 'multicast'],
    ['fe80::1%eth0', 'scoped'],
    ['4000::1', 'reserved'],
    ['1::1', 'reserved'],
    ['2606:4700:4700::1111', undefined],
    ['2a00:1450:4001:81c::200e', undefined],
    ['2001:4860:4860::8888', undefined],
    ['not-an-ip', 'invalid'],
    ['1.2.3', 'invalid'],
    ['::ffff:999.0.0.1', 'invalid'],
    ['1:2:3:4:5:6:7:8:9', 'invalid'],
  ];
  for (const [a, want] of cases) t.is<string | undefined, string | undefined>(classifyAddress(a), want, a);
});

test('outbound URLs: https only, no credentials or fragment, IP literals checked; loopback only with the operator setting', (t) => {
  const off = { allowLoopback: false };
  const on = { allowLoopback: true };
  const reason = (fn: () => unknown) => t.throws<OutboundError>(fn, { instanceOf: OutboundError }).reason;
  t.is(
    reason(() => checkOutboundUrl('http://idp.example.com/', off)),
    'url',
  );
  t.is(
    reason(() => checkOutboundUrl('https://user:pw@idp.example.com/', off)),
    'url',
  );
  t.is(
    reason(() => checkOutboundUrl('https://idp.example.com/#x', off)),
    'url',
  );
  t.is(
    reason(() => checkOutboundUrl('https://127.0.0.1:8443/', off)),
    'blocked_address',
  );
  t.is(
    reason(() => checkOutboundUrl('https://[::1]:8443/', off)),
    'blocked_address',
  );
  t.is(
    reason(() => checkOutboundUrl('https://0x7f.1/', off)),
    'blocked_address',
    'WHATWG URL parsing normalises 0x7f.1 to 127.0.0.1',
  );
  t.is(
    reason(() => checkOutboundUrl('https://[::ffff:127.0.0.1]/', on)),
    'blocked_address',
    'the loopback exception is not extended to mapped forms',
  );
  t.is(
    reason(() => checkOutboundUrl('https://10.0.0.1/', on)),
    'blocked_address',
    'the loopback setting admits loopback only',
  );
  t.is(checkOutboundUrl('https://127.0.0.1:8443/x', on).port, '8443');
  t.is(checkOutboundUrl('https://idp.example.com/', off).hostname, 'idp.example.com');
});

test('issuer identifiers for settings: public https URLs only', (t) => {
  t.is(issuerProblem('https://idp.example.com', false), undefined);
  t.is(issuerProblem('https://idp.example.com/tenants/acme', false), undefined);
  t.regex(issuerProblem('http://idp.example.com', false)!, /https/);
  t.regex(issuerProblem('https://u:p@idp.example.com', false)!, /credentials/);
  t.regex(issuerProblem('https://idp.example.com?x=1', false)!, /query/);
  t.regex(issuerProblem('https://idp.example.com/?', false)!, /query/);
  t.regex(issuerProblem('https://idp.example.com#f', false)!, /fragment/);
  t.regex(issuerProblem('https://10.1.2.3', false)!, /private/);
  t.regex(issuerProblem('https://[fd00::1]', false)!, /unique-local/);
  t.regex(issuerProblem('https://169.254.169.254', false)!, /link-local/);
  t.regex(issuerProblem('https://127.0.0.1:8443', false)!, /loopback/);
  t.is(issuerProblem('https://127.0.0.1:8443', true), undefined);
  t.regex(issuerProblem('https://localhost:8443', false)!, /public host/);
  t.regex(issuerProblem('https://intranet', false)!, /single label/);
  t.regex(issuerProblem('https://idp.internal', false)!, /public host/);
  t.regex(issuerProblem('notaurl', false)!, /absolute/);
});

test('guarded lookup: a name that resolves to loopback is refused when loopback is not allowed', async (t) => {
  const lookup = guardedLookup({ allowLoopback: false }) as unknown as (
    h: string,
    o: object,
    cb: (err: Error | null, a?: unknown) => void,
  ) => void;
  const err = await new Promise<Error | null>((resolve) => lookup('localhost', { all: true }, (e) => resolve(e)));
  t.true(err instanceof OutboundError);
  t.is((err as OutboundError).reason, 'blocked_address');
  t.regex(err!.message, /loopback/);
  const ok = await new Promise<unknown>((resolve, reject) =>
    (guardedLookup({ allowLoopback: true }) as unknown as typeof lookup)('localhost', { all: true }, (e, a) =>
      e ? reject(e) : resolve(a),
    ),
  );
  t.true(Array.isArray(ok) && ok.length > 0);
});

// ---- fetchJson against a real HTTPS server on loopback ----

let cert: TestCert;
let server: Server;
let base: string;
let policy: OutboundPolicy;
const served: Record<string, number> = {};

test.before(async () => {
  cert = makeCert();
  server = createHttpsServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const path = req.url ?? '/';
    served[path] = (served[path] ?? 0) + 1;
    if (path === '/ok') {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      return res.end('{"hello":"world"}');
    }
    if (path === '/jwks') {
      res.writeHead(200, { 'content-type': 'application/jwk-set+json' });
      return res.end('{"keys":[]}');
    }
    if (path === '/redirect') {
      res.writeHead(302, { location: '/ok' });
      return res.end();
    }
    if (path === '/html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end('<p>hi</p>');
    }
    if (path === '/array') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end('[1,2]');
    }
    if (path === '/big') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ pad: 'x'.repeat(4096) }));
    }
    if (path === '/hang') return; // never answers
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  policy = { ...DEFAULT_OUTBOUND_POLICY, allowLoopback: true, extraCaPem: cert.cert };
});
test.after.always(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  if (cert) rmSync(cert.dir, { recursive: true, force: true });
});

const failure = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof OutboundError)) throw new Error(`expected an OutboundError, got ${String(e)}`);
  return e;
};

test.serial('with the loopback setting and the test CA: JSON objects are fetched', async (t) => {
  t.deepEqual(await fetchJson(`${base}/ok`, policy), { hello: 'world' });
  t.deepEqual(await fetchJson(`${base}/jwks`, policy), { keys: [] }, 'application/*+json is JSON');
});

test.serial('loopback is refused when the setting is off: nothing reaches the server', async (t) => {
  const before = served['/ok'] ?? 0;
  t.is((await failure(fetchJson(`${base}/ok`, { ...policy, allowLoopback: false }))).reason, 'blocked_address');
  const port = new URL(base).port;
  const viaName = await failure(fetchJson(`https://localhost:${port}/ok`, { ...policy, allowLoopback: false }));
  t.is(viaName.reason, 'blocked_address', 'a name resolving to loopback is refused at connect time');
  t.is(served['/ok'] ?? 0, before);
});

test.serial('a host name is checked by the connect-time lookup and admitted with the setting on', async (t) => {
  const port = new URL(base).port;
  t.deepEqual(await fetchJson(`https://localhost:${port}/ok`, policy), { hello: 'world' });
});

test.serial(
  'refusals: untrusted certificate, redirect, other status, not JSON, not an object, too large, no answer, http',
  async (t) => {
    t.is(
      (await failure(fetchJson(`${base}/ok`, { ...policy, extraCaPem: undefined }))).reason,
      'network',
      'self-signed without the CA',
    );
    const redirect = await failure(fetchJson(`${base}/redirect`, policy));
    t.is(redirect.reason, 'status');
    t.regex(redirect.message, /302/);
    t.is((await failure(fetchJson(`${base}/missing`, policy))).reason, 'status');
    t.is((await failure(fetchJson(`${base}/html`, policy))).reason, 'content_type');
    t.is((await failure(fetchJson(`${base}/array`, policy))).reason, 'json');
    t.is((await failure(fetchJson(`${base}/big`, { ...policy, maxBytes: 1024 }))).reason, 'too_large');
    t.is((await failure(fetchJson(`${base}/hang`, { ...policy, totalTimeoutMs: 300 }))).reason, 'timeout');
    t.is((await failure(fetchJson(base.replace('https:', 'http:') + '/ok', policy))).reason, 'url');
    t.is(served['/ok'] ?? 0, 1 + 1, 'only the two successful fetches above reached /ok');
  },
);
