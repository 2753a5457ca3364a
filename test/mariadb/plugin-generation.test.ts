/**
 * Two daemons on one database: a plugin enabled or disabled through daemon A is in force on
 * daemon B at B's very next request, with no stale cache window (docs/plugins.md, "Generation").
 * B's runtime cache is warmed first, so a B that only trusted its cache would answer with the
 * old state. Shown through both users of the cache: the tenant's email provider list (the
 * webhook email provider joins it) and the audit hook (an audited change on B right after the
 * enable on A writes the audit webhook's outbox entry in its transaction).
 *
 * Serial: both act on the seeded tenant, and one's audited changes would count in the other.
 *
 * In the MariaDB lane (several daemons on one server); it holds on SQLite too (same file, two
 * processes), and runs there with `npx ava dist/test/mariadb/plugin-generation.test.js`.
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';
import { api } from '../helpers/api.js';

type Json = ReturnType<typeof JSON.parse>;

let db: TestDb;
let a: Daemon;
let b: Daemon;
let s: Seeded;
let token: string;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  const env = { IAM_OUTBOUND_ALLOW_LOOPBACK: 'true' };
  a = await startDaemon(db.url, db.dir, env);
  // Same issuer: two nodes of one deployment.
  b = await startDaemon(db.url, db.dir, { ...env, IAM_ISSUER: a.url });
  token = await clientCredentialsToken(a.url, s.platform.clientId, s.platform.secret);
});
test.after.always(async () => {
  await a?.stop();
  await b?.stop();
  await db?.drop();
});

const call = (d: Daemon, method: string, path: string, body?: unknown) => api(d.url, method, path, { body, token });

const listed = async (d: Daemon) =>
  ((await call(d, 'GET', `/api/admin/tenants/${s.tenantId}/email-settings`)).body.providers as Json[]).some(
    (p) => p.id === 'webhook-email',
  );

test.serial('enable and disable on one daemon are in force on the other at its next request', async (t) => {
  t.timeout(120_000);
  const P = '/api/admin/platform/plugins';
  const cfg = await call(a, 'PUT', `${P}/webhook-email/config`, {
    tenant_id: s.tenantId,
    config: { url: 'https://127.0.0.1:9/mail', signingSecret: 'whsec_0123456789abcdefghijklmnop' },
  });
  t.is(cfg.status, 200, cfg.text);
  for (let round = 0; round < 5; round++) {
    // Warm both caches with the current state.
    t.false(await listed(b), `round ${round}: disabled on B`);
    t.false(await listed(a), `round ${round}: disabled on A`);
    const on = await call(round % 2 ? b : a, 'PUT', `${P}/webhook-email/enable`, { tenant_id: s.tenantId });
    t.is(on.status, 200, on.text);
    t.true(await listed(round % 2 ? a : b), `round ${round}: the enable is seen by the other daemon at once`);
    const off = await call(round % 2 ? a : b, 'PUT', `${P}/webhook-email/disable`, { tenant_id: s.tenantId });
    t.is(off.status, 200, off.text);
    t.false(await listed(round % 2 ? b : a), `round ${round}: the disable is seen by the other daemon at once`);
  }
});

test.serial('the audit hook on one daemon follows an enable on the other at its next audited change', async (t) => {
  t.timeout(120_000);
  const { ds } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const P = '/api/admin/platform/plugins';
  const count = async () =>
    Number(
      (
        await ds.query<{ n: unknown }[]>(
          "SELECT COUNT(*) AS n FROM outbox WHERE kind = 'audit-webhook' AND tenant_id = ?",
          [s.tenantId],
        )
      )[0].n,
    );
  const change = (d: Daemon) =>
    call(d, 'PATCH', `/api/admin/tenants/${s.tenantId}/email-settings`, {
      strategy: 'priority_failover',
      providerOrder: ['log'],
    });
  await call(a, 'PUT', `${P}/audit-webhook/config`, {
    tenant_id: s.tenantId,
    config: { url: 'https://127.0.0.1:9/siem', signingSecret: 'whsec_0123456789abcdefghijklmnop' },
  });
  // B's cache knows the plugin as disabled: its audited change writes no entry.
  t.is((await change(b)).status, 200);
  const before = await count();
  const on = await call(a, 'PUT', `${P}/audit-webhook/enable`, { tenant_id: s.tenantId });
  t.is(on.status, 200, on.text);
  const afterEnable = await count(); // the enable's own audit event, written on A
  t.is((await change(b)).status, 200);
  t.is(await count(), afterEnable + 1, "B's next audited change goes to the audit webhook");
  t.true(afterEnable > before);
  await call(a, 'PUT', `${P}/audit-webhook/disable`, { tenant_id: s.tenantId });
  const afterDisable = await count();
  t.is((await change(b)).status, 200);
  t.is(await count(), afterDisable, "B's next audited change after the disable is not sent");
});
