/**
 * A client's lifecycle through the admin API (docs/directory.md, "Clients"): GET and PATCH with
 * a strong ETag and If-Match, PATCH validated as registration is, secret rotation with an
 * overlap, disable and enable, delete, and another tenant's client answering 404. One daemon.
 */
import test from 'ava';
import { api } from '../helpers/api.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { loginKit } from '../helpers/login.js';
import { REDIRECT } from '../helpers/oauth.js';
import { until } from '../helpers/poll.js';
import { activeTenant, clientCredentialsToken, introspectAs, openServices } from '../helpers/seed.js';
import { startSmtpSink } from '../helpers/smtp-sink.js';
import { SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';

let db: TestDb;
let d: Daemon;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
let tenantId: string;
let admin: string;
/** A resource server that may introspect any token of the tenant. */
let rs: { clientId: string; secret: string };
/** A client of another tenant. */
let foreign: { id: string; clientId: string };

test.before(async () => {
  db = await createTestDatabase();
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  try {
    const actor = { type: 'system' as const, id: 'test' };
    tenantId = (await activeTenant(provisioning, { name: 'Clients' }, actor)).id;
    const adm = await directory.createClient(
      tenantId,
      { name: 'admin', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN] },
      actor,
    );
    const r = await directory.createClient(
      tenantId,
      { name: 'RS', grant_types: ['client_credentials'], resource_identifiers: ['https://api.example.test'] },
      actor,
    );
    rs = { clientId: r.client.client_id, secret: r.client_secret! };
    await directory.createUser(tenantId, { email: 'ann@example.com', name: 'Ann' }, actor);
    const other = (await activeTenant(provisioning, { name: 'Other' }, actor)).id;
    const f = await directory.createClient(other, { name: 'theirs', grant_types: ['client_credentials'] }, actor);
    foreign = { id: f.client.id, clientId: f.client.client_id };
    sink = await startSmtpSink();
    d = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url, IAM_EMAIL_CODE_RESEND_SECONDS: '0' });
    admin = await clientCredentialsToken(d.url, adm.client.client_id, adm.client_secret!);
  } finally {
    await ds.destroy();
  }
});
test.after.always(async () => {
  await d?.stop();
  await sink?.close();
  await db?.drop();
});

const kit = loginKit(
  () => d.url,
  () => sink,
);
const base = () => `/api/admin/tenants/${tenantId}/clients`;
const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
  api(d.url, method, `${base()}${path}`, { token: admin, body, headers });

/** POST /token client_credentials with HTTP Basic (or the secret in the form): the status and error. */
async function tokenWith(clientId: string, secret: string, o: { url?: string; post?: boolean } = {}) {
  const res = await fetch(`${o.url ?? d.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(o.post ? {} : { authorization: 'Basic ' + Buffer.from(`${clientId}:${secret}`).toString('base64') }),
    },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      ...(o.post ? { client_id: clientId, client_secret: secret } : {}),
    }),
  });
  const body = (await res.json()) as { error?: string; access_token?: string };
  return { status: res.status, error: body.error, token: body.access_token };
}

async function serviceClient(name: string) {
  const r = await call('POST', '', { name, grant_types: ['client_credentials'] });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  return { id: r.body.id as string, clientId: r.body.client_id as string, secret: r.body.client_secret as string };
}

test('GET and PATCH with a strong ETag; a stale If-Match is 412 and changes nothing', async (t) => {
  const c = await serviceClient('etag');
  const g = await call('GET', `/${c.clientId}`);
  t.is(g.status, 200);
  t.false('client_secret' in g.body);
  t.false(g.text.includes(c.secret));
  const etag = g.headers.get('etag')!;
  t.regex(etag, /^"[^"]+"$/);
  // The row id names it too, with the same ETag.
  t.is((await call('GET', `/${c.id}`)).headers.get('etag'), etag);

  const p = await call('PATCH', `/${c.clientId}`, { name: 'renamed', scopes: ['api'] }, { 'if-match': etag });
  t.is(p.status, 200, JSON.stringify(p.body));
  t.is(p.body.name, 'renamed');
  t.deepEqual(p.body.scopes, ['api']);
  const etag2 = p.headers.get('etag')!;
  t.not(etag2, etag);
  t.is((await call('GET', `/${c.clientId}`)).headers.get('etag'), etag2);

  const stale = await call('PATCH', `/${c.clientId}`, { name: 'lost update' }, { 'if-match': etag });
  t.is(stale.status, 412);
  t.is(stale.body.error, 'precondition_failed');
  t.is((await call('GET', `/${c.clientId}`)).body.name, 'renamed');
});

test('PATCH is validated by the registration rules, naming the field', async (t) => {
  const c = await serviceClient('rules');
  const bad = await call('PATCH', `/${c.clientId}`, { redirect_uris: ['not a uri'] });
  t.is(bad.status, 400);
  t.is(bad.body.error, 'invalid_request');
  t.deepEqual(
    (bad.body.details as { field: string }[]).map((x) => x.field),
    ['body.redirect_uris.0'],
  );
  // A cross-field rule of registration: authorization_code needs a redirect URI.
  const cross = await call('PATCH', `/${c.clientId}`, { grant_types: ['authorization_code'] });
  t.is(cross.status, 400);
  t.regex(String(cross.body.error_description), /^body\.redirect_uris: /);
  const unknown = await call('PATCH', `/${c.clientId}`, { client_type: 'public' });
  t.is(unknown.status, 400);
});

test('secret rotation: both secrets work during the overlap; the old one stops at expiry, the new one at revoke', async (t) => {
  const c = await serviceClient('rotating');
  const add = await call('POST', `/${c.clientId}/secrets`, { old_secret_expires_in: 2 });
  t.is(add.status, 201, JSON.stringify(add.body));
  const s2 = { id: add.body.id as string, value: add.body.client_secret as string };
  t.truthy(add.body.old_secrets_expire_at);
  t.is((await tokenWith(c.clientId, c.secret)).status, 200);
  t.is((await tokenWith(c.clientId, s2.value)).status, 200);
  const listed = await call('GET', `/${c.clientId}/secrets`);
  t.is(listed.body.secrets.length, 2);
  t.false(listed.text.includes(s2.value));
  t.false(listed.text.includes(c.secret));

  t.true(await until(async () => (await tokenWith(c.clientId, c.secret)).error === 'invalid_client'));
  t.is((await tokenWith(c.clientId, s2.value)).status, 200);
  t.deepEqual(
    (await call('GET', `/${c.clientId}/secrets`)).body.secrets.map((s: { id: string }) => s.id),
    [s2.id],
  );

  // Revoke: at once, at /token and at /introspect's cached Basic fast path alike.
  const tok = (await tokenWith(c.clientId, s2.value)).token!;
  t.is((await introspectAs(d.url, { clientId: c.clientId, secret: s2.value }, tok)).body.active, true);
  t.is((await call('DELETE', `/${c.clientId}/secrets/${s2.id}`)).status, 204);
  t.is((await tokenWith(c.clientId, s2.value)).error, 'invalid_client');
  t.is((await introspectAs(d.url, { clientId: c.clientId, secret: s2.value }, tok)).status, 401);
  t.is((await call('DELETE', `/${c.clientId}/secrets/${s2.id}`)).status, 404);
});

test('a daemon remembers a secret client between requests, and a change made through another daemon ends that at once', async (t) => {
  // Daemon B keeps the registration and the secret that passed (shared/services/secret-callers.ts)
  // and reads the client's stamp on every request; every change below is made through A.
  const b = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url });
  t.teardown(() => b.stop());
  const c = await serviceClient('remembered');
  const onB = (secret: string, post = false) => tokenWith(c.clientId, secret, { url: b.url, post });
  t.is((await onB(c.secret)).status, 200);
  t.is((await onB(c.secret)).status, 200, 'remembered');
  t.is((await onB(c.secret, true)).status, 200, 'client_secret_post too');
  t.is((await onB(`${c.secret}x`)).error, 'invalid_client', 'another secret is still checked');

  // A rotation whose old secret ends now: the remembered one stops on B at its next request.
  const add = await call('POST', `/${c.clientId}/secrets`, { old_secret_expires_in: 0 });
  t.is(add.status, 201, JSON.stringify(add.body));
  t.is((await onB(c.secret)).error, 'invalid_client');
  const s2 = add.body.client_secret as string;
  t.is((await onB(s2)).status, 200);
  t.is((await onB(s2)).status, 200);

  t.is((await call('POST', `/${c.clientId}/disable`)).status, 200);
  t.is((await onB(s2)).error, 'invalid_client');
  t.is((await call('POST', `/${c.clientId}/enable`)).status, 200);
  t.is((await onB(s2)).status, 200);
  t.is((await call('DELETE', `/${c.clientId}/secrets/${add.body.id as string}`)).status, 204);
  t.is((await onB(s2)).error, 'invalid_client');
});

test('disable: invalid_client, its access token inactive, refresh refused; enable restores client authentication', async (t) => {
  const r = await call('POST', '', {
    name: 'web',
    redirect_uris: [REDIRECT],
    first_party: true,
    scopes: ['openid', 'email', 'offline_access'],
  });
  const web = { clientId: r.body.client_id as string, secret: r.body.client_secret as string };
  const tokens = await kit.tokensFor(web, 'ann@example.com');
  t.is((await introspectAs(d.url, rs, tokens.access_token)).body.active, true);

  const off = await call('POST', `/${web.clientId}/disable`);
  t.is(off.status, 200);
  t.is(off.body.status, 'disabled');
  t.is((await introspectAs(d.url, rs, tokens.access_token)).body.active, false);
  const refused = await kit.refresh(tokens.refresh_token, web);
  t.is(refused.status, 401);
  t.is(refused.body.error, 'invalid_client');
  const page = await fetch(`${d.url}/authorize?${new URLSearchParams(kit.authParams(web.clientId, 'x'.repeat(43)))}`, {
    redirect: 'manual',
  });
  t.is(page.status, 400);
  t.is(page.headers.get('location'), null);

  const on = await call('POST', `/${web.clientId}/enable`);
  t.is(on.body.status, 'active');
  // The client authenticates again (invalid_grant, not invalid_client); what the disable
  // revoked stays revoked.
  const after = await kit.refresh(tokens.refresh_token, web);
  t.is(after.status, 400);
  t.is(after.body.error, 'invalid_grant');
  t.is((await introspectAs(d.url, rs, tokens.access_token)).body.active, false);
});

test('delete: invalid_client, its token inactive, and 404 after', async (t) => {
  const c = await serviceClient('doomed');
  const tok = (await tokenWith(c.clientId, c.secret)).token!;
  t.is((await call('DELETE', `/${c.clientId}`)).status, 204);
  t.is((await tokenWith(c.clientId, c.secret)).error, 'invalid_client');
  t.is((await introspectAs(d.url, rs, tok)).body.active, false);
  t.is((await call('GET', `/${c.clientId}`)).status, 404);
  t.is((await call('DELETE', `/${c.clientId}`)).status, 404);
});

test("another tenant's client is 404 on every route", async (t) => {
  for (const ref of [foreign.id, foreign.clientId]) {
    t.is((await call('GET', `/${ref}`)).status, 404);
    t.is((await call('PATCH', `/${ref}`, { name: 'x' })).status, 404);
    t.is((await call('POST', `/${ref}/disable`)).status, 404);
    t.is((await call('POST', `/${ref}/secrets`, {})).status, 404);
    t.is((await call('GET', `/${ref}/secrets`)).status, 404);
    t.is((await call('DELETE', `/${ref}`)).status, 404);
  }
  t.is((await tokenWith(foreign.clientId, 'x')).error, 'invalid_client');
});
