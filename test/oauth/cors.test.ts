/**
 * CORS for browser-based clients (docs/oauth.md, "CORS"): discovery and the JWKS open to every
 * origin; /token, /revoke and /userinfo only to the origins registered for the client the
 * request is for; preflights only for registered origins; no CORS headers anywhere else; never
 * Access-Control-Allow-Credentials. The browser's side of it is test/browser/cors.test.ts.
 */
import test from 'ava';
import type { TestDb } from '../helpers/db.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { clientCredentialsToken } from '../helpers/seed.js';
import { loginKit } from '../helpers/login.js';
import { REDIRECT, sql, type App } from '../helpers/oauth.js';
import { startLoginEnv, stopLoginEnv } from '../helpers/env.js';

const SPA_ORIGIN = 'https://spa.example.test';
const OTHER_ORIGIN = 'https://evil.example.test';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let adminToken: string;
let spaClientId: string;

test.before(async () => {
  ({ db, d, app, sink } = await startLoginEnv());
  adminToken = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);
  // Registered through the admin API, as an operator would; upper case and the default port are
  // stored as the browser sends the origin.
  const res = await adminCreateClient({
    name: 'SPA',
    public: true,
    first_party: true,
    redirect_uris: [REDIRECT],
    allowed_origins: ['HTTPS://SPA.example.test:443'],
  });
  if (res.status !== 201) throw new Error(`create client: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { client_id: string; allowed_origins: string[] };
  if (body.allowed_origins.join() !== SPA_ORIGIN) throw new Error(`origins stored as ${body.allowed_origins.join()}`);
  spaClientId = body.client_id;
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

const kit = loginKit(
  () => d.url,
  () => sink,
);

function adminCreateClient(body: unknown): Promise<Response> {
  return fetch(`${d.url}/api/admin/tenants/${app.tenantId}/clients`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify(body),
  });
}

let n = 0;
/** A fresh user per test, so parallel tests never share sign-in codes. */
async function newUserEmail(): Promise<string> {
  const email = `cors${++n}-${Date.now()}@example.com`;
  const res = await fetch(`${d.url}/api/admin/tenants/${app.tenantId}/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify({ email, name: `User ${n}` }),
  });
  if (res.status !== 201) throw new Error(`create user: ${res.status}`);
  return email;
}

/** The SPA's code and verifier, after a user signs in (the direct API; the browser test drives the page). */
async function spaCode() {
  const jar = await kit.signIn(spaClientId, await newUserEmail());
  return kit.codeFor(jar, spaClientId);
}

function tokenRequest(origin: string | undefined, form: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(`${d.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(origin ? { origin } : {}),
      ...headers,
    },
    body: new URLSearchParams(form),
  });
}

function preflight(path: string, origin: string, method = 'POST') {
  return fetch(`${d.url}${path}`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization, content-type',
    },
  });
}

const corsHeaders = (r: Response) => [...r.headers.keys()].filter((k) => k.startsWith('access-control-'));
const varies = (r: Response) => (r.headers.get('vary') ?? '').toLowerCase().split(/\s*,\s*/);

test('discovery and the JWKS are open to every origin, without credentials', async (t) => {
  for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/jwks']) {
    for (const origin of [SPA_ORIGIN, OTHER_ORIGIN, 'http://127.0.0.1:9999']) {
      const r = await fetch(`${d.url}${path}`, { headers: { origin } });
      t.is(r.status, 200, path);
      t.is(r.headers.get('access-control-allow-origin'), '*', `${path} from ${origin}`);
      t.is(r.headers.get('access-control-allow-credentials'), null, path);
    }
    const pre = await preflight(path, OTHER_ORIGIN, 'GET');
    t.is(pre.status, 204, path);
    t.is(pre.headers.get('access-control-allow-origin'), '*', path);
    t.regex(pre.headers.get('access-control-allow-methods') ?? '', /GET/, path);
    t.is(pre.headers.get('access-control-allow-credentials'), null, path);
  }
});

test('/token answers the registered origin of a public client, with Vary: Origin', async (t) => {
  const { code, verifier } = await spaCode();
  const r = await tokenRequest(SPA_ORIGIN, {
    grant_type: 'authorization_code',
    client_id: spaClientId,
    code,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
  });
  t.is(r.status, 200);
  t.is(r.headers.get('access-control-allow-origin'), SPA_ORIGIN);
  t.true(varies(r).includes('origin'));
  t.is(r.headers.get('access-control-allow-credentials'), null);
  const body = (await r.json()) as { access_token: string };
  t.truthy(body.access_token);

  // An error is readable too (the page learns why), still for the registered origin only.
  const replay = await tokenRequest(SPA_ORIGIN, {
    grant_type: 'authorization_code',
    client_id: spaClientId,
    code,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
  });
  t.is(replay.status, 400);
  t.is(replay.headers.get('access-control-allow-origin'), SPA_ORIGIN);
});

test('/token gives no Allow-Origin to an origin the client did not register', async (t) => {
  const { code, verifier } = await spaCode();
  const form = { grant_type: 'authorization_code', client_id: spaClientId, code, redirect_uri: REDIRECT };
  const r = await tokenRequest(OTHER_ORIGIN, { ...form, code_verifier: verifier });
  // The request itself is processed (a form POST is a "simple" request the browser sends
  // anyway); what the browser withholds from the page is the answer.
  t.is(r.status, 200);
  t.is(r.headers.get('access-control-allow-origin'), null);
  t.is(r.headers.get('access-control-allow-credentials'), null);
  t.true(varies(r).includes('origin'));

  // A confidential client named in the Basic header has no origins: nothing for the SPA's origin either.
  const web = await tokenRequest(
    SPA_ORIGIN,
    { grant_type: 'client_credentials' },
    { authorization: kit.basic(app.admin) },
  );
  t.is(web.status, 200);
  t.is(web.headers.get('access-control-allow-origin'), null);

  // An unknown client_id, and no Origin at all: no CORS headers.
  const unknown = await tokenRequest(SPA_ORIGIN, { grant_type: 'authorization_code', client_id: 'nope', code: 'x' });
  t.is(unknown.status, 401);
  t.is(unknown.headers.get('access-control-allow-origin'), null);
  const noOrigin = await tokenRequest(undefined, { grant_type: 'authorization_code', client_id: spaClientId });
  t.deepEqual(corsHeaders(noOrigin), []);
});

test('preflight: 204 with methods, headers and max-age for a registered origin; nothing for others', async (t) => {
  for (const [path, method] of [
    ['/token', 'POST'],
    ['/revoke', 'POST'],
    ['/userinfo', 'GET'],
  ] as const) {
    const ok = await preflight(path, SPA_ORIGIN, method);
    t.is(ok.status, 204, path);
    t.is(ok.headers.get('access-control-allow-origin'), SPA_ORIGIN, path);
    t.regex(ok.headers.get('access-control-allow-methods') ?? '', new RegExp(method), path);
    const allowed = (ok.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    t.true(allowed.includes('authorization') && allowed.includes('content-type'), path);
    t.is(ok.headers.get('access-control-max-age'), '600', path);
    t.is(ok.headers.get('access-control-allow-credentials'), null, path);
    t.true(varies(ok).includes('origin'), path);

    const refused = await preflight(path, OTHER_ORIGIN, method);
    t.deepEqual(corsHeaders(refused), [], path);
  }
});

test('a preflight is refused once the only client that registered the origin is disabled', async (t) => {
  const origin = 'https://gone.example.test';
  const res = await adminCreateClient({
    name: 'Gone',
    public: true,
    redirect_uris: [REDIRECT],
    allowed_origins: [origin],
  });
  t.is(res.status, 201);
  const { client_id } = (await res.json()) as { client_id: string };
  t.is((await preflight('/token', origin)).headers.get('access-control-allow-origin'), origin);
  await sql(db.url, db.dir, "UPDATE clients SET status = 'disabled' WHERE client_id = ?", [client_id]);
  t.deepEqual(corsHeaders(await preflight('/token', origin)), []);
});

test('/userinfo answers the origins of the access token’s client only', async (t) => {
  const { code, verifier } = await spaCode();
  const tok = await tokenRequest(SPA_ORIGIN, {
    grant_type: 'authorization_code',
    client_id: spaClientId,
    code,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
  });
  const { access_token } = (await tok.json()) as { access_token: string };
  const ui = (origin: string, at = access_token) =>
    fetch(`${d.url}/userinfo`, { headers: { origin, authorization: `Bearer ${at}` } });

  const ok = await ui(SPA_ORIGIN);
  t.is(ok.status, 200);
  t.is(ok.headers.get('access-control-allow-origin'), SPA_ORIGIN);
  t.true(varies(ok).includes('origin'));
  t.is(ok.headers.get('access-control-allow-credentials'), null);
  t.regex(ok.headers.get('access-control-expose-headers') ?? '', /WWW-Authenticate/i);

  const other = await ui(OTHER_ORIGIN);
  t.is(other.status, 200);
  t.is(other.headers.get('access-control-allow-origin'), null);

  // A token of another client (no origins registered) gets nothing at the SPA's origin.
  const webTokens = await kit.tokensFor(app.web, await newUserEmail());
  const web = await ui(SPA_ORIGIN, webTokens.access_token);
  t.is(web.status, 200);
  t.is(web.headers.get('access-control-allow-origin'), null);

  // A token that does not verify names no client.
  const [h, p] = access_token.split('.');
  const forged = await ui(SPA_ORIGIN, `${h}.${p}.AAAA`);
  t.is(forged.status, 401);
  t.is(forged.headers.get('access-control-allow-origin'), null);
});

test('/revoke answers the registered origin of the client named in the form', async (t) => {
  const revoke = (origin: string) =>
    fetch(`${d.url}/revoke`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: spaClientId, token: 'not-a-token' }),
    });
  const ok = await revoke(SPA_ORIGIN);
  t.is(ok.status, 200);
  t.is(ok.headers.get('access-control-allow-origin'), SPA_ORIGIN);
  t.is(ok.headers.get('access-control-allow-credentials'), null);
  const other = await revoke(OTHER_ORIGIN);
  t.is(other.status, 200);
  t.is(other.headers.get('access-control-allow-origin'), null);
});

test('no CORS headers anywhere else, even for a registered origin', async (t) => {
  const paths = [
    '/authorize?client_id=' + spaClientId,
    '/healthz',
    '/openapi.json',
    `/api/admin/tenants/${app.tenantId}/clients`,
    '/api/v1/auth/direct/email-code/send',
  ];
  for (const path of paths) {
    const r = await fetch(`${d.url}${path}`, {
      headers: { origin: SPA_ORIGIN, authorization: `Bearer ${adminToken}` },
      redirect: 'manual',
    });
    t.deepEqual(corsHeaders(r), [], path);
    const pre = await preflight(path.split('?')[0], SPA_ORIGIN, 'GET');
    t.deepEqual(corsHeaders(pre), [], `OPTIONS ${path}`);
  }
  const post = await fetch(`${d.url}/api/v1/auth/direct/email-code/send`, {
    method: 'POST',
    headers: { origin: SPA_ORIGIN, 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: spaClientId, email: 'nobody@example.com' }),
  });
  t.deepEqual(corsHeaders(post), []);
});

test('allowed_origins: scheme://host[:port], https or loopback http, no path', async (t) => {
  for (const bad of [
    'https://spa.example.test/',
    'https://spa.example.test/app',
    'https://spa.example.test?x=1',
    'https://user@spa.example.test',
    'http://spa.example.test',
    'ftp://spa.example.test',
    'null',
    '*',
    'spa.example.test',
  ]) {
    const r = await adminCreateClient({ name: 'Bad', public: true, redirect_uris: [REDIRECT], allowed_origins: [bad] });
    t.is(r.status, 400, bad);
    t.is(((await r.json()) as { error: string }).error, 'invalid_request', bad);
  }
  const ok = await adminCreateClient({
    name: 'Loopback',
    public: true,
    redirect_uris: [REDIRECT],
    allowed_origins: ['http://127.0.0.1:5173', 'http://[::1]:5173', 'http://localhost:5173', 'https://a.example:8443'],
  });
  t.is(ok.status, 201);
  t.deepEqual(((await ok.json()) as { allowed_origins: string[] }).allowed_origins, [
    'http://127.0.0.1:5173',
    'http://[::1]:5173',
    'http://localhost:5173',
    'https://a.example:8443',
  ]);
});
