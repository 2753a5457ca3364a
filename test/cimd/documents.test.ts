/**
 * Client ID metadata documents over HTTP (docs/client-metadata-documents.md): one daemon, a
 * loopback HTTPS server serving the documents (counting fetches), the seeded tenant's resource
 * server https://api.example.test naming the tenant. A sign-in with a document URL as client_id,
 * every refusal at /authorize and /token, the cache, the tenant's policy and the consent page.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import { newKey } from '../helpers/https-issuer.js';
import { api } from '../helpers/api.js';
import { iam } from '../helpers/cli.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { startDocumentServer, type DocumentServer } from '../helpers/document-server.js';
import { loginKit } from '../helpers/login.js';
import {
  authorizeUrl,
  challengeFrom,
  CookieJar,
  csrfFrom,
  get,
  pkce,
  REDIRECT,
  seedApp,
  type App,
} from '../helpers/oauth.js';
import { clientCredentialsToken, credentialsClient, introspectAs, openServices, TEST_API } from '../helpers/seed.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

const RESOURCE = TEST_API.resource_identifiers[0];
let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let docs: DocumentServer;
let adminToken: string;
let rs: { clientId: string; secret: string };
let n = 0;

const good = {
  client_name: 'Agent Desk',
  redirect_uris: [REDIRECT],
  grant_types: ['authorization_code', 'refresh_token'],
  token_endpoint_auth_method: 'none',
  logo_uri: 'https://cdn.agent.example/logo.png',
  client_uri: 'https://agent.example/',
  policy_uri: 'https://agent.example/privacy',
  tos_uri: 'https://agent.example/terms',
};

const setPolicy = (body: Record<string, unknown>) =>
  api(d.url, 'PUT', `/api/admin/tenants/${app.tenantId}/client-metadata-documents`, { token: adminToken, body });

test.before(async () => {
  docs = await startDocumentServer();
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  const { ds, directory } = await openServices(db.url, db.dir);
  rs = await credentialsClient(directory, app.tenantId, TEST_API);
  await ds.destroy();
  sink = await startSmtpSink();
  d = await startDaemon(db.url, db.dir, {
    IAM_SMTP_URL: sink.url,
    IAM_EMAIL_CODE_RESEND_SECONDS: '0',
    IAM_OUTBOUND_ALLOW_LOOPBACK: 'true',
    IAM_OUTBOUND_CA_FILE: docs.cert.certFile,
  });
  adminToken = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);
  const put = await setPolicy({ enabled: true, allowHosts: [], denyHosts: [] });
  if (put.status !== 200) throw new Error(`policy: ${put.status} ${JSON.stringify(put.body)}`);
});
test.after.always(async () => {
  await d?.stop();
  await sink?.close();
  await docs?.close();
  await db?.drop();
});

const kit = loginKit(
  () => d.url,
  () => sink,
);

async function signedIn(): Promise<CookieJar> {
  const email = `cimd${++n}-${Date.now()}@example.com`;
  const { ds, directory } = await openServices(db.url, db.dir);
  await directory.createUser(app.tenantId, { email, name: `CIMD ${n}` }, { type: 'system', id: 'test' });
  await ds.destroy();
  return kit.signIn(app.web.clientId, email);
}

const authorize = (clientId: string, extra: Record<string, string | undefined> = {}, jar?: CookieJar) => {
  const p = pkce();
  const url = authorizeUrl(d.url, {
    ...kit.authParams(clientId, p.challenge),
    resource: RESOURCE,
    ...extra,
  });
  return get(url, jar).then((res) => ({ res, verifier: p.verifier }));
};

const tokenForm = (form: Record<string, string>) =>
  fetch(`${d.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> }));

test('a document URL as client_id: consent page with its host, code with PKCE and resource, tokens for that client_id', async (t) => {
  const clientId = docs.serveDocument('/clients/desk.json', good);
  const host = new URL(docs.origin).host;
  const discovery = (await (await fetch(`${d.url}/.well-known/oauth-authorization-server`)).json()) as Record<
    string,
    unknown
  >;
  t.is(discovery.client_id_metadata_document_supported, true);

  const jar = await signedIn();
  const { res, verifier } = await authorize(clientId, {}, jar);
  t.is(res.status, 200);
  const html = await res.text();
  t.true(html.includes(`identified by its document at <strong>${host}</strong>`), html);
  t.true(html.includes('Provided by the app, not verified'));
  t.true(html.includes('href="https://agent.example/privacy"'));
  t.true(html.includes('After you answer you will be sent to <strong>rp.example.test</strong>'));
  t.true(html.includes('<img src="https://cdn.agent.example/logo.png" alt="Logo of Agent Desk"'));
  t.regex(res.headers.get('content-security-policy')!, /img-src 'self' data: https:\/\/cdn\.agent\.example;/);

  const answer = await fetch(`${d.url}/authorize/consent`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    body: new URLSearchParams({ challenge: challengeFrom(html), csrf: csrfFrom(html), decision: 'allow' }),
  });
  const code = new URL(answer.headers.get('location')!).searchParams.get('code')!;
  t.truthy(code);
  const tokens = await tokenForm({
    grant_type: 'authorization_code',
    client_id: clientId,
    code,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
    resource: RESOURCE,
  });
  t.is(tokens.status, 200, JSON.stringify(tokens.body));
  const claims = decodeJwt(tokens.body.access_token);
  t.is(claims.client_id, clientId);
  t.is(claims.tenant_id, app.tenantId);
  t.deepEqual([claims.aud].flat(), [RESOURCE]);
  t.is((await introspectAs(d.url, rs, tokens.body.access_token)).body.active, true);
  const refreshed = await tokenForm({
    grant_type: 'refresh_token',
    client_id: clientId,
    refresh_token: tokens.body.refresh_token,
  });
  t.is(refreshed.status, 200, JSON.stringify(refreshed.body));
  t.is(decodeJwt(refreshed.body.access_token).client_id, clientId);
  // RP-initiated logout back to the document's redirect URI, the tenant named by the ID token hint.
  const logout = new URL(`${d.url}/logout`);
  logout.searchParams.set('id_token_hint', tokens.body.id_token);
  logout.searchParams.set('post_logout_redirect_uri', REDIRECT);
  const out = await get(logout.toString(), jar);
  t.true(out.headers.get('location')?.startsWith(REDIRECT), `${out.status}`);
  // Fetched once for the whole sign-in (the cache), however many requests named it.
  t.is(docs.hits['/clients/desk.json'], 1);
});

test('a private_key_jwt document client proves itself with the keys in its document', async (t) => {
  const key = await newKey();
  const clientId = docs.serveDocument('/clients/keyed.json', {
    ...good,
    token_endpoint_auth_method: 'private_key_jwt',
    jwks: { keys: [key.publicJwk] },
  });
  const jar = await signedIn();
  const { res, verifier } = await authorize(clientId, {}, jar);
  const html = await res.text();
  const answer = await fetch(`${d.url}/authorize/consent`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    body: new URLSearchParams({ challenge: challengeFrom(html), csrf: csrfFrom(html), decision: 'allow' }),
  });
  const code = new URL(answer.headers.get('location')!).searchParams.get('code')!;
  const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier };
  const unproven = await tokenForm({ ...form, client_id: clientId });
  t.is(unproven.status, 401);
  t.is(unproven.body.error, 'invalid_client');
  const assertion = await new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: key.kid })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(d.url)
    .setJti(randomUUID())
    .setIssuedAt()
    .setExpirationTime('2m')
    .sign(key.privateKey);
  const proven = await tokenForm({
    ...form,
    client_id: clientId,
    client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    client_assertion: assertion,
  });
  t.is(proven.status, 200, JSON.stringify(proven.body));
  t.is(decodeJwt(proven.body.access_token).client_id, clientId);
});

const bad: [string, (path: string) => string, RegExp][] = [
  ['not https', (p) => `http://127.0.0.1:9/${p}`, /must be an https URL/],
  ['a private address', (p) => `https://10.0.0.7/${p}`, /private or reserved address/],
  [
    'a redirect',
    (p) => docs.serve(p, { status: 302, headers: { location: '/x' }, body: '' }),
    /redirects are not followed/,
  ],
  ['too large', (p) => docs.serveDocument(p, { ...good, client_name: 'x'.repeat(6000) }), /larger than 5120 bytes/],
  [
    'not JSON',
    (p) => docs.serve(p, { headers: { 'content-type': 'text/html' }, body: '<p>hi</p>' }),
    /not application\/json/,
  ],
  [
    'another client_id',
    (p) => docs.serveDocument(p, { ...good, client_id: `${docs.origin}/other.json` }),
    /another client_id/,
  ],
  ['a secret', (p) => docs.serveDocument(p, { ...good, client_secret: 's3cret' }), /must not contain client_secret/],
  [
    'a shared-secret method',
    (p) => docs.serveDocument(p, { ...good, token_endpoint_auth_method: 'client_secret_basic' }),
    /shared secret/,
  ],
  [
    'a client_credentials grant',
    (p) => docs.serveDocument(p, { ...good, grant_types: ['client_credentials'] }),
    /grant_types/,
  ],
  ['a timeout', (p) => docs.serve(p, { body: JSON.stringify(good), delayMs: 8000 }), /did not answer in time/],
];
for (const [what, make, message] of bad)
  test(`a document with ${what}: invalid_client on the error page, no redirect, nothing cached`, async (t) => {
    const path = `/bad/${what.replace(/\W+/g, '-')}.json`;
    const clientId = make(path);
    for (const round of [1, 2]) {
      const { res } = await authorize(clientId);
      t.is(res.status, 400);
      t.is(res.headers.get('location'), null);
      const html = await res.text();
      t.true(html.includes('invalid_client'), html);
      t.regex(html, message);
      // Served by the test server: fetched again on the second request (nothing was cached).
      if (clientId.startsWith(docs.origin)) t.is(docs.hits[path], round);
    }
  });

test('a redirect_uri not in the document, or no resource: the error page, never a redirect', async (t) => {
  const clientId = docs.serveDocument('/clients/strict.json', good);
  const other = await authorize(clientId, { redirect_uri: 'https://rp.example.test/other' });
  t.is(other.res.status, 400);
  t.is(other.res.headers.get('location'), null);
  const none = await authorize(clientId, { resource: undefined });
  t.is(none.res.status, 400);
  t.regex(await none.res.text(), /invalid_target: .*must name the resource/);
  const unknown = await authorize(clientId, { resource: 'https://nobody.example/' });
  t.regex(await unknown.res.text(), /invalid_target: The resource is not a registered resource server/);
});

test('the cache keeps a document for its max-age, and no-store for the minimum (60 s), not per request', async (t) => {
  const long = docs.serveDocument('/cache/long.json', good, { 'cache-control': 'max-age=3600' });
  const nostore = docs.serveDocument('/cache/nostore.json', good, { 'cache-control': 'no-store' });
  for (let i = 0; i < 3; i++) {
    t.is((await authorize(long)).res.status, 200);
    t.is((await authorize(nostore)).res.status, 200);
  }
  t.is(docs.hits['/cache/long.json'], 1);
  t.is(docs.hits['/cache/nostore.json'], 1);
});

test('at /token a document client may not use client_credentials, and an unknown code is invalid_grant', async (t) => {
  const clientId = docs.serveDocument('/clients/token.json', good);
  const cc = await tokenForm({ grant_type: 'client_credentials', client_id: clientId });
  t.is(cc.status, 400);
  t.is(cc.body.error, 'unauthorized_client');
  const code = await tokenForm({
    grant_type: 'authorization_code',
    client_id: clientId,
    code: 'nope',
    redirect_uri: REDIRECT,
    code_verifier: 'x'.repeat(43),
  });
  t.is(code.body.error, 'invalid_grant');
});

// Serial (and before the policy test, which leaves the tenant accepting any host): both change the tenant's policy.
test.serial('iam tenants client-metadata-documents set and show; a host that is not one is refused', async (t) => {
  const cmd = ['tenants', 'client-metadata-documents'];
  const set = await iam(db, [
    ...cmd,
    'set',
    '--tenant',
    app.tenantId,
    '--enable',
    '--allow-host',
    '*.agent.example',
    '--deny-host',
    'old.agent.example',
    '--json',
  ]);
  t.is(set.code, 0, set.stderr);
  const policy = { enabled: true, allowHosts: ['*.agent.example'], denyHosts: ['old.agent.example'] };
  t.deepEqual(JSON.parse(set.stdout).policy, policy);
  const show = await iam(db, [...cmd, 'show', '--tenant', app.tenantId]);
  t.is(show.code, 0, show.stderr);
  t.regex(show.stdout, /allowed hosts: +\*\.agent\.example/);
  const bad = await iam(db, [...cmd, 'set', '--tenant', app.tenantId, '--allow-host', 'https://x.example/']);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /invalid --allow-host "https:\/\/x.example\/"/);
});

test.serial('the tenant policy: deny and allow lists of hosts, and disabled refuses every document', async (t) => {
  const clientId = docs.serveDocument('/clients/policy.json', good);
  const host = new URL(docs.origin).host;
  const refused = async (policy: Record<string, unknown>, message: RegExp) => {
    const put = await setPolicy(policy);
    t.is(put.status, 200, JSON.stringify(put.body));
    const { res } = await authorize(clientId);
    t.is(res.status, 400);
    t.regex(await res.text(), message);
  };
  await refused({ enabled: true, denyHosts: [host] }, new RegExp(`does not accept metadata documents from ${host}`));
  await refused({ enabled: true, allowHosts: ['*.agent.example'] }, /does not accept metadata documents from/);
  await refused({ enabled: false }, /does not accept client ID metadata documents/);
  t.falsy(docs.hits['/clients/policy.json'], 'a refused host is never fetched');
  const shown = await api(d.url, 'GET', `/api/admin/tenants/${app.tenantId}/client-metadata-documents`, {
    token: adminToken,
  });
  t.deepEqual(shown.body.policy, { enabled: false, allowHosts: [], denyHosts: [] });
  const badHost = await setPolicy({ enabled: true, allowHosts: ['https://x.example/'] });
  t.is(badHost.status, 400);
  t.is((await setPolicy({ enabled: true, allowHosts: [host, '*.agent.example'] })).status, 200);
  t.is((await authorize(clientId)).res.status, 200);
  t.is((await setPolicy({ enabled: true })).status, 200);
});
