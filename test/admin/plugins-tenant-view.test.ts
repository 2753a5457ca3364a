/**
 * What a tenant admin sees of plugins and may do with the platform's (docs/plugins.md):
 * - a provisioning failure against an address the outbound rules refuse is `blocked_address`,
 *   never what the host resolved to (no DNS oracle for internal names);
 * - a tenant relying on the platform's config never sees it (URL, query, secret hints), and
 *   may not enable the plugin on it once the platform disabled it: 403
 *   `plugin_disabled_by_platform`, and a tenant enabled earlier is disabled with the platform.
 *
 * Its own daemon, without IAM_OUTBOUND_ALLOW_LOOPBACK (so `localhost` is a refused address),
 * and its own database (so the platform-level settings here touch no other test's tenants).
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { activeTenant, clientCredentialsToken, credentialsClient, openServices, seed } from '../helpers/seed.js';
import { SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';
import { until } from '../helpers/poll.js';
import { api } from '../helpers/api.js';

let db: TestDb;
let d: Daemon;
let platform: string;
let services: Awaited<ReturnType<typeof openServices>>;
let n = 0;

const SECRET = 'whsec_platform_0123456789abcdWXYZ';
const BEARER = 'bearer-platform-0123456789abcdQRST';
const PLATFORM_URL = 'https://hooks.platform.example.com/deliver?token=platform-query-credential';
const actor = { type: 'system' as const, id: 'test' };
const P = '/api/admin/platform/plugins';

test.before(async () => {
  db = await createTestDatabase();
  const s = await seed(db.url, db.dir);
  d = await startDaemon(db.url, db.dir);
  platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  services = await openServices(db.url, db.dir);
});
test.after.always(async () => {
  await d?.stop();
  await services?.ds.destroy();
  await db?.drop();
});

// Every caller names a token (an admin's), so the bearer header is always sent.
const call = (method: string, path: string, token: string, body?: unknown) => api(d.url, method, path, { token, body });

/** A fresh tenant and a token of its own admin. */
async function tenantWithAdmin(): Promise<{ id: string; admin: string }> {
  const id = (await activeTenant(services.provisioning, { name: `Plugin view ${++n}` }, actor)).id;
  const c = await credentialsClient(services.directory, id, { name: 'admin', scopes: [SCOPE_TENANT_ADMIN] });
  return { id, admin: await clientCredentialsToken(d.url, c.clientId, c.secret) };
}

/** Nothing of the platform's config in an answer: its host, its query, a secret's last four characters. */
function showsNoPlatformConfig(t: import('ava').ExecutionContext, text: string, what: string) {
  for (const leak of ['hooks.platform.example.com', 'platform-query-credential', 'WXYZ', 'QRST', '••••'])
    t.false(text.includes(leak), `${what} shows ${leak}`);
}

test('provisioning against a name that resolves to a refused address: lastError is blocked_address, no address', async (t) => {
  const ten = await tenantWithAdmin();
  const conf = await call('PUT', `${P}/audit-webhook/config`, ten.admin, {
    tenant_id: ten.id,
    config: { url: 'https://localhost:9/siem', signingSecret: 'whsec_tenant_0123456789abcdefgh' },
  });
  t.is(conf.status, 200, conf.text);
  const en = await call('PUT', `${P}/audit-webhook/enable`, ten.admin, { tenant_id: ten.id });
  t.is(en.status, 200, en.text);
  let read = await call('GET', `${P}/audit-webhook?tenant_id=${ten.id}`, ten.admin);
  await until(
    async () => {
      read = await call('GET', `${P}/audit-webhook?tenant_id=${ten.id}`, ten.admin);
      return !!read.body.provisioning?.lastError;
    },
    { timeoutMs: 10_000, intervalMs: 100, what: () => `a provisioning error shown (${read.text})` },
  );
  t.is(read.body.provisioning.lastError, 'blocked_address', read.text);
  for (const leak of ['127.0.0.1', '::1', 'resolves', 'loopback'])
    t.false(read.text.includes(leak), `the answer shows ${leak}`);
  const list = await call('GET', `${P}?tenant_id=${ten.id}`, ten.admin);
  t.false(list.text.includes('127.0.0.1'));
});

test.serial(
  'platform config: a tenant relying on it reads its state (configSource, configured), never its URL or secret hints',
  async (t) => {
    const relying = await tenantWithAdmin();
    const conf = await call('PUT', `${P}/webhook-email/config`, platform, {
      config: { url: PLATFORM_URL, signingSecret: SECRET, bearerToken: BEARER },
    });
    t.is(conf.status, 200, conf.text);
    t.is(conf.body.config.url, PLATFORM_URL, 'the platform admin sees the platform config');
    t.is((await call('PUT', `${P}/webhook-email/enable`, platform, {})).status, 200);

    // While the platform has it enabled, a tenant relying on it reads its state, not its config.
    for (const path of [`${P}/webhook-email?tenant_id=${relying.id}`, `${P}?tenant_id=${relying.id}`, P]) {
      const r = await call('GET', path, relying.admin);
      t.is(r.status, 200, r.text);
      showsNoPlatformConfig(t, r.text, path);
    }
    const state = await call('GET', `${P}/webhook-email?tenant_id=${relying.id}`, relying.admin);
    t.like(state.body, { configSource: 'platform', configured: true, enabled: true, missingRequiredFields: [] });
    t.deepEqual(state.body.config, {});
    // A platform admin reading the tenant's scope sees the same: the platform's config is read in its own scope.
    showsNoPlatformConfig(
      t,
      (await call('GET', `${P}/webhook-email?tenant_id=${relying.id}`, platform)).text,
      'as platform',
    );
    const early = await call('PUT', `${P}/webhook-email/enable`, relying.admin, { tenant_id: relying.id });
    t.is(early.status, 200, early.text);
    showsNoPlatformConfig(t, early.text, 'the enable answer');
  },
);

test.serial(
  'platform disabled: a tenant on the platform config cannot enable the plugin (403); one enabled earlier is disabled',
  async (t) => {
    const relying = await tenantWithAdmin();
    const enabledEarlier = await tenantWithAdmin();
    const own = await tenantWithAdmin();
    await call('PUT', `${P}/webhook-email/config`, platform, {
      config: { url: PLATFORM_URL, signingSecret: SECRET, bearerToken: BEARER },
    });
    t.is((await call('PUT', `${P}/webhook-email/enable`, platform, {})).status, 200);
    const early = await call('PUT', `${P}/webhook-email/enable`, enabledEarlier.admin, {
      tenant_id: enabledEarlier.id,
    });
    t.is(early.status, 200, early.text);

    // A tenant with a config of its own.
    await call('PUT', `${P}/webhook-email/config`, own.admin, {
      tenant_id: own.id,
      config: { url: 'https://hooks.tenant.example.com/mail', signingSecret: 'whsec_tenant_0123456789abcdefgh' },
    });

    t.is((await call('PUT', `${P}/webhook-email/disable`, platform, {})).status, 200);
    const refused = await call('PUT', `${P}/webhook-email/enable`, relying.admin, { tenant_id: relying.id });
    t.is(refused.status, 403, refused.text);
    t.is(refused.body.error, 'plugin_disabled_by_platform');
    t.false(refused.text.includes('hooks.platform.example.com'));
    t.is((await call('GET', `${P}/webhook-email?tenant_id=${relying.id}`, relying.admin)).body.enabled, false);
    // Even a platform admin enables it for the tenant only by enabling it for the platform.
    t.is((await call('PUT', `${P}/webhook-email/enable`, platform, { tenant_id: relying.id })).status, 403);
    // The tenant that enabled it earlier is disabled with the platform; its own decision returns with it.
    const after = await call('GET', `${P}/webhook-email?tenant_id=${enabledEarlier.id}`, enabledEarlier.admin);
    t.like(after.body, { enabled: false, configSource: 'platform' });
    // A tenant on its own config is not the platform's to turn off.
    const ownEnable = await call('PUT', `${P}/webhook-email/enable`, own.admin, { tenant_id: own.id });
    t.is(ownEnable.status, 200, ownEnable.text);
    t.like(ownEnable.body, { enabled: true, configSource: 'tenant' });
    t.is(ownEnable.body.config.url, 'https://hooks.tenant.example.com/mail');

    t.is((await call('PUT', `${P}/webhook-email/enable`, platform, {})).status, 200);
    const back = await call('GET', `${P}/webhook-email?tenant_id=${enabledEarlier.id}`, enabledEarlier.admin);
    t.is(back.body.enabled, true);
    const allowed = await call('PUT', `${P}/webhook-email/enable`, relying.admin, { tenant_id: relying.id });
    t.is(allowed.status, 200, allowed.text);
  },
);
