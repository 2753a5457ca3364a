/**
 * PUT (and GET) /api/admin/external-token-refresh/config on the real daemon: authentication and
 * tenant reach, 503 with the error object when the tenant has no upstream provider (the bridge
 * binding), every bound refused naming its field, the merge of a partial update, and the
 * response shape ({config with all five fields, runtime_status}).
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { activeTenant, clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';
import { registerUpstream } from '../helpers/refresh-links.js';
import { api } from '../helpers/api.js';

const PATH = '/api/admin/external-token-refresh/config';
const actor = { type: 'system' as const, id: 'test' };

let db: TestDb;
let d: Daemon;
let s: Seeded;
let platform: string;
let tenantAdmin: string;
let bridged: string;
let disabledOnly: string;

const call = (method: 'GET' | 'PUT', token: string | undefined, body?: unknown, tenantId?: string) =>
  api(d.url, method, `${PATH}${tenantId ? `?tenant_id=${encodeURIComponent(tenantId)}` : ''}`, { token, body });

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  const { ds, provisioning } = await openServices(db.url, db.dir);
  const upstream = { issuer: 'https://idp.example.com', clientId: 'rp', clientSecret: 'secret' };
  bridged = (await activeTenant(provisioning, { name: 'Bridged' }, actor)).id;
  await registerUpstream(ds, bridged, upstream);
  // A provider that is disabled is no bridge binding.
  disabledOnly = (await activeTenant(provisioning, { name: 'Disabled' }, actor)).id;
  await registerUpstream(ds, disabledOnly, upstream, 'disabled');
  await ds.destroy();
  d = await startDaemon(db.url, db.dir);
  platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  tenantAdmin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

test.serial('401 without a token; 403 for another tenant; 404 for no tenant', async (t) => {
  const none = await call('PUT', undefined, { enabled: true });
  t.is(none.status, 401);
  t.is(none.body.error, 'invalid_token');
  const other = await call('PUT', tenantAdmin, { enabled: true }, bridged);
  t.is(other.status, 403);
  t.is(other.body.error, 'tenant_forbidden');
  const missing = await call('GET', platform, undefined, 'ten_doesnotexist');
  t.is(missing.status, 404);
});

test.serial(
  'no active upstream provider: PUT is 503 bridge_unavailable with the error object, nothing stored',
  async (t) => {
    for (const tenant of [undefined, disabledOnly]) {
      const r = await call('PUT', tenant ? platform : tenantAdmin, { enabled: true }, tenant);
      t.is(r.status, 503);
      t.is(r.body.error, 'bridge_unavailable');
      t.regex(String(r.body.message), /no active upstream identity provider/);
      t.is(r.body.error_description, r.body.message);
    }
    const g = await call('GET', tenantAdmin);
    t.is(g.status, 200);
    t.is(g.body.runtime_status, 'bridge_unavailable');
    t.false(g.body.config.enabled, 'the refused PUT stored nothing');
  },
);

test.serial('every bound is refused with 400, naming the field', async (t) => {
  const cases: [string, unknown][] = [
    ['refreshThresholdSeconds', 59],
    ['refreshThresholdSeconds', 86_401],
    ['batchSize', 0],
    ['batchSize', 1001],
    ['scheduledTenantBatchSize', 0],
    ['scheduledTenantBatchSize', 101],
    ['piiShardPageSize', 0],
    ['piiShardPageSize', 1001],
    ['batchSize', 2.5],
    ['batchSize', '10'],
    ['enabled', 'yes'],
  ];
  for (const [field, value] of cases) {
    const r = await call('PUT', platform, { [field]: value }, bridged);
    t.is(r.status, 400, `${field}=${JSON.stringify(value)}`);
    t.is(r.body.error, 'invalid_request');
    t.true(String(r.body.message).startsWith(`body.${field}:`), String(r.body.message));
    t.deepEqual(
      r.body.details.map((x: { field: string }) => x.field),
      [`body.${field}`],
    );
  }
  // The bounds themselves are accepted.
  const lo = await call(
    'PUT',
    platform,
    { refreshThresholdSeconds: 60, batchSize: 1, scheduledTenantBatchSize: 1, piiShardPageSize: 1 },
    bridged,
  );
  t.is(lo.status, 200);
  const hi = await call(
    'PUT',
    platform,
    { refreshThresholdSeconds: 86_400, batchSize: 1000, scheduledTenantBatchSize: 100, piiShardPageSize: 1000 },
    bridged,
  );
  t.is(hi.status, 200);
});

test.serial('with a bridge: PUT stores, fields left out keep their value, the answer has all five', async (t) => {
  const a = await call('PUT', platform, { enabled: true, batchSize: 50, extra: 'tolerated' }, bridged);
  t.is(a.status, 200);
  t.deepEqual(a.body, {
    config: {
      enabled: true,
      refreshThresholdSeconds: 86_400,
      batchSize: 50,
      scheduledTenantBatchSize: 100,
      piiShardPageSize: 1000,
    },
    runtime_status: 'scheduled',
  });
  const b = await call('PUT', platform, { enabled: false }, bridged);
  t.is(b.body.runtime_status, 'manual_only');
  t.is(b.body.config.batchSize, 50);
  const g = await call('GET', platform, undefined, bridged);
  t.deepEqual(g.body, b.body);
  t.false('extra' in g.body.config);
});
