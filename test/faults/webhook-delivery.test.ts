/**
 * SIGKILL during webhook delivery (faults lane; SQLite and MariaDB): the audit webhook plugin
 * (shared/services/plugins/audit-webhook.ts) sends every audit event of a tenant to a SIEM
 * receiver through the outbox. 120 users are created over the admin API, each answered 201
 * after its audit event and the event's outbox entry committed together; the receiver is slow,
 * and the daemon is killed with batches in flight. A daemon started on the same database
 * delivers the rest. Then:
 *   - every acknowledged creation's `user.create` event reached the receiver, and every event
 *     the receiver got is one the database holds;
 *   - deduplicated by event id (with `X-IAM-Delivery-Id`, what the plugin gives receivers to
 *     drop duplicates), each event arrived once; a second copy only of an entry whose claim the
 *     dead daemon held (posted, its outcome not yet written).
 */
import test from 'ava';
import { Outbox } from '../../shared/services/outbox.js';
import { all } from '../../shared/db/sql.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { expireClaims, sleep } from '../helpers/faults.js';
import { clientCredentialsToken, openServices, seed } from '../helpers/seed.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { until } from '../helpers/poll.js';
import { api } from '../helpers/api.js';

const USERS = 120;
const SECRET = 'whsec_0123456789abcdefghijklmnop';

let db: TestDb;
let hook: WebhookReceiver;
const daemons: Daemon[] = [];
test.after.always(async () => {
  for (const d of daemons) await d.stop('SIGKILL');
  await hook?.close();
  await db?.drop();
});

test('SIGKILL mid webhook delivery: every acknowledged event reaches the receiver, once per event id', async (t) => {
  t.timeout(180_000);
  db = await createTestDatabase();
  const s = await seed(db.url, db.dir);
  const { ds, config } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  hook = await startWebhookReceiver({ delayMs: 200 });
  const first = {
    IAM_OUTBOUND_ALLOW_LOOPBACK: 'true',
    IAM_OUTBOUND_CA_FILE: hook.cert.certFile,
  };
  let d = await startDaemon(db.url, db.dir, first);
  // The daemon started again listens where this one did (same issuer).
  const env = { ...first, IAM_PORT: String(d.port) };
  daemons.push(d);
  const token = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  const call = (method: string, path: string, body: unknown) => api(d.url, method, path, { body, token });
  const P = '/api/admin/platform/plugins/audit-webhook';
  const cfg = await call('PUT', `${P}/config`, {
    tenant_id: s.tenantId,
    config: { url: `${hook.url}/siem`, signingSecret: SECRET, batchSize: 5 },
  });
  t.is(cfg.status, 200, JSON.stringify(cfg.body));
  const en = await call('PUT', `${P}/enable`, { tenant_id: s.tenantId });
  t.is(en.status, 200, JSON.stringify(en.body));
  t.true(
    await until(
      async () =>
        (
          await (
            await fetch(`${d.url}${P}?tenant_id=${s.tenantId}`, { headers: { authorization: `Bearer ${token}` } })
          ).json()
        ).provisioning?.state === 'succeeded',
      { timeoutMs: 60_000, intervalMs: 100, what: 'the plugin is enabled' },
    ),
  );

  // The writes: users created over the API, four at a time; each 201 is an acknowledged event.
  let killed = false;
  const acked: string[] = [];
  let n = 0;
  const creator = async () => {
    try {
      while (!killed && n < USERS) {
        const i = n++;
        const r = await call('POST', `/api/admin/tenants/${s.tenantId}/users`, {
          email: `hooked${i}@example.com`,
          name: `Hooked ${i}`,
        });
        if (r.status !== 201) throw new Error(`create ${r.status} ${JSON.stringify(r.body)}`);
        acked.push(String(r.body.id));
      }
    } catch (e) {
      if (!killed) throw e;
    }
  };
  const loops = Array.from({ length: 4 }, () => creator());
  const events = () =>
    hook.received.flatMap((r) => (Array.isArray(r.json.events) ? (r.json.events as { id: string }[]) : []));
  t.true(
    await until(() => events().filter((e) => (e as { action?: string }).action === 'user.create').length >= 20, {
      timeoutMs: 120_000,
      intervalMs: 5,
      what: 'deliveries under way',
    }),
  );
  killed = true;
  await d.stop('SIGKILL');
  await Promise.all(loops);
  const rows = async () =>
    all<{ id: string; status: string; payload_sealed: string | null }>(
      ds,
      "SELECT id, status, payload_sealed FROM outbox WHERE kind = 'audit-webhook'",
    );
  const atKill = new Map((await rows()).map((r) => [r.id, r.status]));
  const count = (st: string) => [...atKill.values()].filter((x) => x === st).length;
  t.log(
    `at the kill: ${acked.length} users acknowledged; entries ${count('delivered')} delivered, ` +
      `${count('sending')} claimed, ${count('pending')} pending`,
  );
  t.true(count('sending') + count('pending') > 0, 'the kill landed before the end');
  // Which entry carries which event: opened now, since a delivered entry's payload is erased.
  const outbox = new Outbox(ds, config.secretKey);
  const entryOf = new Map<string, string>();
  for (const r of await rows())
    if (r.payload_sealed) entryOf.set(outbox.openSealed<{ id: string }>(r.id, r.payload_sealed).id, r.id);

  await expireClaims(ds);
  d = await startDaemon(db.url, db.dir, env);
  daemons.push(d);
  t.true(
    await until(async () => (await rows()).every((r) => r.status === 'delivered'), {
      timeoutMs: 90_000,
      intervalMs: 200,
      what: 'every entry delivered after the restart',
    }),
  );
  // A window in which a duplicate must NOT come: nothing to await.
  await sleep(1_000);

  const got = events();
  const byId = new Map<string, number>();
  for (const e of got) byId.set(e.id, (byId.get(e.id) ?? 0) + 1);
  const audit = await all<{ id: string; target_id: string; action: string }>(
    ds,
    'SELECT id, target_id, action FROM audit_events WHERE tenant_id = ?',
    [s.tenantId],
  );
  const known = new Set(audit.map((a) => a.id));
  t.deepEqual(
    [...byId.keys()].filter((id) => !known.has(id)),
    [],
    'only events the database holds',
  );
  const createdEvents = new Map(audit.filter((a) => a.action === 'user.create').map((a) => [a.target_id, a.id]));
  t.deepEqual(
    acked.filter((u) => !byId.has(createdEvents.get(u) ?? '')),
    [],
    'every acknowledged creation was delivered',
  );
  const twice = [...byId].filter(([, k]) => k > 1).map(([id]) => id);
  t.log(`${got.length} events received, ${byId.size} distinct; ${twice.length} received twice`);
  t.deepEqual(
    twice.filter((id) => atKill.get(entryOf.get(id) ?? '') !== 'sending'),
    [],
    'a second copy only of an entry claimed at the kill',
  );
});
