/**
 * PATCH (and GET) /api/admin/tenants/{tenantId}/email-settings: the tenant's email notifier
 * provider order, per the interface specification, with each refusal.
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { clientCredentialsToken, openServices, seed, type Seeded, activeTenant } from '../helpers/seed.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let platform: string;
let tenantAdmin: string;
let otherTenantId: string;
let noAdminScope: string;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  try {
    const actor = { type: 'system' as const, id: 'test' };
    otherTenantId = (await activeTenant(provisioning, { name: 'Other' }, actor)).id;
    const reporter = await directory.createClient(
      s.tenantId,
      { name: 'reporter', grant_types: ['client_credentials'], scopes: ['reports.read'] },
      actor,
    );
    d = await startDaemon(db.url, db.dir, { IAM_MAIL_FROM: 'accounts@acme.example' });
    noAdminScope = await clientCredentialsToken(d.url, reporter.client.client_id, reporter.client_secret!);
  } finally {
    await ds.destroy();
  }
  platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  tenantAdmin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

const path = (tenantId: string) => `/api/admin/tenants/${tenantId}/email-settings`;
const call = (method: string, p: string, token?: string, body?: unknown) =>
  fetch(`${d.url}${p}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
const valid = { strategy: 'priority_failover', providerOrder: ['log'] };

interface Entry {
  id: string;
  name: string;
  description: string;
  category: string;
  configSource: string;
  configured: boolean;
  missingRequiredFields: string[];
  defaultFrom: string;
}
interface View {
  tenantId: string;
  settings: { strategy: string; providerOrder: string[] };
  providers: Entry[];
}

test.serial('GET before any change: the default order, and every provider entry', async (t) => {
  const r = await call('GET', path(s.tenantId), platform);
  t.is(r.status, 200);
  const v = (await r.json()) as View;
  t.is(v.tenantId, s.tenantId);
  // No IAM_SMTP_URL in this daemon: the log is the only default.
  t.deepEqual(v.settings, { strategy: 'priority_failover', providerOrder: ['log'] });
  const smtp = v.providers.find((p) => p.id === 'smtp')!;
  t.like(smtp, {
    configured: false,
    missingRequiredFields: ['IAM_SMTP_URL'],
    configSource: 'environment',
    defaultFrom: 'accounts@acme.example',
  });
  const log = v.providers.find((p) => p.id === 'log')!;
  t.like(log, { configured: true, missingRequiredFields: [], category: 'development' });
  for (const p of v.providers)
    for (const f of ['name', 'description', 'category', 'configSource'])
      t.is(typeof (p as unknown as Record<string, unknown>)[f], 'string');
});

test.serial(
  'PATCH by a platform admin stores the order, answers with it and the providers, and is audited',
  async (t) => {
    const r = await call('PATCH', path(s.tenantId), platform, {
      strategy: 'priority_failover',
      providerOrder: ['smtp', 'log'],
    });
    t.is(r.status, 200);
    const v = (await r.json()) as View;
    t.deepEqual(v, {
      tenantId: s.tenantId,
      settings: { strategy: 'priority_failover', providerOrder: ['smtp', 'log'] },
      providers: v.providers,
    });
    t.deepEqual(
      v.providers.map((p) => p.id),
      ['smtp', 'log'],
    );
    t.deepEqual(((await (await call('GET', path(s.tenantId), platform)).json()) as View).settings.providerOrder, [
      'smtp',
      'log',
    ]);

    const { ds, directory } = await openServices(db.url, db.dir);
    t.teardown(() => ds.destroy());
    const tenant = await directory.requireTenant(s.tenantId);
    t.deepEqual(tenant.settings.email, { strategy: 'priority_failover', providerOrder: ['smtp', 'log'] });
    const events = await directory.scope(s.tenantId).audit.list();
    const e = events.find((x) => x.action === 'tenant.email_settings.update');
    t.truthy(e);
    t.is(e!.target_id, s.tenantId);
    t.is(e!.actor_id, s.platform.clientId);
    t.deepEqual(e!.summary.after, { strategy: 'priority_failover', providerOrder: ['smtp', 'log'] });
  },
);

test.serial('a tenant admin may change its own tenant', async (t) => {
  const r = await call('PATCH', path(s.tenantId), tenantAdmin, {
    strategy: 'priority_failover',
    providerOrder: ['log', 'smtp'],
  });
  t.is(r.status, 200);
  t.deepEqual(((await r.json()) as View).settings.providerOrder, ['log', 'smtp']);
});

test('other tenant settings are kept when the email settings change', async (t) => {
  const { ds } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  await ds.query('UPDATE tenants SET settings = ? WHERE id = ?', [
    JSON.stringify({ branding: { color: 'teal' } }),
    otherTenantId,
  ]);
  t.is((await call('PATCH', path(otherTenantId), platform, valid)).status, 200);
  const [row] = await ds.query<
    {
      settings: string;
    }[]
  >('SELECT settings FROM tenants WHERE id = ?', [otherTenantId]);
  t.deepEqual(JSON.parse(row.settings), { branding: { color: 'teal' }, email: valid });
});

const invalid: [string, unknown, RegExp][] = [
  ['strategy missing', { providerOrder: ['log'] }, /^body\.strategy: is required/],
  [
    'another strategy',
    { strategy: 'round_robin', providerOrder: ['log'] },
    /^body\.strategy: must be one of: priority_failover/,
  ],
  ['providerOrder missing', { strategy: 'priority_failover' }, /^body\.providerOrder: is required/],
  [
    'providerOrder not an array',
    { strategy: 'priority_failover', providerOrder: 'log' },
    /^body\.providerOrder: must be an array/,
  ],
  [
    'providerOrder empty',
    { strategy: 'priority_failover', providerOrder: [] },
    /^body\.providerOrder: must name at least one provider/,
  ],
  [
    'unknown provider',
    { strategy: 'priority_failover', providerOrder: ['log', 'carrier-pigeon'] },
    /^body\.providerOrder\.1: unknown provider "carrier-pigeon"; known providers: smtp, log/,
  ],
  [
    'a provider twice',
    { strategy: 'priority_failover', providerOrder: ['log', 'smtp', 'log'] },
    /^body\.providerOrder\.2: provider "log" is listed twice/,
  ],
  [
    'more than 10',
    { strategy: 'priority_failover', providerOrder: Array.from({ length: 11 }, () => 'log') },
    /^body\.providerOrder: must name at most 10/,
  ],
  ['an unknown field', { ...valid, fallback: 'log' }, /^body: unknown field\(s\): fallback/],
];
for (const [what, body, message] of invalid) {
  test(`400 naming the field: ${what}`, async (t) => {
    const r = await call('PATCH', path(s.tenantId), platform, body);
    t.is(r.status, 400);
    const e = (await r.json()) as { error: string; error_description: string };
    t.is(e.error, 'invalid_request');
    t.regex(e.error_description, message);
  });
}

test('400 for a body that is not JSON', async (t) => {
  const r = await fetch(`${d.url}${path(s.tenantId)}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${platform}`, 'content-type': 'application/json' },
    body: '{"strategy":',
  });
  t.is(r.status, 400);
});

test('401 without a token or with a bad one', async (t) => {
  for (const token of [undefined, 'not-a-token']) {
    const r = await call('PATCH', path(s.tenantId), token, valid);
    t.is(r.status, 401);
    t.regex(r.headers.get('www-authenticate') ?? '', /^Bearer/);
    t.is(((await r.json()) as { error: string }).error, 'invalid_token');
  }
  t.is((await call('GET', path(s.tenantId))).status, 401);
});

test('403 for a token without an admin scope', async (t) => {
  const r = await call('PATCH', path(s.tenantId), noAdminScope, valid);
  t.is(r.status, 403);
  t.is(((await r.json()) as { error: string }).error, 'insufficient_scope');
});

test('403 for a tenant admin naming another tenant, existing or not', async (t) => {
  for (const id of [otherTenantId, 'ten_doesnotexist']) {
    const r = await call('PATCH', path(id), tenantAdmin, valid);
    t.is(r.status, 403);
    t.is(((await r.json()) as { error: string }).error, 'tenant_forbidden');
  }
  t.is((await call('GET', path(otherTenantId), tenantAdmin)).status, 403);
});

test('404 for an unknown tenant', async (t) => {
  const r = await call('PATCH', path('ten_doesnotexist'), platform, valid);
  t.is(r.status, 404);
  t.is(((await r.json()) as { error: string }).error, 'not_found');
  t.is((await call('GET', path('ten_doesnotexist'), platform)).status, 404);
});

test('both methods are in /openapi.json with their schemas and scopes', async (t) => {
  const doc = (await (await fetch(`${d.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, any>> };
  const p = doc.paths['/api/admin/tenants/{tenantId}/email-settings'];
  t.truthy(p?.patch);
  t.truthy(p?.get);
  const body = p.patch.requestBody.content['application/json'].schema;
  t.deepEqual(body.required.sort(), ['providerOrder', 'strategy']);
  t.deepEqual(body.properties.strategy.enum, ['priority_failover']);
  // The plugin provider (webhook-email) is a known id; it sends only where the plugin is enabled.
  t.deepEqual(body.properties.providerOrder.items.enum, ['smtp', 'log', 'webhook-email']);
  t.deepEqual(Object.keys(p.patch.responses).sort(), ['200', '400', '401', '403', '404']);
  t.deepEqual(p.patch.security, [{ bearer: ['iam.platform', 'iam.admin'] }]);
});

test('the daemon warns once at start-up that mail goes to the log', (t) => {
  const warnings = d.logs.filter(
    (l) => l.level === 40 && /written to the log by the log email provider; for development only/.test(String(l.msg)),
  );
  t.is(warnings.length, 1);
});
