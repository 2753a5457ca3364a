/**
 * Pushed authorization requests (RFC 9126; docs/par.md) over HTTP against one daemon: a code
 * flow through a push and the login forms, the push's refusals (JSON, §2.3) from /authorize's
 * own validation, the request_uri's single use, expiry and binding to its client (a page, never
 * a redirect), and the requirement per client and per tenant (its settings section audited).
 */
import test from 'ava';
import { decodeJwt } from 'jose';
import type { TestDb } from '../helpers/db.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { loginKit } from '../helpers/login.js';
import {
  authorizeUrl,
  challengeFrom,
  codeFrom,
  CookieJar,
  csrfFrom,
  get,
  pkce,
  REDIRECT,
  sql,
  type App,
} from '../helpers/oauth.js';
import { clientCredentialsToken, openServices } from '../helpers/seed.js';
import { api } from '../helpers/api.js';

let env: LoginEnv;
let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let adminToken: string;
/** A first-party client registered with require_pushed_authorization_requests. */
let parOnly: { clientId: string; secret: string };
const kit = loginKit(
  () => d.url,
  () => sink,
);
const URN = 'urn:ietf:params:oauth:request_uri:';

test.before(async () => {
  env = await startLoginEnv();
  ({ db, d, app, sink } = env);
  const { ds, directory } = await openServices(db.url, db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  const c = await directory.createClient(
    app.tenantId,
    {
      name: 'PAR only',
      redirect_uris: [REDIRECT],
      first_party: true,
      scopes: ['openid', 'email'],
      require_pushed_authorization_requests: true,
    },
    actor,
  );
  await ds.destroy();
  parOnly = { clientId: c.client.client_id, secret: c.client_secret! };
  adminToken = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

const basic = (c: { clientId: string; secret: string }) =>
  'Basic ' + Buffer.from(`${c.clientId}:${c.secret}`).toString('base64');

/** POST /par as `client` (client_secret_basic) with `params`. */
async function push(client: { clientId: string; secret: string }, params: Record<string, string>) {
  const res = await fetch(`${d.url}/par`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) },
    body: new URLSearchParams(params),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

const requestOf = (challenge: string, extra: Record<string, string> = {}) => ({
  response_type: 'code',
  redirect_uri: REDIRECT,
  scope: 'openid email',
  state: 'st-par',
  nonce: 'n-par',
  code_challenge: challenge,
  code_challenge_method: 'S256',
  ...extra,
});

async function postForm(path: string, body: Record<string, string>, jar: CookieJar): Promise<Response> {
  const res = await fetch(`${d.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    body: new URLSearchParams(body),
  });
  jar.take(res);
  return res;
}

test('a code flow through PAR: push, /authorize with client_id and request_uri only, login forms, code; the request_uri is single use', async (t) => {
  const user = await createUserIn(env, 'par');
  const p = pkce();
  const pushed = await push(parOnly, requestOf(p.challenge));
  t.is(pushed.status, 201, JSON.stringify(pushed.body));
  t.is(pushed.headers.get('cache-control'), 'no-store');
  t.is(pushed.body.expires_in, 60);
  const requestUri = String(pushed.body.request_uri);
  t.true(requestUri.startsWith(URN));

  // RFC 9126 §4: only client_id beside the request_uri; a stray parameter is not read.
  const jar = new CookieJar();
  const page = await get(
    authorizeUrl(d.url, { client_id: parOnly.clientId, request_uri: requestUri, state: 'ignored' }),
    jar,
  );
  t.is(page.status, 200);
  const html = await page.text();
  const form = { challenge: challengeFrom(html), csrf: csrfFrom(html) };
  const earlier = new Set(sink.messages);
  t.is((await postForm('/login/email-code', { ...form, email: user.email }, jar)).status, 200);
  const mail = await sink.waitFor((m) => !earlier.has(m) && m.to.includes(user.email), 15_000);
  const verified = await postForm('/login/verify', { ...form, email: user.email, code: codeFrom(mail.text) }, jar);
  t.is(verified.status, 303);
  // The continuation names the saved request by id: the parameters are not sent again, and the
  // client, which must push, is not refused a plain request.
  const next = new URL(verified.headers.get('location')!);
  t.deepEqual([...next.searchParams.keys()].sort(), ['client_id', 'login_done']);
  const back = await get(next.toString(), jar);
  t.is(back.status, 302);
  const cb = new URL(back.headers.get('location')!);
  t.is(`${cb.origin}${cb.pathname}`, REDIRECT);
  t.is(cb.searchParams.get('state'), 'st-par');
  t.is(cb.searchParams.get('iss'), d.url);
  const tokens = await kit.redeem(cb.searchParams.get('code')!, p.verifier, parOnly);
  t.is(tokens.status, 200, JSON.stringify(tokens.body));

  const again = await get(authorizeUrl(d.url, { client_id: parOnly.clientId, request_uri: requestUri }), jar);
  t.is(again.status, 400, 'a request_uri is used once');
  t.is(again.headers.get('location'), null);
  t.regex(await again.text(), /invalid_request_uri/);

  const meta = (await (await fetch(`${d.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  t.is(meta.pushed_authorization_request_endpoint, `${d.url}/par`);
  t.is(meta.require_pushed_authorization_requests, false);
});

test("a request_uri that is another client's, expired or unknown: invalid_request_uri on a page, never a redirect", async (t) => {
  const jar = await kit.signIn(app.web.clientId, (await createUserIn(env, 'par')).email);
  const theirs = await push(app.web, requestOf(pkce().challenge));
  const refused = async (clientId: string, requestUri: string) => {
    const r = await get(authorizeUrl(d.url, { client_id: clientId, request_uri: requestUri }), jar);
    t.is(r.status, 400);
    t.is(r.headers.get('location'), null);
    return r.text();
  };
  t.regex(await refused(parOnly.clientId, String(theirs.body.request_uri)), /another client/);
  // Still usable by the client that pushed it: the refusal above did not spend it.
  const mine = await get(
    authorizeUrl(d.url, { client_id: app.web.clientId, request_uri: String(theirs.body.request_uri) }),
    jar,
  );
  t.is(mine.status, 302);
  t.truthy(new URL(mine.headers.get('location')!).searchParams.get('code'));

  const old = await push(app.web, requestOf(pkce().challenge));
  // The row's expiry moved into the past stands for the 60 s passing.
  await sql(db.url, db.dir, 'UPDATE pushed_auth_requests SET expires_at = ? WHERE client_id = ? AND used_at IS NULL', [
    Date.now() - 1,
    app.web.clientId,
  ]);
  t.regex(await refused(app.web.clientId, String(old.body.request_uri)), /expired/);
  t.regex(await refused(app.web.clientId, `${URN}${'A'.repeat(43)}`), /invalid_request_uri/);
});

test('the push is validated by /authorize own rules: JSON 400 with the error /authorize would redirect; 401 for a bad secret', async (t) => {
  const ch = pkce().challenge;
  const cases: [Record<string, string>, string, RegExp][] = [
    [requestOf(ch, { code_challenge_method: 'plain' }), 'invalid_request', /S256/],
    [requestOf(ch, { redirect_uri: 'https://evil.example.test/cb' }), 'invalid_request', /redirect_uri/],
    [requestOf(ch, { scope: 'openid iam.admin' }), 'invalid_scope', /not allowed/],
    [requestOf(ch, { response_type: 'token' }), 'unsupported_response_type', /code/],
    [requestOf(ch, { request_uri: `${URN}x` }), 'invalid_request', /may not be pushed/],
    // The response mode and the DPoP key binding are authorization parameters like the others.
    [requestOf(ch, { response_mode: 'fragment' }), 'invalid_request', /response_mode/],
    [requestOf(ch, { dpop_jkt: 'not-a-thumbprint' }), 'invalid_request', /dpop_jkt/],
  ];
  for (const [params, error, description] of cases) {
    const r = await push(app.web, params);
    t.is(r.status, 400, JSON.stringify(params));
    t.is(r.body.error, error);
    t.regex(String(r.body.error_description), description);
  }
  const bad = await push({ clientId: app.web.clientId, secret: 'wrong' }, requestOf(ch));
  t.is(bad.status, 401);
  t.is(bad.body.error, 'invalid_client');
});

test('a pushed response_mode is kept: the code comes back as a signed JWT response (JARM)', async (t) => {
  const jar = await kit.signIn(app.web.clientId, (await createUserIn(env, 'parjarm')).email);
  const pushed = await push(app.web, requestOf(pkce().challenge, { response_mode: 'query.jwt', prompt: 'none' }));
  t.is(pushed.status, 201, JSON.stringify(pushed.body));
  const r = await get(
    authorizeUrl(d.url, { client_id: app.web.clientId, request_uri: String(pushed.body.request_uri) }),
    jar,
  );
  t.is(r.status, 302);
  const loc = new URL(r.headers.get('location')!);
  t.is(loc.searchParams.get('code'), null, 'no bare code beside the JWT');
  const claims = decodeJwt(loc.searchParams.get('response')!);
  t.is(claims.aud, app.web.clientId);
  t.truthy(claims.code);
});

test.serial(
  'require PAR per client and per tenant: a plain /authorize is redirected with invalid_request; the policy is audited',
  async (t) => {
    const jar = await kit.signIn(app.web.clientId, (await createUserIn(env, 'par')).email);
    const plain = (clientId: string) =>
      get(authorizeUrl(d.url, { client_id: clientId, ...requestOf(pkce().challenge), prompt: 'none' }), jar);
    const refusedFor = async (clientId: string) => {
      const r = await plain(clientId);
      t.is(r.status, 302);
      const loc = new URL(r.headers.get('location')!);
      t.is(loc.searchParams.get('error'), 'invalid_request');
      t.regex(loc.searchParams.get('error_description')!, /RFC 9126/);
      t.is(loc.searchParams.get('state'), 'st-par');
    };
    await refusedFor(parOnly.clientId);
    t.truthy(new URL((await plain(app.web.clientId)).headers.get('location')!).searchParams.get('code'));

    const path = `/api/admin/tenants/${app.tenantId}/authorization-requests`;
    const before = await api(d.url, 'GET', path, { token: adminToken });
    t.is(before.status, 200);
    t.deepEqual(before.body.policy, { requirePushed: false });
    const etag = before.headers.get('etag')!;
    const stale = await api(d.url, 'PUT', path, {
      token: adminToken,
      body: { requirePushed: true },
      headers: { 'If-Match': '"stale"' },
    });
    t.is(stale.status, 412);
    const bad = await api(d.url, 'PUT', path, { token: adminToken, body: { requirePushed: 'yes' } });
    t.is(bad.status, 400);
    const on = await api(d.url, 'PUT', path, {
      token: adminToken,
      body: { requirePushed: true },
      headers: { 'If-Match': etag },
    });
    t.is(on.status, 200);
    try {
      await refusedFor(app.web.clientId);
      const pushed = await push(app.web, requestOf(pkce().challenge, { prompt: 'none' }));
      const r = await get(
        authorizeUrl(d.url, { client_id: app.web.clientId, request_uri: String(pushed.body.request_uri) }),
        jar,
      );
      t.truthy(new URL(r.headers.get('location')!).searchParams.get('code'));
    } finally {
      await api(d.url, 'PUT', path, { token: adminToken, body: { requirePushed: false } });
    }
    const events = (await sql(
      db.url,
      db.dir,
      "SELECT actor_id FROM audit_events WHERE tenant_id = ? AND action = 'tenant.authorization_requests.update'",
      [app.tenantId],
    )) as { actor_id: string }[];
    t.is(events.length, 2);
  },
);
