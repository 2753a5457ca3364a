/**
 * The reverse-proxy example deploy/nginx/iam.conf, for real: a real nginx (Debian's package,
 * installed by the browser lane; no browser is started, the lane is where system packages are)
 * terminates TLS with a throwaway self-signed certificate and forwards to a real daemon started
 * with IAM_ISSUER set to the https URL and IAM_TRUSTED_PROXIES naming nginx's address.
 *
 * The committed file is used as it is apart from its listening ports, server name, certificate
 * paths and upstream address (render() replaces exactly those, and fails if one is no longer
 * there, so the test cannot silently check another text). nginx runs in the foreground as a
 * child process, with its prefix, pid file, logs and temp directories in a temp directory.
 *
 * Requests reach nginx from 127.0.0.2 and nginx reaches the daemon from 127.0.0.1, which the
 * daemon trusts: the address it records for a sign-in shows whose X-Forwarded-For it believed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { projectRoot } from '../helpers/architecture.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { freePort, startDaemon, type Daemon } from '../helpers/daemon.js';
import { makeCert, type TestCert } from '../helpers/https-issuer.js';
import { codeFrom, seedApp, sql, type App } from '../helpers/oauth.js';
import { until } from '../helpers/poll.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

const EXAMPLE = join(projectRoot(fileURLToPath(import.meta.url)), 'deploy', 'nginx', 'iam.conf');
/** Debian's nginx (test/lanes/browser.sh installs it); /usr/sbin is not on every user's PATH. */
const NGINX = process.env.IAM_TEST_NGINX ?? '/usr/sbin/nginx';
/** The client's own address: requests to nginx are sent from it. */
const CLIENT = '127.0.0.2';

interface Ports {
  http: number;
  https: number;
  daemon: number;
}

/**
 * The example with the test's ports, host and files in place of the production ones. Each
 * replaced text must occur: an edit of the example that drops one fails here, not quietly.
 * The IPv6 listeners are dropped on a host without IPv6 (nginx could not bind them).
 */
function render(text: string, p: Ports, cert: TestCert, ipv6: boolean): string {
  const swaps: [string, string][] = [
    ['listen 80;', `listen ${p.http};`],
    ['listen [::]:80;', ipv6 ? `listen [::]:${p.http};` : ''],
    ['listen 443 ssl;', `listen ${p.https} ssl;`],
    ['listen [::]:443 ssl;', ipv6 ? `listen [::]:${p.https} ssl;` : ''],
    ['server_name id.example.com;', 'server_name 127.0.0.1;'],
    ['return 301 https://id.example.com$request_uri;', `return 301 https://127.0.0.1:${p.https}$request_uri;`],
    ['/etc/letsencrypt/live/id.example.com/fullchain.pem', cert.certFile],
    ['/etc/letsencrypt/live/id.example.com/privkey.pem', cert.keyFile],
    ['server 127.0.0.1:8080;', `server 127.0.0.1:${p.daemon};`],
  ];
  for (const [from, to] of swaps) {
    if (!text.includes(from)) throw new Error(`deploy/nginx/iam.conf no longer contains ${JSON.stringify(from)}`);
    text = text.replaceAll(from, to);
  }
  return text;
}

/** nginx's own main file around the example: everything it writes goes to `dir`. */
function mainConf(dir: string): string {
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((k) => `${k}_temp_path ${dir}/${k};`);
  return [
    'worker_processes 1;',
    'events { worker_connections 64; }',
    'http {',
    `  access_log ${dir}/access.log;`,
    ...temp.map((l) => `  ${l}`),
    `  include ${dir}/iam.conf;`,
    '}',
    '',
  ].join('\n');
}

/** nginx's command line: prefix, main file and logs in `dir`, so nothing touches /etc or /var. */
const nginxArgs = (dir: string, extra: string[]) => [
  '-p',
  `${dir}/`,
  '-c',
  join(dir, 'nginx.conf'),
  '-e',
  join(dir, 'error.log'),
  ...extra,
];

let dir: string;
let cert: TestCert;
let db: TestDb;
let app: App;
let sink: SmtpSink;
let d: Daemon;
let nginx: ChildProcess | undefined;
let nginxOut = '';
let ports: Ports;
let issuer: string;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'iam-nginx-'));
  // nginx started as root runs its worker as `nobody`, which must reach the temp directories.
  chmodSync(dir, 0o755);
  cert = makeCert();
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  sink = await startSmtpSink();
  // nginx cannot listen on port 0 and say which it got: two ports free a moment ago.
  const http = await freePort();
  let https = await freePort();
  while (https === http) https = await freePort();
  issuer = `https://127.0.0.1:${https}`;
  d = await startDaemon(db.url, db.dir, {
    IAM_ISSUER: issuer,
    IAM_TRUSTED_PROXIES: '127.0.0.1/32',
    IAM_SMTP_URL: sink.url,
    IAM_EMAIL_CODE_RESEND_SECONDS: '0',
  });
  ports = { http, https, daemon: d.port };
  const ipv6 = existsSync('/proc/net/if_inet6') && readFileSync('/proc/net/if_inet6', 'utf8').trim() !== '';
  writeFileSync(join(dir, 'iam.conf'), render(readFileSync(EXAMPLE, 'utf8'), ports, cert, ipv6));
  writeFileSync(join(dir, 'nginx.conf'), mainConf(dir));

  nginx = spawn(NGINX, nginxArgs(dir, ['-g', `daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log;`]), {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  nginx.stdout!.on('data', (c: Buffer) => (nginxOut += c.toString()));
  nginx.stderr!.on('data', (c: Buffer) => (nginxOut += c.toString()));
  let exited = false;
  nginx.once('exit', () => (exited = true));
  await until(
    async () => {
      if (exited) throw new Error(`nginx exited:\n${nginxOut}\n${errorLog()}`);
      return reachable(https);
    },
    { what: () => `nginx listening on ${https}\n${errorLog()}` },
  );
});

test.after.always(async () => {
  if (nginx && nginx.exitCode === null) {
    const gone = new Promise((resolve) => nginx!.once('exit', resolve));
    nginx.kill('SIGQUIT'); // graceful shutdown: the master stops its worker too
    await gone;
  }
  await d?.stop();
  await sink?.close();
  await db?.drop();
  if (cert) rmSync(cert.dir, { recursive: true, force: true });
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function errorLog(): string {
  try {
    return readFileSync(join(dir, 'error.log'), 'utf8');
  } catch {
    return '';
  }
}

function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
}

/** One request from CLIENT to nginx: https (trusting the test certificate) or plain http. */
function send(url: string, o: { headers?: Record<string, string>; json?: unknown } = {}): Promise<Answer> {
  const body = o.json === undefined ? undefined : JSON.stringify(o.json);
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      url,
      {
        method: body ? 'POST' : 'GET',
        ca: cert.cert,
        localAddress: CLIENT,
        agent: false,
        headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...o.headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, rawHeaders: res.rawHeaders, body: text }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test('the example passes nginx -t with only its ports, server name, certificate paths and upstream replaced', (t) => {
  const r = spawnSync(NGINX, nginxArgs(dir, ['-t', '-g', `pid ${dir}/nginx-t.pid;`]), { encoding: 'utf8' });
  t.is(r.status, 0, r.stderr);
  t.regex(r.stderr, /syntax is ok/);
  t.regex(r.stderr, /test is successful/);
  // Nothing else was changed: the rendered file has as many lines as the committed one.
  t.is(
    readFileSync(join(dir, 'iam.conf'), 'utf8').split('\n').length,
    readFileSync(EXAMPLE, 'utf8').split('\n').length,
  );
});

test('over TLS through nginx: discovery names the https issuer, HSTS is sent once, and nginx’s request id reaches the daemon', async (t) => {
  const r = await send(`${issuer}/.well-known/openid-configuration`);
  t.is(r.status, 200, r.body);
  const meta = JSON.parse(r.body) as { issuer: string; token_endpoint: string };
  t.is(meta.issuer, issuer);
  t.is(meta.token_endpoint, `${issuer}/token`);

  // The daemon sends HSTS itself on an https issuer; nginx hides it and sends its own, once.
  const names = r.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
  t.is(names.filter((n) => n === 'strict-transport-security').length, 1, JSON.stringify(r.rawHeaders));
  t.is(r.headers['strict-transport-security'], 'max-age=63072000; includeSubDomains');

  // X-Request-Id: nginx's $request_id (32 hex digits) is the daemon's id for the request.
  const id = String(r.headers['x-request-id']);
  t.regex(id, /^[0-9a-f]{32}$/);
  const line = await until(() => d.logs.find((l) => l.msg === 'request' && l.reqId === id), {
    what: `the daemon's access-log line for ${id}`,
  });
  t.is(line.path, '/.well-known/openid-configuration');
});

test('through nginx the daemon records the client’s address from X-Forwarded-For, not nginx’s and not a spoofed one', async (t) => {
  const earlier = new Set(sink.messages);
  // A client-written X-Forwarded-For: nginx appends the peer it saw, and the daemon, walking
  // from the right, stops at that first address it does not trust.
  const spoof = { 'x-forwarded-for': '198.51.100.66' };
  const email = app.user.email;
  const sent = await send(`${issuer}/api/v1/auth/direct/email-code/send`, {
    headers: spoof,
    json: { client_id: app.web.clientId, email },
  });
  t.is(sent.status, 200, sent.body);
  const mail = await sink.waitFor((m) => !earlier.has(m) && m.to.includes(email), 15_000);
  const verified = await send(`${issuer}/api/v1/auth/direct/email-code/verify`, {
    headers: spoof,
    json: { client_id: app.web.clientId, email, code: codeFrom(mail.text) },
  });
  t.is(verified.status, 200, verified.body);
  // On an https issuer the session cookie carries the __Host- prefix and Secure.
  t.true(
    (verified.headers['set-cookie'] ?? []).some((c) => c.startsWith('__Host-service_session=') && /; Secure/.test(c)),
  );

  const sessions = (await sql(db.url, db.dir, 'SELECT ip FROM sessions WHERE user_id = ?', [app.user.id])) as {
    ip: string;
  }[];
  t.deepEqual(
    sessions.map((s) => s.ip),
    [CLIENT],
  );
});

test('plain HTTP is redirected to the https URL of the configured name, whatever Host the client sent', async (t) => {
  const r = await send(`http://127.0.0.1:${ports.http}/.well-known/openid-configuration?x=1`, {
    headers: { host: 'evil.example' },
  });
  t.is(r.status, 301);
  t.is(r.headers.location, `${issuer}/.well-known/openid-configuration?x=1`);
  t.is(r.headers['strict-transport-security'], undefined);
});
