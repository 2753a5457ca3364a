/**
 * PUT /api/admin/agent-write/clients/{id}/metadata: only client_name, description, logo_uri and
 * client_uri; every excluded (security-relevant) key and any unknown key refused by name; URI
 * and length bounds; idempotent; audited with before and after.
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { activeTenant, clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';
import { sql } from '../helpers/oauth.js';
import { api } from '../helpers/api.js';
import { AGENT_EXCLUDED_FIELDS } from '../../shared/services/agents/metadata.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let admin: string;
let platform: string;
let target: { id: string; clientId: string };
let otherClientId: string;

const path = (id: string) => `/api/admin/agent-write/clients/${id}/metadata`;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  const c = await directory.createClient(
    s.tenantId,
    { name: 'agent app', grant_types: ['client_credentials'], scopes: ['tools'] },
    actor,
  );
  target = { id: c.client.id, clientId: c.client.client_id };
  const other = await activeTenant(provisioning, { name: 'Other' }, actor);
  otherClientId = (
    await directory.createClient(
      other.id,
      { name: 'theirs', grant_types: ['client_credentials'], scopes: ['x'] },
      actor,
    )
  ).client.client_id;
  await ds.destroy();
  d = await startDaemon(db.url, db.dir);
  admin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
  platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

const auditRows = async (action = 'client.agent_metadata.update') =>
  (await sql(
    db.url,
    db.dir,
    'SELECT summary FROM audit_events WHERE action = ? AND target_id = ? ORDER BY created_at',
    [action, target.clientId],
  )) as { summary: string }[];

test.serial(
  '401 without a token; 403 for another tenant; 404 for an unknown client or one of another tenant',
  async (t) => {
    t.is((await api(d.url, 'PUT', path(target.clientId), { body: { client_name: 'x' } })).status, 401);
    const other = await api(d.url, 'PUT', `${path(target.clientId)}?tenant_id=ten_other`, {
      token: admin,
      body: { client_name: 'x' },
    });
    t.is(other.status, 403);
    t.is(other.body.error, 'tenant_forbidden');
    const missing = await api(d.url, 'PUT', path('nope'), { token: admin, body: { client_name: 'x' } });
    t.is(missing.status, 404);
    const foreign = await api(d.url, 'PUT', path(otherClientId), { token: admin, body: { client_name: 'x' } });
    t.is(foreign.status, 404, "another tenant's client is not found from this tenant");
  },
);

test.serial('path id: 1 to 128 characters of ^[A-Za-z0-9._~-]+$', async (t) => {
  const long = await api(d.url, 'PUT', path('a'.repeat(129)), { token: admin, body: { client_name: 'x' } });
  t.is(long.status, 400);
  t.regex(long.body.message, /id/);
  const bad = await api(d.url, 'PUT', path('a%20b'), { token: admin, body: { client_name: 'x' } });
  t.is(bad.status, 400);
  const ok128 = await api(d.url, 'PUT', path('a'.repeat(128)), { token: admin, body: { client_name: 'x' } });
  t.is(ok128.status, 404, 'a 128-character id is valid (and names no client)');
});

test.serial('every excluded field is refused naming the key, and nothing changes', async (t) => {
  const before = await api(d.url, 'PUT', path(target.clientId), { token: admin, body: { client_name: 'agent app' } });
  t.is(before.status, 200);
  for (const key of AGENT_EXCLUDED_FIELDS) {
    const r = await api(d.url, 'PUT', path(target.clientId), {
      token: admin,
      body: { client_name: 'Changed', [key]: ['x'] },
    });
    t.is(r.status, 400, key);
    t.is(r.body.error, 'field_not_agent_writable', key);
    t.true(String(r.body.message).includes(`body.${key}`), key);
  }
  const unknown = await api(d.url, 'PUT', path(target.clientId), {
    token: admin,
    body: { client_name: 'Changed', colour: 'red' },
  });
  t.is(unknown.status, 400);
  t.is(unknown.body.error, 'field_not_agent_writable');
  t.regex(unknown.body.message, /body\.colour/);
  const rows = (await sql(db.url, db.dir, 'SELECT name, redirect_uris FROM clients WHERE client_id = ?', [
    target.clientId,
  ])) as { name: string; redirect_uris: string }[];
  t.is(rows[0].name, 'agent app');
  t.is(rows[0].redirect_uris, '[]');
});

test.serial('empty body, lengths and URI rules', async (t) => {
  const put = (body: unknown) => api(d.url, 'PUT', path(target.clientId), { token: admin, body });
  const empty = await put({});
  t.is(empty.status, 400);
  t.regex(empty.body.message, /at least one/);
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ client_name: '' }, /client_name/],
    [{ client_name: 'n'.repeat(201) }, /client_name/],
    [{ client_name: '   ' }, /client_name/],
    [{ description: 'd'.repeat(1001) }, /description/],
    [{ logo_uri: 'http://example.test/logo.png' }, /logo_uri: must be an https URL/],
    [{ logo_uri: 'javascript:alert(1)' }, /logo_uri: must not be a javascript: or data: URI/],
    [{ client_uri: 'data:text/html,hi' }, /client_uri: must not be a javascript: or data: URI/],
    [{ client_uri: 'https://user:pw@example.test/' }, /client_uri: must not contain userinfo/],
    [{ client_uri: 'https://user@example.test/' }, /client_uri: must not contain userinfo/],
    [{ client_uri: 'https://example.test/#frag' }, /client_uri: must not contain a fragment/],
    [{ client_uri: 'https://example.test/' + 'p'.repeat(2048) }, /client_uri: must be at most 2048/],
    [{ logo_uri: 'not a url' }, /logo_uri/],
  ];
  for (const [body, re] of cases) {
    const r = await put(body);
    t.is(r.status, 400, JSON.stringify(body).slice(0, 80));
    t.regex(String(r.body.message), re);
  }
  const max = await put({ client_name: 'n'.repeat(200), description: 'd'.repeat(1000) });
  t.is(max.status, 200);
  const uri2048 = 'https://example.test/' + 'p'.repeat(2048 - 'https://example.test/'.length);
  const longUri = await put({ client_uri: uri2048 });
  t.is(longUri.status, 200);
  t.is(longUri.body.client.client_uri, uri2048);
});

test.serial(
  'idempotent PUT: the same body twice gives the same client, one audit event with before and after',
  async (t) => {
    const body = {
      client_name: 'Research agent',
      description: 'Reads and summarises.',
      logo_uri: 'https://cdn.example.test/logo.png',
      client_uri: 'https://agent.example.test/',
    };
    const n0 = (await auditRows()).length;
    const first = await api(d.url, 'PUT', path(target.clientId), { token: admin, body });
    t.is(first.status, 200);
    t.true(first.body.changed);
    t.like(first.body.client, { client_id: target.clientId, ...body });
    const second = await api(d.url, 'PUT', path(target.clientId), { token: admin, body });
    t.is(second.status, 200);
    t.false(second.body.changed);
    t.deepEqual(second.body.client, first.body.client);
    const rows = await auditRows();
    t.is(rows.length, n0 + 1, 'the repeat records nothing');
    const summary = JSON.parse(rows[rows.length - 1].summary) as { before: unknown; after: unknown };
    t.like(summary.after, body);
    t.notDeepEqual(summary.before, summary.after);
    // By the internal id too, and by a platform admin naming the tenant.
    const byId = await api(d.url, 'PUT', `${path(target.id)}?tenant_id=${s.tenantId}`, {
      token: platform,
      body: {
        description: null,
      },
    });
    t.is(byId.status, 200);
    t.is(byId.body.client.description, null);
    t.is(byId.body.client.client_name, 'Research agent');
  },
);
