/**
 * Platform plugins over HTTP (docs/plugins.md): the registry and state reads, config per
 * platform or tenant (partial configs, secrets masked in every answer and sealed at rest),
 * enable (422 with every missing field; provisioning) and disable, each refusal and bound; and
 * the two plugins at work against a real HTTPS receiver on loopback: the webhook email
 * provider in the tenant's failover order (with an SMTP sink), and the audit webhook receiving
 * the events of a tenant suspend, signed.
 */
import test from 'ava';
import type { Database } from '../../shared/db/index.js';
import { Outbox } from '../../shared/services/outbox.js';
import { createTestDatabase, TEST_SECRET_KEY, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { activeTenant, clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { signatureValid, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { until } from '../helpers/poll.js';
import { api } from '../helpers/api.js';

type Json = ReturnType<typeof JSON.parse>;

let db: TestDb;
let d: Daemon;
let s: Seeded;
let sink: SmtpSink;
let hook: WebhookReceiver;
let platform: string;
let tenantAdmin: string;
let services: Awaited<ReturnType<typeof openServices>>;
let n = 0;

const SECRET = 'whsec_0123456789abcdefghijklmnop';
const SECRET2 = 'whsec_zyxwvutsrqponmlkjihgfedcba';
const BEARER = 'bearer-token-0123456789abcdefXYZ9';
const actor = { type: 'system' as const, id: 'test' };

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  sink = await startSmtpSink();
  hook = await startWebhookReceiver();
  d = await startDaemon(db.url, db.dir, {
    IAM_SMTP_URL: sink.url,
    IAM_OUTBOUND_ALLOW_LOOPBACK: 'true',
    IAM_OUTBOUND_CA_FILE: hook.cert.certFile,
  });
  platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  tenantAdmin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
  services = await openServices(db.url, db.dir);
});
test.after.always(async () => {
  await d?.stop();
  await services?.ds.destroy();
  await sink?.close();
  await hook?.close();
  await db?.drop();
});

const call = (method: string, path: string, body?: unknown, token: string | null = platform) =>
  api(d.url, method, path, { body, token });

const P = '/api/admin/platform/plugins';
const configure = (id: string, body: unknown, token?: string | null) => call('PUT', `${P}/${id}/config`, body, token);
const enable = (id: string, body: unknown = {}, token?: string | null) => call('PUT', `${P}/${id}/enable`, body, token);
const disable = (id: string, body: unknown = {}, token?: string | null) =>
  call('PUT', `${P}/${id}/disable`, body, token);

/** A fresh tenant, so tests do not see each other's plugin settings. */
async function newTenant(): Promise<string> {
  return (await activeTenant(services.provisioning, { name: `Plugins ${++n}` }, actor)).id;
}

async function sealedRow(ds: Database, pluginId: string, scopeKey: string) {
  const rows = await ds.query<{ config: string; secrets_sealed: string | null; enabled: unknown }[]>(
    'SELECT config, secrets_sealed, enabled FROM plugin_settings WHERE plugin_id = ? AND scope_key = ?',
    [pluginId, scopeKey],
  );
  return rows[0];
}

test('GET list: every plugin with its fields and state; the platform scope for iam.platform, the own tenant otherwise', async (t) => {
  const r = await call('GET', P);
  t.is(r.status, 200, r.text);
  t.is(r.body.tenantId, null);
  const ids = (r.body.plugins as Json[]).map((p) => p.pluginId);
  t.deepEqual(ids, ['webhook-email', 'audit-webhook']);
  const email = (r.body.plugins as Json[])[0];
  t.is(email.plugin.category, 'email');
  t.deepEqual(
    email.plugin.fields.filter((f: Json) => f.required).map((f: Json) => f.name),
    ['url', 'signingSecret'],
  );
  t.deepEqual(
    email.plugin.fields.filter((f: Json) => f.secret).map((f: Json) => f.name),
    ['signingSecret', 'bearerToken'],
  );
  t.is((r.body.plugins as Json[])[1].plugin.provisioningKind, 'verification_delivery');

  const own = await call('GET', P, undefined, tenantAdmin);
  t.is(own.status, 200);
  t.is(own.body.tenantId, s.tenantId);
  const one = await call('GET', `${P}/webhook-email?tenant_id=${s.tenantId}`, undefined, tenantAdmin);
  t.is(one.status, 200);
  t.like(one.body, { success: true, pluginId: 'webhook-email', tenantId: s.tenantId, enabled: false });
  t.is(one.body.configSource, 'none');
  t.deepEqual(one.body.missingRequiredFields, ['url', 'signingSecret']);
});

test('refusals: 401 without a token, 404 unknown plugin or tenant, 403 another tenant or the platform scope for a tenant admin', async (t) => {
  t.is((await call('GET', P, undefined, null)).status, 401);
  t.is((await enable('audit-webhook', {}, null)).status, 401);
  const unknown = await call('GET', `${P}/no-such-plugin`);
  t.is(unknown.status, 404);
  t.is(unknown.body.error, 'plugin_not_found');
  t.is((await enable('no-such-plugin')).body.error, 'plugin_not_found');
  t.is((await call('GET', `${P}?tenant_id=ten_missing`)).status, 404);
  t.is((await enable('audit-webhook', { tenant_id: 'ten_missing' })).status, 404);

  const other = await newTenant();
  const cross = await configure('audit-webhook', { tenant_id: other, config: {} }, tenantAdmin);
  t.is(cross.status, 403);
  t.is(cross.body.error, 'tenant_forbidden');
  t.is((await call('GET', `${P}?tenant_id=${other}`, undefined, tenantAdmin)).status, 403);
  t.is((await enable('audit-webhook', { tenant_id: other }, tenantAdmin)).status, 403);
  // No tenant_id: the platform-level setting, which a tenant admin may not change.
  const plat = await configure('audit-webhook', { config: { url: 'https://siem.example.com/x' } }, tenantAdmin);
  t.is(plat.status, 403);
  t.is(plat.body.error, 'insufficient_scope');
  t.is((await disable('audit-webhook', {}, tenantAdmin)).status, 403);
});

test('config: bounds and validation name the field; partial configs are accepted and report what is missing', async (t) => {
  const ten = await newTenant();
  const bad = async (config: unknown, field: RegExp) => {
    const r = await configure('webhook-email', { tenant_id: ten, config });
    t.is(r.status, 400, r.text);
    t.is(r.body.error, 'invalid_request');
    t.regex(String(r.body.message), field);
  };
  await bad({ url: 'http://hooks.example.com/mail' }, /config\.url: only https/);
  await bad({ url: 'https://user:pw@hooks.example.com/' }, /config\.url: .*credentials/);
  await bad({ url: 'https://10.0.0.5/mail' }, /config\.url: the address 10\.0\.0\.5 is/);
  await bad({ url: `https://hooks.example.com/${'a'.repeat(2050)}` }, /config\.url: must be at most 2048/);
  await bad({ signingSecret: 'short' }, /config\.signingSecret: must be at least 24/);
  await bad({ timeoutMs: 10 }, /config\.timeoutMs/);
  await bad({ nope: 1 }, /config: unknown field\(s\): nope|config\.nope/);
  await bad({ nope: null }, /config\.nope: unknown field/);
  await bad('not an object', /config/);
  const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`f${i}`, 1]));
  await bad(many, /config: must have at most 32 fields/);
  t.is((await configure('webhook-email', { tenant_id: ten, config: {}, extra: 1 })).status, 400);

  const partial = await configure('webhook-email', { tenant_id: ten, config: { url: `${hook.url}/mail` } });
  t.is(partial.status, 200, partial.text);
  t.like(partial.body, { success: true, pluginId: 'webhook-email', tenantId: ten, enabled: false, configured: false });
  t.is(partial.body.configSource, 'tenant');
  t.deepEqual(partial.body.missingRequiredFields, ['signingSecret']);
  t.is(partial.body.config.url, `${hook.url}/mail`);
});

test('enable with missing fields: 422 listing every one; nothing changes', async (t) => {
  const ten = await newTenant();
  const r = await enable('audit-webhook', { tenant_id: ten });
  t.is(r.status, 422, r.text);
  t.is(r.body.error, 'plugin_config_incomplete');
  t.deepEqual(r.body.missingRequiredFields, ['url', 'signingSecret']);
  t.regex(String(r.body.message), /url, signingSecret/);
  await configure('audit-webhook', { tenant_id: ten, config: { url: `${hook.url}/siem` } });
  const again = await enable('audit-webhook', { tenant_id: ten });
  t.is(again.status, 422);
  t.deepEqual(again.body.missingRequiredFields, ['signingSecret']);
  t.is((await call('GET', `${P}/audit-webhook?tenant_id=${ten}`)).body.enabled, false);
});

test('secrets: masked in every answer, sealed at rest (the raw row holds neither value), removable with null', async (t) => {
  const ten = await newTenant();
  const r = await configure('webhook-email', {
    tenant_id: ten,
    config: { url: `${hook.url}/mail`, signingSecret: SECRET, bearerToken: BEARER },
  });
  t.is(r.status, 200, r.text);
  t.is(r.body.config.signingSecret, `••••${SECRET.slice(-4)}`);
  t.is(r.body.config.bearerToken, `••••${BEARER.slice(-4)}`);
  t.false(r.text.includes(SECRET));
  t.false(r.text.includes(BEARER));
  for (const path of [`${P}?tenant_id=${ten}`, `${P}/webhook-email?tenant_id=${ten}`]) {
    const g = await call('GET', path);
    t.false(g.text.includes(SECRET), path);
    t.false(g.text.includes(BEARER), path);
  }
  const row = await sealedRow(services.ds, 'webhook-email', ten);
  t.truthy(row.secrets_sealed);
  t.regex(row.secrets_sealed!, /^v1\./);
  for (const v of [row.config, row.secrets_sealed!]) {
    t.false(v.includes(SECRET));
    t.false(v.includes(BEARER));
  }
  t.is(JSON.parse(row.config).url, `${hook.url}/mail`);
  // The audit event names the fields set, never their values.
  const events = await services.ds.query<{ summary: string }[]>(
    "SELECT summary FROM audit_events WHERE tenant_id = ? AND action = 'plugin.configure'",
    [ten],
  );
  t.true(events.length > 0);
  t.false(events.some((e) => String(e.summary).includes(SECRET)));

  const removed = await configure('webhook-email', { tenant_id: ten, config: { bearerToken: null } });
  t.is(removed.body.config.bearerToken, undefined);
  t.deepEqual(removed.body.missingRequiredFields, []);
});

// Serial (ava runs these first): a platform-level config is every other tenant's default.
test.serial(
  'platform config and enable: iam.platform only; tenants without their own config inherit it; a tenant disable wins',
  async (t) => {
    const ten = await newTenant();
    const own = await newTenant();
    t.is((await configure('audit-webhook', { config: { url: `${hook.url}/platform` } })).status, 200);
    // A tenant with a config of its own never gets the platform's secret merged into it.
    await configure('audit-webhook', { tenant_id: own, config: { url: `${hook.url}/own` } });
    const r = await configure('audit-webhook', { config: { signingSecret: SECRET2 } });
    t.is(r.status, 200);
    t.like(r.body, { tenantId: null, configSource: 'platform', configured: true });
    const gOwn = await call('GET', `${P}/audit-webhook?tenant_id=${own}`);
    t.is(gOwn.body.configSource, 'tenant');
    t.deepEqual(gOwn.body.missingRequiredFields, ['signingSecret']);

    const e = await enable('audit-webhook');
    t.is(e.status, 200, e.text);
    t.like(e.body, { success: true, pluginId: 'audit-webhook', tenantId: null, enabled: true, configured: true });
    t.is(e.body.provisioning.state, 'pending');
    t.is(e.body.provisioning.kind, 'verification_delivery');
    t.regex(e.body.provisioning.operationId, /^plop_/);
    const inherited = await call('GET', `${P}/audit-webhook?tenant_id=${ten}`);
    t.like(inherited.body, { enabled: true, configSource: 'platform', configured: true });

    const off = await disable('audit-webhook', { tenant_id: ten });
    t.is(off.status, 200);
    t.like(off.body, { tenantId: ten, enabled: false, configSource: 'platform' });
    t.is((await call('GET', `${P}/audit-webhook`)).body.enabled, true, 'the platform stays enabled');
    // The platform's verification delivery arrives, signed with the platform's secret.
    const v = await hook.waitFor(
      (x) => x.path === '/platform' && x.json.operationId === e.body.provisioning.operationId,
    );
    t.true(signatureValid(v, SECRET2));
    t.is((await disable('audit-webhook')).status, 200);
    // Removed again, so that the other tests' tenants have no platform config to fall back on.
    const cleared = await configure('audit-webhook', { config: { url: null, signingSecret: null } });
    t.is(cleared.body.configSource, 'none');
    t.is((await call('GET', `${P}/audit-webhook?tenant_id=${ten}`)).body.configSource, 'none');
  },
);

test('webhook email: joins the provider list when enabled; delivers signed to the receiver; fails over to SMTP on a 500', async (t) => {
  const ten = await newTenant();
  const path = `/mail-${ten}`;
  await configure('webhook-email', {
    tenant_id: ten,
    config: { url: `${hook.url}${path}`, signingSecret: SECRET, bearerToken: BEARER, from: 'noreply@hooks.test' },
  });
  const settings = `/api/admin/tenants/${ten}/email-settings`;
  const before = await call('GET', settings);
  t.false(
    (before.body.providers as Json[]).some((p) => p.id === 'webhook-email'),
    'not listed while disabled',
  );
  const en = await enable('webhook-email', { tenant_id: ten });
  t.is(en.status, 200, en.text);
  t.is(en.body.provisioning, undefined);
  const order = await call('PATCH', settings, {
    strategy: 'priority_failover',
    providerOrder: ['webhook-email', 'smtp'],
  });
  t.is(order.status, 200, order.text);
  const entry = (order.body.providers as Json[]).find((p) => p.id === 'webhook-email');
  t.like(entry, { configured: true, configSource: 'tenant', defaultFrom: 'noreply@hooks.test' });

  const outbox = new Outbox(services.ds, TEST_SECRET_KEY);
  const first = await outbox.sendEmail({ tenantId: ten, to: 'ann@example.com', subject: 'Hello 1', text: 'one' });
  const got = await hook.waitFor((x) => x.path === path && x.json.id === first);
  t.like(got.json, { to: 'ann@example.com', subject: 'Hello 1', text: 'one', from: 'noreply@hooks.test' });
  t.true(signatureValid(got, SECRET));
  t.is(got.headers.authorization, `Bearer ${BEARER}`);
  t.is(got.headers['x-iam-delivery-id'], first);

  // The webhook answers 500: the next provider in the order (SMTP) takes the message.
  hook.setStatus(path, 500);
  await outbox.sendEmail({ tenantId: ten, to: 'bob@example.com', subject: 'Hello 2', text: 'two' });
  const viaSmtp = await sink.waitFor((m) => m.subject === 'Hello 2', 20_000);
  t.deepEqual(viaSmtp.to, ['bob@example.com']);
  t.false(hook.received.some((x) => x.json.subject === 'Hello 2'));

  // SMTP first and refusing: the webhook (next in the order) takes it.
  hook.setStatus(path, 200);
  await call('PATCH', settings, { strategy: 'priority_failover', providerOrder: ['smtp', 'webhook-email'] });
  sink.setReject('permanent');
  try {
    const third = await outbox.sendEmail({ tenantId: ten, to: 'cy@example.com', subject: 'Hello 3', text: 'three' });
    const r3 = await hook.waitFor((x) => x.path === path && x.json.id === third);
    t.is(r3.json.subject, 'Hello 3');
  } finally {
    sink.setReject(false);
  }

  // Disabled: it leaves the tenant's list, and a send through it falls through.
  await disable('webhook-email', { tenant_id: ten });
  await call('PATCH', settings, { strategy: 'priority_failover', providerOrder: ['webhook-email', 'smtp'] });
  await outbox.sendEmail({ tenantId: ten, to: 'di@example.com', subject: 'Hello 4', text: 'four' });
  await sink.waitFor((m) => m.subject === 'Hello 4', 20_000);
  t.false(hook.received.some((x) => x.json.subject === 'Hello 4'));
});

test('audit webhook: provisioning succeeds, then the events of a tenant suspend arrive signed', async (t) => {
  const ten = await newTenant();
  const path = `/siem-${ten}`;
  await configure('audit-webhook', {
    tenant_id: ten,
    config: { url: `${hook.url}${path}`, signingSecret: SECRET, batchSize: 10 },
  });
  const en = await enable('audit-webhook', { tenant_id: ten });
  t.is(en.status, 200, en.text);
  const opId = en.body.provisioning.operationId as string;
  const verification = await hook.waitFor((x) => x.path === path && x.json.type === 'iam.plugin.verification');
  t.is(verification.json.operationId, opId);
  t.true(signatureValid(verification, SECRET));
  let state = '';
  await until(
    async () => {
      state = (await call('GET', `${P}/audit-webhook?tenant_id=${ten}`)).body.provisioning.state;
      return state === 'succeeded';
    },
    { timeoutMs: 10_000, intervalMs: 100, what: () => `the plugin provisioned (state ${state})` },
  );
  t.is(state, 'succeeded');

  const tenant = await services.directory.requireTenant(ten);
  const sus = await call('POST', `/api/admin/tenants/${ten}/lifecycle/suspend`, {
    expected_state: 'active',
    expected_updated_at: tenant.updated_at,
    reason: 'plugin test',
  });
  t.is(sus.status, 200, sus.text);
  const batch = await hook.waitFor(
    (x) => x.path === path && Array.isArray(x.json.events) && x.json.events.some((e) => e.action === 'tenant.suspend'),
  );
  t.true(signatureValid(batch, SECRET));
  t.is(batch.json.tenantId, ten);
  const ev = (batch.json.events as Json[]).find((e) => e.action === 'tenant.suspend');
  t.is(ev.tenant_id, ten);
  t.is(ev.target_id, ten);
  const rows = await services.ds.query<{ status: string; delivered_via: string }[]>(
    "SELECT status, delivered_via FROM outbox WHERE kind = 'audit-webhook' AND tenant_id = ?",
    [ten],
  );
  t.true(rows.length >= 1);
});

test('audit webhook: a receiver that keeps failing makes the provisioning operation failed, with the cause', async (t) => {
  const ten = await newTenant();
  const path = `/down-${ten}`;
  hook.setStatus(path, 503);
  await configure('audit-webhook', { tenant_id: ten, config: { url: `${hook.url}${path}`, signingSecret: SECRET } });
  const en = await enable('audit-webhook', { tenant_id: ten });
  t.is(en.body.provisioning.state, 'pending');
  let prov: Json = {};
  await until(
    async () => {
      prov = (await call('GET', `${P}/audit-webhook?tenant_id=${ten}`)).body.provisioning;
      return prov.state === 'failed';
    },
    { timeoutMs: 30_000, intervalMs: 100, what: () => `the provisioning failed (${JSON.stringify(prov)})` },
  );
  t.is(prov.state, 'failed');
  t.is(prov.attempts, 5);
  t.regex(String(prov.lastError), /HTTP 503/);
});
