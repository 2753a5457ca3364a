/**
 * Bearer authentication and tenant confinement on the admin directory API.
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { clientCredentialsToken, seed, type Seeded } from '../helpers/seed.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let platform: string;
let tenantAdmin: string;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  d = await startDaemon(db.url, db.dir);
  platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  tenantAdmin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

const call = (method: string, path: string, token?: string, body?: unknown) =>
  fetch(`${d.url}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });

test('no token: 401 with a Bearer challenge', async (t) => {
  const r = await call('GET', '/api/admin/tenants');
  t.is(r.status, 401);
  t.regex(r.headers.get('www-authenticate') ?? '', /^Bearer/);
  t.is(((await r.json()) as { error: string }).error, 'invalid_token');
});

test('a forged or tampered token: 401', async (t) => {
  const parts = platform.split('.');
  const payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString());
  payload.scope = 'iam.platform';
  payload.tenant_id = 'ten_other';
  const forged = [parts[0], Buffer.from(JSON.stringify(payload)).toString('base64url'), parts[2]].join('.');
  t.is((await call('GET', '/api/admin/tenants', forged)).status, 401);
  t.is((await call('GET', '/api/admin/tenants', 'not-a-jwt')).status, 401);
});

test('wrong client secret at /token: 401 invalid_client', async (t) => {
  const r = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic ' + Buffer.from(`${s.platform.clientId}:wrong`).toString('base64'),
    },
    body: 'grant_type=client_credentials',
  });
  t.is(r.status, 401);
  t.is(((await r.json()) as { error: string }).error, 'invalid_client');
  t.regex(r.headers.get('www-authenticate') ?? '', /^Basic/);
});

test('a scope the client does not hold: 400 invalid_scope', async (t) => {
  await t.throwsAsync(
    () => clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret, 'iam.platform'),
    { message: /invalid_scope/ },
  );
});

test('the access token is an RFC 9068 JWT', (t) => {
  const [h, p] = platform
    .split('.')
    .slice(0, 2)
    .map((x) => JSON.parse(Buffer.from(x, 'base64url').toString()));
  t.is(h.typ, 'at+jwt');
  t.is(h.alg, 'ES256');
  t.truthy(h.kid);
  t.is(p.iss, d.url);
  t.true(p.exp > p.iat);
  for (const claim of ['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'client_id', 'scope', 'tenant_id'])
    t.truthy(p[claim], claim);
});

test('platform admin creates a tenant, a client and a user', async (t) => {
  const tr = await call('POST', '/api/admin/tenants', platform, { name: 'Acme' });
  t.is(tr.status, 201);
  const tenant = (await tr.json()) as { id: string; lifecycle_state: string; provisioning: { tenant_id: string } };
  // Active once its provisioning operation completes (test/admin/provisioning.test.ts); an
  // admin may set it up meanwhile.
  t.is(tenant.lifecycle_state, 'provisioning');
  t.is(tenant.provisioning.tenant_id, tenant.id);
  const cr = await call('POST', `/api/admin/tenants/${tenant.id}/clients`, platform, {
    name: 'web',
    redirect_uris: ['https://acme.example/cb'],
  });
  t.is(cr.status, 201);
  const client = (await cr.json()) as Record<string, unknown>;
  t.truthy(client.client_id);
  t.truthy(client.client_secret);
  t.false('secret_hash' in client);
  const ur = await call('POST', `/api/admin/tenants/${tenant.id}/users`, platform, {
    email: 'Ann@Acme.example',
    name: 'Ann',
  });
  t.is(ur.status, 201);
  t.is(((await ur.json()) as { email: string }).email, 'ann@acme.example');
  const dup = await call('POST', `/api/admin/tenants/${tenant.id}/users`, platform, {
    email: 'ann@acme.example',
    name: 'Ann again',
  });
  t.is(dup.status, 409);
  const listed = (await (await call('GET', `/api/admin/tenants/${tenant.id}/clients`, platform)).json()) as {
    clients: Record<string, unknown>[];
  };
  t.is(listed.clients.length, 1);
  t.false('client_secret' in listed.clients[0]);
});

test('tenant admin: confined to its own tenant', async (t) => {
  const other = (await (await call('POST', '/api/admin/tenants', platform, { name: 'Other' })).json()) as {
    id: string;
  };
  const own = await call('GET', `/api/admin/tenants/${s.tenantId}/users`, tenantAdmin);
  t.is(own.status, 200);
  const foreign = await call('GET', `/api/admin/tenants/${other.id}/users`, tenantAdmin);
  t.is(foreign.status, 403);
  t.is(((await foreign.json()) as { error: string }).error, 'tenant_forbidden');
  const write = await call('POST', `/api/admin/tenants/${other.id}/users`, tenantAdmin, {
    email: 'x@y.example',
    name: 'X',
  });
  t.is(write.status, 403);
  const tenants = (await (await call('GET', '/api/admin/tenants', tenantAdmin)).json()) as {
    tenants: { id: string }[];
  };
  t.deepEqual(
    tenants.tenants.map((x) => x.id),
    [s.tenantId],
  );
});

test('tenant admin: missing scope for platform operations (403) and cannot mint platform clients', async (t) => {
  const r = await call('POST', '/api/admin/tenants', tenantAdmin, { name: 'Nope' });
  t.is(r.status, 403);
  t.is(((await r.json()) as { error: string }).error, 'insufficient_scope');
  const c = await call('POST', `/api/admin/tenants/${s.tenantId}/clients`, tenantAdmin, {
    name: 'escalate',
    grant_types: ['client_credentials'],
    scopes: ['iam.platform'],
  });
  t.is(c.status, 403);
});

test('a token without any admin scope: 403', async (t) => {
  const cr = await call('POST', `/api/admin/tenants/${s.tenantId}/clients`, platform, {
    name: 'reader',
    grant_types: ['client_credentials'],
    scopes: ['profile'],
  });
  const c = (await cr.json()) as { client_id: string; client_secret: string };
  const tok = await clientCredentialsToken(d.url, c.client_id, c.client_secret);
  const r = await call('GET', '/api/admin/tenants', tok);
  t.is(r.status, 403);
  t.regex(r.headers.get('www-authenticate') ?? '', /insufficient_scope/);
});
