/**
 * POST /introspect against every row of the spec's rules, plus the cache: revoking a token
 * that is in the cache makes the very next introspection inactive.
 */
import test from 'ava';
import { deflateSync, gzipSync } from 'node:zlib';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { clientCredentialsToken, openServices, activeTenant } from '../helpers/seed.js';
import { loginKit, type ClientCreds } from '../helpers/login.js';
import { seedApp, sql, type App } from '../helpers/oauth.js';
import { KeyService } from '../../shared/services/keys.js';
import { TokenService } from '../../shared/services/tokens.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let api: ClientCreds; // a resource server serving https://api.example.test
let strictApi: ClientCreds; // the same, with strict introspection
let otherApi: ClientCreds; // a resource server of another tenant
let worker: ClientCreds; // a client_credentials client with the API as its audience
let n = 0;
const kit = loginKit(
  () => d.url,
  () => sink,
);

test.before(async () => {
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  const mk = async (tenantId: string, input: Record<string, unknown>) => {
    const c = await directory.createClient(
      tenantId,
      { grant_types: ['client_credentials'], scopes: ['api'], ...input },
      actor,
    );
    return { clientId: c.client.client_id, secret: c.client_secret! };
  };
  api = await mk(app.tenantId, { name: 'API', resource_identifiers: ['https://api.example.test'] });
  strictApi = await mk(app.tenantId, {
    name: 'Strict API',
    resource_identifiers: ['https://strict.example.test'],
    strict_introspection: true,
  });
  worker = await mk(app.tenantId, { name: 'worker', audiences: ['https://api.example.test'] });
  const other = await activeTenant(provisioning, { name: 'Other' }, actor);
  otherApi = await mk(other.id, { name: 'Other API', resource_identifiers: ['https://api.example.test'] });
  await ds.destroy();
  sink = await startSmtpSink();
  d = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url, IAM_EMAIL_CODE_RESEND_SECONDS: '0' });
});
test.after.always(async () => {
  await d?.stop();
  await sink?.close();
  await db?.drop();
});

async function introspect(caller: ClientCreds | null, token: string, base = d.url) {
  const res = await fetch(`${base}/introspect`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(caller ? { authorization: kit.basic(caller) } : {}),
    },
    body: new URLSearchParams({ token }),
  });
  return { status: res.status, text: await res.clone().text(), body: (await res.json()) as Record<string, unknown> };
}

async function userTokens() {
  const email = `intro${++n}-${Date.now()}@example.com`;
  const { ds, directory } = await openServices(db.url, db.dir);
  const user = await directory.createUser(app.tenantId, { email, name: `Intro ${n}` }, { type: 'system', id: 'test' });
  await ds.destroy();
  return { user, ...(await kit.tokensFor(app.web, email)) };
}

test('valid and not revoked: active with sub, scope and the token claims', async (t) => {
  const { user, access_token } = await userTokens();
  const r = await introspect(api, access_token);
  t.is(r.status, 200);
  t.is(r.body.active, true);
  t.is(r.body.sub, user.id);
  t.is(r.body.scope, 'openid email');
  t.is(r.body.client_id, app.web.clientId);
  t.is(r.body.iss, d.url);
  t.is(r.body.token_type, 'Bearer');
  t.is(r.body.tenant, app.tenantId);
  for (const k of ['aud', 'exp', 'iat', 'jti']) t.truthy(r.body[k], k);
});

test('inactive answers are exactly {"active":false}', async (t) => {
  const r = await introspect(api, 'not-a-token');
  t.is(r.status, 200);
  t.is(r.text, '{"active":false}');
});

test('expired: inactive', async (t) => {
  const { ds, config } = await openServices(db.url, db.dir);
  const tokens = new TokenService(d.url, new KeyService(ds, config.secretKey, 3600));
  const expired = await tokens.issueAccessToken({
    sub: 'x',
    clientId: app.web.clientId,
    tenantId: app.tenantId,
    scope: ['openid'],
    audience: ['https://api.example.test'],
    ttlSeconds: -60,
  });
  const fresh = await tokens.issueAccessToken({
    sub: 'x',
    clientId: worker.clientId,
    tenantId: app.tenantId,
    scope: ['api'],
    audience: ['https://api.example.test'],
    ttlSeconds: 60,
  });
  await ds.destroy();
  t.is((await introspect(api, fresh.token)).body.active, true, 'the same key signs an active token');
  t.is((await introspect(api, expired.token)).text, '{"active":false}');
});

test('a forged signature: inactive', async (t) => {
  const { access_token } = await userTokens();
  const [h, p, s] = access_token.split('.');
  const forged = [h, p, s.slice(0, -4) + (s.endsWith('AAAA') ? 'BBBB' : 'AAAA')].join('.');
  t.is((await introspect(api, forged)).body.active, false);
});

test('revoke, then introspect within the cache TTL: inactive (access token, RFC 7009)', async (t) => {
  const { access_token } = await userTokens();
  t.is((await introspect(api, access_token)).body.active, true);
  t.is((await introspect(api, access_token)).body.active, true, 'now served from the cache');
  const rv = await fetch(`${d.url}/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: kit.basic(app.web) },
    body: new URLSearchParams({ token: access_token }),
  });
  t.is(rv.status, 200);
  t.is((await introspect(api, access_token)).body.active, false);
});

test('revoking the token family (refresh revocation) makes cached access tokens inactive', async (t) => {
  const { access_token, refresh_token } = await userTokens();
  t.is((await introspect(api, access_token)).body.active, true);
  await fetch(`${d.url}/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: kit.basic(app.web) },
    body: new URLSearchParams({ token: refresh_token }),
  });
  t.is((await introspect(api, access_token)).body.active, false);
});

test('a logged-out session: inactive', async (t) => {
  const { access_token, id_token, jar } = await userTokens();
  t.is((await introspect(api, access_token)).body.active, true);
  const res = await fetch(`${d.url}/logout?${new URLSearchParams({ id_token_hint: id_token })}`, {
    redirect: 'manual',
    headers: { cookie: jar.header() },
  });
  t.is(res.status, 200);
  t.is((await introspect(api, access_token)).body.active, false);
});

test('a disabled user: inactive', async (t) => {
  const { user, access_token } = await userTokens();
  t.is((await introspect(api, access_token)).body.active, true);
  await sql(db.url, db.dir, "UPDATE users SET status = 'disabled' WHERE id = ?", [user.id]);
  t.is((await introspect(api, access_token)).body.active, false);
});

test("a disabled client (the token's): inactive", async (t) => {
  const { ds, directory } = await openServices(db.url, db.dir);
  const c = await directory.createClient(
    app.tenantId,
    {
      name: 'soon disabled',
      grant_types: ['client_credentials'],
      scopes: ['api'],
      audiences: ['https://api.example.test'],
    },
    { type: 'system', id: 'test' },
  );
  await ds.destroy();
  const tok = await clientCredentialsToken(d.url, c.client.client_id, c.client_secret!);
  t.is((await introspect(api, tok)).body.active, true);
  await sql(db.url, db.dir, "UPDATE clients SET status = 'disabled' WHERE client_id = ?", [c.client.client_id]);
  t.is((await introspect(api, tok)).body.active, false);
});

test('a suspended tenant: inactive', async (t) => {
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  const ten = await activeTenant(provisioning, { name: 'Suspend me' }, actor);
  const rs = await directory.createClient(
    ten.id,
    {
      name: 'rs',
      grant_types: ['client_credentials'],
      scopes: ['api'],
      resource_identifiers: ['https://x.example.test'],
    },
    actor,
  );
  const w = await directory.createClient(
    ten.id,
    { name: 'w', grant_types: ['client_credentials'], scopes: ['api'] },
    actor,
  );
  await ds.destroy();
  const tok = await clientCredentialsToken(d.url, w.client.client_id, w.client_secret!);
  const caller = { clientId: rs.client.client_id, secret: rs.client_secret! };
  t.is((await introspect(caller, tok)).body.active, true);
  await sql(db.url, db.dir, "UPDATE tenants SET lifecycle_state = 'suspended' WHERE id = ?", [ten.id]);
  // The token is inactive at once (checked per request); the suspended tenant's own resource
  // server can no longer authenticate after its short caller cache.
  const r = await introspect(caller, tok);
  t.true(r.status === 401 || r.body.active === false);
  t.is((await introspect(api, tok)).body.active, false, 'and no other tenant sees it either');
});

test('strict validation: a token for another audience is inactive, one for this audience active', async (t) => {
  const forApi = await clientCredentialsToken(d.url, worker.clientId, worker.secret);
  t.is(
    (await introspect(strictApi, forApi)).body.active,
    false,
    'aud is https://api.example.test, not strict.example.test',
  );
  const { ds, directory } = await openServices(db.url, db.dir);
  const w2 = await directory.createClient(
    app.tenantId,
    {
      name: 'strict worker',
      grant_types: ['client_credentials'],
      scopes: ['api'],
      audiences: ['https://strict.example.test'],
    },
    { type: 'system', id: 'test' },
  );
  await ds.destroy();
  const forStrict = await clientCredentialsToken(d.url, w2.client.client_id, w2.client_secret!);
  t.is((await introspect(strictApi, forStrict)).body.active, true);
  t.is(
    (await introspect(api, forStrict)).body.active,
    true,
    'a non-strict resource server sees any token of its tenant',
  );
});

test("another client's token: a client that is not a resource server sees only its own tokens", async (t) => {
  const own = await clientCredentialsToken(d.url, worker.clientId, worker.secret);
  const { access_token } = await userTokens();
  t.is((await introspect(worker, own)).body.active, true);
  t.is((await introspect(worker, access_token)).body.active, false);
});

test("another tenant's resource server: inactive", async (t) => {
  const tok = await clientCredentialsToken(d.url, worker.clientId, worker.secret);
  t.is((await introspect(otherApi, tok)).body.active, false);
});

test('caller authentication: HTTP Basic of a confidential client, else 401 invalid_client', async (t) => {
  const tok = await clientCredentialsToken(d.url, worker.clientId, worker.secret);
  const none = await introspect(null, tok);
  t.is(none.status, 401);
  t.is(none.body.error, 'invalid_client');
  t.is((await introspect({ clientId: api.clientId, secret: 'wrong' }, tok)).status, 401);
  t.is(
    (await introspect({ clientId: app.native.clientId, secret: '' }, tok)).status,
    401,
    'public clients cannot introspect',
  );
  const post = await fetch(`${d.url}/introspect`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: kit.basic(api) },
    body: '',
  });
  t.is(post.status, 400);
  t.is(((await post.json()) as { error: string }).error, 'invalid_request');
});

test('a compressed request (Content-Encoding gzip or deflate) is read like a plain one', async (t) => {
  const { user, access_token } = await userTokens();
  for (const [encoding, pack] of [
    ['gzip', gzipSync],
    ['deflate', deflateSync],
  ] as const) {
    const res = await fetch(`${d.url}/introspect`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'content-encoding': encoding,
        authorization: kit.basic(api),
      },
      body: pack(new URLSearchParams({ token: access_token }).toString()),
    });
    t.is(res.status, 200, encoding);
    const body = (await res.json()) as Record<string, unknown>;
    t.is(body.active, true, encoding);
    t.is(body.sub, user.id, encoding);
  }
});

test('a repeated token parameter: 400 invalid_request (RFC 6749 §3.2)', async (t) => {
  const { access_token } = await userTokens();
  const res = await fetch(`${d.url}/introspect`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: kit.basic(api) },
    body: `token=${access_token}&token=${access_token}`,
  });
  t.is(res.status, 400);
  t.is(((await res.json()) as { error: string }).error, 'invalid_request');
});

test('with the cache off, answers are the same', async (t) => {
  const nocache = await startDaemon(db.url, db.dir, {
    IAM_INTROSPECTION_CACHE_ENTRIES: '0',
    IAM_ISSUER: d.url,
    IAM_SMTP_URL: sink.url,
  });
  t.teardown(() => nocache.stop());
  const { access_token } = await userTokens();
  t.is((await introspect(api, access_token, nocache.url)).body.active, true);
  await fetch(`${d.url}/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: kit.basic(app.web) },
    body: new URLSearchParams({ token: access_token }),
  });
  t.is((await introspect(api, access_token, nocache.url)).body.active, false);
});

test('two daemons on one database: revoke through A, B answers inactive on the next call', async (t) => {
  // Same relay: any daemon may deliver mail the other committed (the outbox is shared).
  const b = await startDaemon(db.url, db.dir, { IAM_ISSUER: d.url, IAM_SMTP_URL: sink.url });
  t.teardown(() => b.stop());
  const { access_token, refresh_token } = await userTokens();
  t.is((await introspect(api, access_token, b.url)).body.active, true);
  t.is((await introspect(api, access_token, b.url)).body.active, true, 'cached on B');
  await fetch(`${d.url}/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: kit.basic(app.web) },
    body: new URLSearchParams({ token: refresh_token }),
  });
  t.is((await introspect(api, access_token, b.url)).body.active, false);
});
