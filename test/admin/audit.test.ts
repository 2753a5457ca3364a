/**
 * GET /api/admin/audit: filters, keyset pagination over (created_at, id) including rows that
 * share a timestamp, a tenant admin confined to its own tenant, and 401 without a token.
 */
import { randomUUID } from 'node:crypto';
import test from 'ava';
import { AuditWriter } from '../../shared/repositories/index.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { activeTenant, clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';
import { api } from '../helpers/api.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let platform: string;
let tenantAdmin: string;
let other: string;
/** Fixed times far in the past, so these rows sort below everything the seed wrote. */
const T0 = 1_000_000_000_000;

interface Ev {
  id: string;
  tenant_id: string | null;
  actor_id: string;
  action: string;
  target_id: string;
  outcome: string;
  created_at: number;
  summary: Record<string, unknown>;
}

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  const { ds, provisioning } = await openServices(db.url, db.dir);
  try {
    other = (await activeTenant(provisioning, { name: 'Other tenant' }, { type: 'system', id: 'test' })).id;
    const w = new AuditWriter(ds);
    const row = (tenant: string | null, i: number, at: number, extra: Partial<Ev> = {}) =>
      w.append({
        id: `ev-${String(i).padStart(2, '0')}-${randomUUID().slice(0, 8)}`,
        tenant_id: tenant,
        actor_type: 'client',
        actor_id: 'actor-a',
        action: 'test.event',
        target_type: 'thing',
        target_id: `thing-${i}`,
        outcome: 'success',
        request_id: null,
        summary: { i },
        created_at: at,
        ...extra,
      } as never);
    // Seven events in the seed tenant; three share one millisecond (the id breaks the tie).
    for (let i = 0; i < 4; i++) await row(s.tenantId, i, T0 + i * 1000);
    for (let i = 4; i < 7; i++) await row(s.tenantId, i, T0 + 10_000);
    await row(s.tenantId, 7, T0 + 20_000, {
      actor_id: 'actor-b',
      action: 'test.other',
      outcome: 'failure',
    });
    await row(other, 8, T0 + 5000);
    await row(null, 9, T0 + 6000, { action: 'platform.event' });
  } finally {
    await ds.destroy();
  }
  d = await startDaemon(db.url, db.dir);
  platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  tenantAdmin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

const list = (query: Record<string, string | number>, token: string | null = platform) =>
  api<{ events: Ev[]; next_cursor?: string; error?: string }>(
    d.url,
    'GET',
    `/api/admin/audit?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`,
    { token },
  );

test('401 without a token', async (t) => {
  const r = await list({}, null);
  t.is(r.status, 401);
  t.is(r.body.error, 'invalid_token');
});

test('filters: tenant, action, actor, target, outcome, since/until; newest first with every field', async (t) => {
  const byAction = await list({ tenant_id: s.tenantId, action: 'test.event' });
  t.is(byAction.status, 200, JSON.stringify(byAction.body));
  t.is(byAction.body.events.length, 7);
  const times = byAction.body.events.map((e) => e.created_at);
  t.deepEqual(
    times,
    [...times].sort((a, b) => b - a),
    'newest first',
  );
  const e = byAction.body.events[0];
  t.deepEqual(Object.keys(e).sort(), [
    'action',
    'actor_id',
    'actor_type',
    'created_at',
    'id',
    'outcome',
    'request_id',
    'summary',
    'target_id',
    'target_type',
    'tenant_id',
  ]);
  t.is(typeof e.summary, 'object');

  const byActor = await list({ actor_id: 'actor-b' });
  t.deepEqual(
    byActor.body.events.map((x) => x.summary.i),
    [7],
  );
  const byOutcome = await list({ tenant_id: s.tenantId, outcome: 'failure' });
  t.deepEqual(
    byOutcome.body.events.map((x) => x.summary.i),
    [7],
  );
  const byTarget = await list({ target_id: 'thing-2' });
  t.deepEqual(
    byTarget.body.events.map((x) => x.summary.i),
    [2],
  );
  // since inclusive, until exclusive.
  const window = await list({ tenant_id: s.tenantId, since: T0 + 1000, until: T0 + 10_000 });
  t.deepEqual(
    window.body.events.map((x) => x.summary.i),
    [3, 2, 1],
  );
  // A platform admin sees other tenants and platform-wide events.
  const platformWide = await list({ action: 'platform.event' });
  t.is(platformWide.body.events.length, 1);
  t.is(platformWide.body.events[0].tenant_id, null);
  // The directory's own events are there too (written by the seed).
  const created = await list({ tenant_id: s.tenantId, action: 'tenant.create' });
  t.is(created.body.events.length, 1);
  t.is(created.body.events[0].target_id, s.tenantId);
});

test('keyset pagination: pages of 2 cover every row once, in order, across a timestamp tie', async (t) => {
  const full = await list({ tenant_id: s.tenantId, action: 'test.event', limit: 200 });
  t.falsy(full.body.next_cursor);
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const r = await list({ tenant_id: s.tenantId, action: 'test.event', limit: 2, ...(cursor ? { cursor } : {}) });
    t.is(r.status, 200, JSON.stringify(r.body));
    t.true(r.body.events.length <= 2);
    seen.push(...r.body.events.map((e) => e.id));
    cursor = r.body.next_cursor;
    pages++;
  } while (cursor && pages < 10);
  t.is(pages, 4);
  t.deepEqual(
    seen,
    full.body.events.map((e) => e.id),
  );
  t.is(new Set(seen).size, 7);
});

test('bad input is 400: limit out of 1-200, forged cursor, unknown parameter', async (t) => {
  t.is((await list({ limit: 201 })).status, 400);
  t.is((await list({ limit: 0 })).status, 400);
  const forged = await list({ cursor: 'not-a-cursor' });
  t.is(forged.status, 400);
  t.is(forged.body.error, 'invalid_request');
  t.is((await list({ nope: 1 })).status, 400);
  t.is((await list({ outcome: 'maybe' })).status, 400);
});

test('a tenant admin sees only its own tenant; naming another tenant is 403 tenant_forbidden', async (t) => {
  const own = await list({ limit: 200 }, tenantAdmin);
  t.is(own.status, 200, JSON.stringify(own.body));
  t.true(own.body.events.length >= 8);
  t.true(
    own.body.events.every((e) => e.tenant_id === s.tenantId),
    'no other tenant and no platform-wide events',
  );
  const named = await list({ tenant_id: s.tenantId, action: 'test.other' }, tenantAdmin);
  t.is(named.body.events.length, 1);
  const forbidden = await list({ tenant_id: other }, tenantAdmin);
  t.is(forbidden.status, 403);
  t.is(forbidden.body.error, 'tenant_forbidden');
  // Filters cannot widen the reach: the other tenant's row stays invisible.
  t.is((await list({ target_id: 'thing-8' }, tenantAdmin)).body.events.length, 0);
  t.is((await list({ target_id: 'thing-8' })).body.events.length, 1);
});

test('GET /api/admin/tenants/{id}: platform any, tenant admin own only, unknown 404', async (t) => {
  const get = (id: string, token: string | null) => api(d.url, 'GET', `/api/admin/tenants/${id}`, { token });
  const p = await get(other, platform);
  t.is(p.status, 200);
  t.is(p.body.id, other);
  t.is(p.body.lifecycle_state, 'active');
  t.is(typeof p.body.updated_at, 'number');
  t.is((await get(s.tenantId, tenantAdmin)).status, 200);
  const f = await get(other, tenantAdmin);
  t.is(f.status, 403);
  t.is(f.body.error, 'tenant_forbidden');
  t.is((await get('t_nope', platform)).status, 404);
  t.is((await get(other, null)).status, 401);
});
