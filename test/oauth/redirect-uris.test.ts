/**
 * Redirect URIs: exact string matching at /authorize with only the loopback port free for a
 * public native client (RFC 9700 §4.1.3, RFC 8252 §7.3), and the registration rules (RFC 8252
 * §7.1, §7.3, §8.3; RFC 6749 §3.1.2), through the admin API and the CLI, one schema.
 */
import test from 'ava';
import { testDatabase, type TestDb } from '../helpers/db.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { clientCredentialsToken } from '../helpers/seed.js';
import { loginKit } from '../helpers/login.js';
import { iam, iamJson } from '../helpers/cli.js';
import { authorizeUrl, CookieJar, get, pkce, type App } from '../helpers/oauth.js';
import { startLoginEnv, stopLoginEnv } from '../helpers/env.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let adminToken: string;
let native: string;
let jar: CookieJar;

const REGISTERED = 'http://127.0.0.1:9999/cb';

const createClient = (body: Record<string, unknown>) =>
  fetch(`${d.url}/api/admin/tenants/${app.tenantId}/clients`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify(body),
  });

const kit = loginKit(
  () => d.url,
  () => sink,
);

test.before(async () => {
  ({ db, d, app, sink } = await startLoginEnv());
  adminToken = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);
  const r = await createClient({ name: 'Loopback app', redirect_uris: [REGISTERED], public: true, first_party: true });
  if (r.status !== 201) throw new Error(`create client: ${r.status} ${await r.text()}`);
  native = ((await r.json()) as { client_id: string }).client_id;
  // A signed-in browser: a matching redirect would get a code at once, so a refusal is visible.
  jar = await kit.signIn(app.web.clientId, app.user.email);
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

const authorize = (redirectUri: string) => {
  const { challenge } = pkce();
  return get(authorizeUrl(d.url, kit.authParams(native, challenge, { redirect_uri: redirectUri })), jar);
};

test('the registered loopback URI, and the same URI on another port, get a code (RFC 8252 §7.3)', async (t) => {
  for (const uri of [REGISTERED, 'http://127.0.0.1:49152/cb', 'http://127.0.0.1/cb']) {
    const r = await authorize(uri);
    t.is(r.status, 302, uri);
    const loc = r.headers.get('location')!;
    t.true(loc.startsWith(`${uri}?`), loc);
    t.truthy(new URL(loc).searchParams.get('code'), uri);
  }
});

test('every loose variant of a loopback redirect URI is refused: no code, no redirect', async (t) => {
  for (const uri of [
    'http://evil@127.0.0.1:9999/cb',
    'http://127.0.0.1:9999/cb#frag',
    'http://2130706433:9999/cb',
    'http://127.0.0.1.:9999/cb',
    'http:\\\\127.0.0.1:9999/cb',
    'http:/\\127.0.0.1:9999/cb',
    'HTTP://127.0.0.1:9999/cb',
    'http://127.0.0.1:09999/cb',
    'http://127.0.0.1:99999/cb',
    ' http://127.0.0.1:9999/cb',
    'http://127.0.0.1:9999/cb\n',
    'http://127.0.0.1:9999/cb ',
    'http://127.0.0.1:9999/cb/',
    'http://127.0.0.1:9999/CB',
    'http://127.0.0.1:9999/cb?x=1',
    'http://[::1]:9999/cb',
    'http://localhost:9999/cb',
    'http://LOCALHOST:9999/cb',
    'https://127.0.0.1:9999/cb',
  ]) {
    const r = await authorize(uri);
    t.is(r.status, 400, JSON.stringify(uri));
    t.is(r.headers.get('location'), null, JSON.stringify(uri));
    t.regex(await r.text(), /No redirect was made/);
  }
});

test('a confidential client gets no port freedom on loopback', async (t) => {
  const r = await createClient({ name: 'Confidential loopback', redirect_uris: [REGISTERED], first_party: true });
  t.is(r.status, 201);
  const { client_id } = (await r.json()) as { client_id: string };
  const { challenge } = pkce();
  const other = await get(
    authorizeUrl(d.url, kit.authParams(client_id, challenge, { redirect_uri: 'http://127.0.0.1:1234/cb' })),
    jar,
  );
  t.is(other.status, 400);
  t.is(other.headers.get('location'), null);
});

test('localhost is a loopback host: registered, its port free for a public client, exact for a confidential one (RFC 8252 §8.3)', async (t) => {
  const cb = 'http://localhost:3000/callback';
  const make = async (isPublic: boolean) => {
    const r = await createClient({ name: 'Localhost app', redirect_uris: [cb], public: isPublic, first_party: true });
    t.is(r.status, 201, await r.clone().text());
    return ((await r.json()) as { client_id: string }).client_id;
  };
  const [pub, conf] = [await make(true), await make(false)];
  const ask = (clientId: string, uri: string) =>
    get(authorizeUrl(d.url, kit.authParams(clientId, pkce().challenge, { redirect_uri: uri })), jar);
  for (const [clientId, uri, ok] of [
    [pub, cb, true],
    [pub, 'http://localhost:49152/callback', true],
    [pub, 'http://localhost/callback', true],
    [pub, 'http://127.0.0.1:3000/callback', false], // the host must be equal: a name is not its address
    [pub, 'http://localhost:3000/callback/', false],
    [pub, 'http://localhost.:3000/callback', false],
    [conf, cb, true],
    [conf, 'http://localhost:3001/callback', false],
  ] as const) {
    const r = await ask(clientId, uri);
    const loc = r.headers.get('location');
    if (ok) {
      t.is(r.status, 302, uri);
      t.true(loc!.startsWith(`${uri}?`) && new URL(loc!).searchParams.has('code'), `${uri}: ${loc}`);
    } else {
      t.is(r.status, 400, uri);
      t.is(loc, null, uri);
    }
  }
});

const UNSAFE: [string, RegExp][] = [
  ['about:blank', /the about: scheme is not allowed/],
  ['blob:https://app.example/0b1e', /the blob: scheme is not allowed/],
  ['ftp://app.example/cb', /the ftp: scheme is not allowed/],
  ['javascript:alert(1)', /the javascript: scheme is not allowed/],
  ['https://user:pw@app.example/cb', /userinfo/],
  ['https://*.evil.example/cb', /wildcard/],
  ['https://app.example/c b', /whitespace or control/],
  ['https://app.example/cb\n', /whitespace or control/],
  ['https://app.example/cb#x', /fragment/],
  ['https://app.example/%zz', /percent-encoding/],
  ['http://localhost.:8400/cb', /http is allowed only for loopback hosts/],
  ['http://LOCALHOST:8400/cb', /canonical form/],
  ['http://sub.localhost:8400/cb', /http is allowed only for loopback hosts/],
  ['http://app.example/cb', /http is allowed only for loopback hosts/],
  ['https://APP.example/cb', /canonical form/],
  ['http://127.0.0.1:08400/cb', /canonical form/],
  ['http://2130706433/cb', /canonical form|loopback/],
];

test('unsafe redirect URIs are refused by the admin API with a 400 naming the URI and the reason', async (t) => {
  for (const [uri, reason] of UNSAFE) {
    const r = await createClient({ name: 'Unsafe', redirect_uris: ['https://ok.example/cb', uri] });
    t.is(r.status, 400, uri);
    const b = (await r.json()) as { error: string; error_description: string };
    t.is(b.error, 'invalid_request', uri);
    t.regex(b.error_description, /^body\.redirect_uris\.1: /, uri);
    t.regex(b.error_description, reason, uri);
    t.true(b.error_description.includes(JSON.stringify(uri)), `${b.error_description} names ${uri}`);
  }
  // The safe forms are accepted: https, loopback hosts, a reverse-domain private-use scheme.
  const ok = await createClient({
    name: 'Safe',
    public: true,
    redirect_uris: [
      'https://app.example/cb?x=1',
      'http://127.0.0.1:8400/cb',
      'http://[::1]/cb',
      'http://localhost:8400/cb',
      'com.example.app:/cb',
    ],
  });
  t.is(ok.status, 201, await ok.clone().text());
});

test('unsafe redirect URIs are refused by iam clients create, each named, and nothing is created', async (t) => {
  const cdb = await testDatabase(t);
  await iamJson(cdb, ['db', 'migrate']);
  const tenant = await iamJson<{ id: string }>(cdb, ['tenants', 'create', '--name', 'Acme']);
  const args = ['clients', 'create', '--tenant', tenant.id, '--name', 'Unsafe'];
  for (const [uri] of UNSAFE) args.push('--redirect-uri', uri);
  const r = await iam(cdb, [...args, '--json']);
  t.is(r.code, 1, r.stderr);
  const err = JSON.parse(r.stdout) as { error: string; details: { field: string; message: string }[] };
  t.is(err.error, 'invalid_request');
  t.deepEqual(
    err.details.map((x) => x.field),
    UNSAFE.map((_, i) => `redirect_uris.${i}`),
  );
  UNSAFE.forEach(([uri, reason], i) => {
    t.regex(err.details[i].message, reason, uri);
  });
  const human = await iam(cdb, args);
  t.is(human.code, 1);
  t.regex(human.stderr, /--redirect-uri "about:blank": the about: scheme is not allowed/);
  t.regex(human.stderr, /--redirect-uri "https:\/\/user:pw@app\.example\/cb": must not contain userinfo/);
  t.deepEqual(await iamJson(cdb, ['clients', 'list', '--tenant', tenant.id]), []);
});
