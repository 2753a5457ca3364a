/**
 * Behind a TLS-terminating reverse proxy (docs/deployment.md): IAM_TRUSTED_PROXIES decides
 * whose X-Forwarded-For is believed. Real proxies on loopback (node:https in front, node:http to
 * the daemon, adding X-Forwarded-For and X-Forwarded-Proto) connect from 127.0.0.3, which the
 * daemon trusts, or from 127.0.0.1, which it does not; the address the daemon records for the
 * session and the sign-in history shows which one it believed. Also: the validation of the
 * variable at start, and the __Host- session cookie of an https issuer through the proxy.
 */
import { spawn } from 'node:child_process';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import { request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import test from 'ava';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { createTestDatabase, TEST_SECRET_KEY, type TestDb } from '../helpers/db.js';
import { DAEMON_MAIN, daemonEnv, startDaemon, type Daemon } from '../helpers/daemon.js';
import { makeCert, type TestCert } from '../helpers/https-issuer.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { clientCredentialsToken } from '../helpers/seed.js';
import { codeFrom, seedApp, sql, type App } from '../helpers/oauth.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let cert: TestCert;
let adminToken: string;
let trustedProxy: Proxy;
let untrustedProxy: Proxy;
let n = 0;

/** Where the client really is, as the outermost proxy sees it (a documentation address). */
const CLIENT = '203.0.113.9';
const TRUSTED = '127.0.0.3/32, 10.0.0.0/8, fd00::/8';

interface Proxy {
  url: string;
  close(): Promise<void>;
}

/**
 * A TLS-terminating reverse proxy: appends the client's address to X-Forwarded-For (`CLIENT`,
 * standing in for the public address it would see, or the test's `x-test-peer` header, which it
 * strips), sets X-Forwarded-Proto: https, and forwards to the daemon over a connection made from
 * `localAddress`.
 */
async function startProxy(target: string, localAddress: string): Promise<Proxy> {
  const t = new URL(target);
  const server: Server = createHttpsServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    const prior = req.headers['x-forwarded-for'];
    const peer = String(req.headers['x-test-peer'] ?? CLIENT);
    delete req.headers['x-test-peer'];
    const up = httpRequest(
      {
        host: t.hostname,
        port: t.port,
        method: req.method,
        path: req.url,
        localAddress,
        headers: {
          ...req.headers,
          'x-forwarded-for': prior ? `${String(prior)}, ${peer}` : peer,
          'x-forwarded-proto': 'https',
        },
      },
      (ur) => {
        res.writeHead(ur.statusCode!, ur.rawHeaders);
        ur.pipe(res);
      },
    );
    up.on('error', (e) => {
      res.statusCode = 502;
      res.end(String(e));
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request over TLS to a proxy, trusting the test certificate. */
function send(url: string, o: { method?: string; headers?: Record<string, string>; json?: unknown } = {}) {
  const body = o.json === undefined ? undefined : JSON.stringify(o.json);
  return new Promise<Answer>((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method: o.method ?? (body ? 'POST' : 'GET'),
        ca: cert.cert,
        headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...o.headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test.before(async () => {
  cert = makeCert();
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  sink = await startSmtpSink();
  d = await startDaemon(db.url, db.dir, {
    IAM_SMTP_URL: sink.url,
    IAM_EMAIL_CODE_RESEND_SECONDS: '0',
    IAM_ISSUER: 'https://id.example.test',
    IAM_TRUSTED_PROXIES: TRUSTED,
  });
  adminToken = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);
  trustedProxy = await startProxy(d.url, '127.0.0.3');
  untrustedProxy = await startProxy(d.url, '127.0.0.1');
});
test.after.always(async () => {
  await trustedProxy?.close();
  await untrustedProxy?.close();
  await d?.stop();
  await sink?.close();
  await db?.drop();
  if (cert) rmSync(cert.dir, { recursive: true, force: true });
});

async function newUser(): Promise<{ id: string; email: string }> {
  const email = `proxied${++n}-${Date.now()}@example.com`;
  const res = await fetch(`${d.url}/api/admin/tenants/${app.tenantId}/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify({ email, name: `User ${n}` }),
  });
  if (res.status !== 201) throw new Error(`create user: ${res.status}`);
  return (await res.json()) as { id: string; email: string };
}

/** Signs in through `proxy` (the JSON direct-auth API); returns the Set-Cookie lines. */
async function signInVia(proxy: Proxy, email: string, headers?: Record<string, string>): Promise<string[]> {
  const earlier = new Set(sink.messages);
  const sent = await send(`${proxy.url}/api/v1/auth/direct/email-code/send`, {
    headers,
    json: { client_id: app.web.clientId, email },
  });
  if (sent.status !== 200) throw new Error(`send ${sent.status} ${sent.body}`);
  const code = codeFrom((await sink.waitFor((m) => !earlier.has(m) && m.to.includes(email), 15_000)).text);
  const r = await send(`${proxy.url}/api/v1/auth/direct/email-code/verify`, {
    headers,
    json: { client_id: app.web.clientId, email, code },
  });
  if (r.status !== 200) throw new Error(`verify ${r.status} ${r.body}`);
  return r.headers['set-cookie'] ?? [];
}

/** The addresses recorded for the user's sessions and sign-in history. */
async function recorded(userId: string): Promise<{ sessions: string[]; history: string[] }> {
  const s = (await sql(db.url, db.dir, 'SELECT ip FROM sessions WHERE user_id = ?', [userId])) as { ip: string }[];
  const h = (await sql(db.url, db.dir, 'SELECT ip FROM auth_history WHERE user_id = ?', [userId])) as {
    ip: string;
  }[];
  return { sessions: s.map((r) => r.ip), history: h.map((r) => r.ip) };
}

test('a trusted proxy: the X-Forwarded-For client address is recorded for the session and history', async (t) => {
  const user = await newUser();
  await signInVia(trustedProxy, user.email);
  const r = await recorded(user.id);
  t.deepEqual(r.sessions, [CLIENT]);
  t.true(r.history.length > 0);
  t.true(
    r.history.every((ip) => ip === CLIENT),
    JSON.stringify(r.history),
  );
});

test('a trusted proxy: what the client wrote into X-Forwarded-For is not believed', async (t) => {
  const user = await newUser();
  // The client claims 198.51.100.66; the proxy appends the address it saw. Walking from the
  // right, the first untrusted hop is the proxy's entry.
  await signInVia(trustedProxy, user.email, { 'x-forwarded-for': '198.51.100.66' });
  t.deepEqual((await recorded(user.id)).sessions, [CLIENT]);
});

test('trusted hops are skipped from the right, to the first untrusted address', async (t) => {
  // "198.51.100.66, 203.0.113.77, 10.1.2.3, fd00::5": fd00::5 and 10.1.2.3 are trusted hops
  // (say a load balancer and an inner proxy); 203.0.113.77 is the client.
  const chained = await newUser();
  await signInVia(trustedProxy, chained.email, {
    'x-forwarded-for': '198.51.100.66, 203.0.113.77, 10.1.2.3',
    'x-test-peer': 'fd00::5',
  });
  t.deepEqual((await recorded(chained.id)).sessions, ['203.0.113.77']);

  // Every hop trusted: the leftmost, as Express does.
  const internal = await newUser();
  await signInVia(trustedProxy, internal.email, { 'x-forwarded-for': '10.9.9.9', 'x-test-peer': 'fd00::5' });
  t.deepEqual((await recorded(internal.id)).sessions, ['10.9.9.9']);

  // An entry that is not an address ends the walk at the trusted hop that reported it.
  const garbled = await newUser();
  await signInVia(trustedProxy, garbled.email, {
    'x-forwarded-for': '198.51.100.66, unknown',
    'x-test-peer': '10.1.2.3',
  });
  t.deepEqual((await recorded(garbled.id)).sessions, ['10.1.2.3']);
});

test('an untrusted proxy: X-Forwarded-For is ignored, the socket peer is recorded', async (t) => {
  const user = await newUser();
  await signInVia(untrustedProxy, user.email, { 'x-forwarded-for': '198.51.100.66' });
  const r = await recorded(user.id);
  t.deepEqual(r.sessions, ['127.0.0.1']);
  t.true(r.history.length > 0);
  t.true(
    r.history.every((ip) => ip === '127.0.0.1'),
    JSON.stringify(r.history),
  );
});

test('on an https issuer the session cookie is __Host-service_session, and only that name is read back', async (t) => {
  const user = await newUser();
  const lines = await signInVia(trustedProxy, user.email);
  t.false(lines.some((l) => l.startsWith('service_session=')));
  const line = lines.find((l) => l.startsWith('__Host-service_session='))!;
  t.truthy(line, lines.join('\n'));
  t.regex(line, /; Path=\/;/);
  t.regex(line, /; Secure/);
  t.regex(line, /; HttpOnly/);
  t.regex(line, /; SameSite=Lax/);
  t.notRegex(line, /Domain=/i);
  const value = line.split(';')[0].slice('__Host-service_session='.length);

  const devices = await send(`${trustedProxy.url}/api/account/devices`, {
    headers: { cookie: `__Host-service_session=${value}` },
  });
  t.is(devices.status, 200, devices.body);
  t.is((JSON.parse(devices.body) as { devices: unknown[] }).devices.length, 1);
  // The unprefixed name could have been set by another host: not read on an https issuer.
  const plain = await send(`${trustedProxy.url}/api/account/devices`, {
    headers: { cookie: `service_session=${value}` },
  });
  t.is(plain.status, 401);
});

test('IAM_TRUSTED_PROXIES is validated: a bad range refuses to start with one clear line', async (t) => {
  const base = { IAM_SECRET_KEY: TEST_SECRET_KEY, IAM_DATABASE_URL: db.url, IAM_DATA_DIR: db.dir };
  t.deepEqual(loadConfig(base).trustedProxies, []);
  t.deepEqual(loadConfig({ ...base, IAM_TRUSTED_PROXIES: ' 10.0.0.0/8, 127.0.0.1 ,::1, fd00::/8 ' }).trustedProxies, [
    '10.0.0.0/8',
    '127.0.0.1/32',
    '::1/128',
    'fd00::/8',
  ]);
  for (const bad of ['10.0.0.0/33', 'fd00::/129', '10.0.0.0/', 'proxy.example', '10.0.0.0/8/1', '300.1.1.1']) {
    const e = t.throws(() => loadConfig({ ...base, IAM_TRUSTED_PROXIES: `127.0.0.1, ${bad}` }), {
      instanceOf: ConfigError,
    });
    t.regex(e.message, /^IAM_TRUSTED_PROXIES: /, bad);
    t.true(e.message.includes(`"${bad}"`), e.message);
  }

  const proc = spawn(process.execPath, [DAEMON_MAIN], {
    env: daemonEnv(db.url, db.dir, { IAM_TRUSTED_PROXIES: '10.0.0.0/33' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
  t.is(code, 78);
  t.regex(stderr, /^iam: configuration error: IAM_TRUSTED_PROXIES: "10\.0\.0\.0\/33": the prefix length/m);
});
