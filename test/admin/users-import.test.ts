/**
 * POST /api/admin/tenants/{tenantId}/users/import: a result per record in the order given,
 * idempotence by email, dry_run writing nothing, the batch bounds (400), an unknown tenant
 * (404), a tenant admin confined to another tenant (403, as every tenant route), the audit.
 */
import test from 'ava';
import type { Database } from '../../shared/db/index.js';
import { api } from '../helpers/api.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';
import { directoryOf, importTenant, UPSTREAM_ISSUER } from '../helpers/user-transfer.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let ds: Database;
let tenant: string;
let platform: string;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  const opened = await openServices(db.url, db.dir);
  ds = opened.ds;
  tenant = await importTenant(ds, opened.provisioning, 'Imported');
  d = await startDaemon(db.url, db.dir);
  platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
});
test.after.always(async () => {
  await d?.stop();
  await ds?.destroy();
  await db?.drop();
});

const post = (body: unknown, tenantId = tenant, token = platform) =>
  api(d.url, 'POST', `/api/admin/tenants/${tenantId}/users/import`, { token, body });

test('a result per record; dry run writes nothing; a re-run is unchanged; audited', async (t) => {
  const users = [
    { email: 'amy@example.com', name: 'Amy', claims: { department: 'Ops', roles: ['a'] } },
    { email: 'bob@example.com', upstream: { issuer: UPSTREAM_ISSUER, subject: 'okta-bob' } },
    { email: 'cy@example.com', claims: { unknown_key: 1 } },
    { email: 'dee@example.com', upstream: { issuer: UPSTREAM_ISSUER, subject: 'okta-bob' } },
    'not an object',
  ];
  const dry = await post({ users, dry_run: true });
  t.is(dry.status, 200, dry.text);
  t.like(dry.body, { dry_run: true, created: 2, rejected: 3 });
  t.deepEqual(await directoryOf(ds, tenant), []);

  const run = await post({ users });
  t.is(run.status, 200, run.text);
  t.like(run.body, { dry_run: false, created: 2, updated: 0, unchanged: 0, rejected: 3 });
  const results = run.body.results as { index: number; result: string; reason?: string; user_id?: string }[];
  t.deepEqual(
    results.map((r) => [r.index, r.result]),
    [
      [0, 'created'],
      [1, 'created'],
      [2, 'rejected'],
      [3, 'rejected'],
      [4, 'rejected'],
    ],
  );
  t.regex(results[2].reason!, /^claims\.unknown_key: .*not a claim schema of this tenant/);
  t.regex(results[3].reason!, /linked to another user/);
  t.regex(results[4].reason!, /expected object/);
  t.deepEqual(
    (await directoryOf(ds, tenant)).map((u) => [u.email, u.name, u.claims, u.links]),
    [
      ['amy@example.com', 'Amy', { department: 'Ops', roles: ['a'] }, []],
      ['bob@example.com', 'bob@example.com', {}, [`${UPSTREAM_ISSUER} okta-bob`]],
    ],
  );

  const again = await post({ users: [users[0], { email: 'BOB@example.com', name: 'Bob' }] });
  t.like(again.body, { created: 0, updated: 1, unchanged: 1, rejected: 0 });
  t.deepEqual(again.body.results[1].changed, ['name']);
  const events = await ds.query<{ actor_type: string; actor_id: string; summary: string }[]>(
    `SELECT actor_type, actor_id, summary FROM audit_events
      WHERE tenant_id = ? AND action = 'user.import' ORDER BY created_at`,
    [tenant],
  );
  t.is(events.length, 2, 'one event per written batch; none for the dry run');
  t.like(events[0], { actor_type: 'client', actor_id: s.platform.clientId });
  t.notRegex(events[0].summary, /amy@example\.com|Ops/, 'fields, not values');
});

test('400 on a body that is not a batch, 404 for an unknown tenant, 403 for another tenant’s admin', async (t) => {
  for (const body of [{}, { users: [] }, { users: 'x' }, { users: [{ email: 'a@example.com' }], extra: 1 }]) {
    const r = await post(body);
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error, 'invalid_request');
  }
  const many = await post({ users: Array.from({ length: 1001 }, (_, i) => ({ email: `u${i}@e.co` })) });
  t.is(many.status, 400, 'at most 1000 records');
  const unknown = await post({ users: [{ email: 'x@example.com' }] }, 'ten_doesnotexist000000');
  t.is(unknown.status, 404);
  t.is(unknown.body.error, 'not_found');
  const admin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
  const other = await post({ users: [{ email: 'x@example.com' }] }, tenant, admin);
  t.is(other.status, 403);
  t.is(other.body.error, 'tenant_forbidden');
  t.false((await directoryOf(ds, tenant)).some((u) => u.email === 'x@example.com'));
});
