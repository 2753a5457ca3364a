/**
 * /api/admin/tenants/{tenantId}/groups…: create (409 for a name taken without regard to case),
 * list by name prefix with keyset paging, GET with a strong ETag, PATCH under If-Match (412),
 * members add (400 naming ids that are no user of the tenant), list (keyset by user id) and
 * remove (revoke_tokens ends the user's token families), a user's groups, 404 for another
 * tenant's ids, DELETE refused while a SCIM mapping set names the group (409 group_in_use) and
 * otherwise taking members and role assignments with it, audited; erasure drops memberships.
 * One daemon.
 */
import test from 'ava';
import { TenantScope } from '../../shared/repositories/index.js';
import { api } from '../helpers/api.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { activeTenant, clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let services: Awaited<ReturnType<typeof openServices>>;
let admin: string;
let otherTenant: string;
let otherUser: string;
let otherGroup: string;
const users: string[] = [];
const actor = { type: 'system' as const, id: 'test' };

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  services = await openServices(db.url, db.dir);
  const { directory, provisioning } = services;
  otherTenant = (await activeTenant(provisioning, { name: 'Other' }, actor)).id;
  otherUser = (await directory.createUser(otherTenant, { email: 'x@example.com', name: 'X' }, actor)).id;
  for (const p of ['ada', 'alan', 'grace', 'edsger'])
    users.push((await directory.createUser(s.tenantId, { email: `${p}@example.com`, name: p }, actor)).id);
  d = await startDaemon(db.url, db.dir);
  admin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
  const platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  const g = await api(d.url, 'POST', `/api/admin/tenants/${otherTenant}/groups`, {
    token: platform,
    body: { display_name: 'Theirs' },
  });
  otherGroup = g.body.id;
});
test.after.always(async () => {
  await d?.stop();
  await services?.ds.destroy();
  await db?.drop();
});

const base = (tenant = s.tenantId) => `/api/admin/tenants/${tenant}/groups`;
const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  api(d.url, method, path, { token: admin, body, headers });
const rows = (q: string, p: unknown[]) => services.ds.query<Record<string, unknown>[]>(q, p);

test.serial('create, show with a strong ETag, list by prefix and pages, PATCH under If-Match', async (t) => {
  const a = await call('POST', base(), { display_name: 'Engineering', description: 'builders', external_id: 'ext-1' });
  t.is(a.status, 201, a.text);
  t.like(a.body, { display_name: 'Engineering', description: 'builders', external_id: 'ext-1', version: 1 });
  t.regex(a.body.id, /^grp_/);
  t.is(a.headers.get('etag'), '"1"');
  const taken = await call('POST', base(), { display_name: 'ENGINEERING' });
  t.is(taken.status, 409);
  t.like(taken.body, { error: 'conflict', field: 'display_name' });
  t.like((await call('POST', base(), { display_name: 'Other', external_id: 'ext-1' })).body, {
    error: 'conflict',
    field: 'external_id',
  });
  t.is((await call('POST', base(), { display_name: '' })).status, 400);
  t.is((await call('POST', base(), { display_name: 'x'.repeat(201) })).status, 400);
  await call('POST', base(), { display_name: 'Engineers Guild' });
  await call('POST', base(), { display_name: 'Sales' });

  const got = await call('GET', `${base()}/${a.body.id}`);
  t.like(got.body, { id: a.body.id, member_count: 0, tenant_id: s.tenantId });
  t.deepEqual(
    (await call('GET', `${base()}?name_prefix=engin`)).body.groups.map((g: { display_name: string }) => g.display_name),
    ['Engineering', 'Engineers Guild'],
  );
  const p1 = await call('GET', `${base()}?limit=2`);
  t.is(p1.body.groups.length, 2);
  const p2 = await call('GET', `${base()}?limit=2&cursor=${p1.body.next_cursor}`);
  t.deepEqual(
    p2.body.groups.map((g: { display_name: string }) => g.display_name),
    ['Sales'],
  );
  t.is(p2.body.next_cursor, undefined);
  t.is((await call('GET', `${base()}?cursor=forged.${'A'.repeat(43)}`)).status, 400);

  const stale = await call('PATCH', `${base()}/${a.body.id}`, { description: null }, { 'if-match': '"7"' });
  t.is(stale.status, 412);
  t.is(stale.body.error, 'precondition_failed');
  t.is((await call('PATCH', `${base()}/${a.body.id}`, { display_name: 'sales' })).status, 409);
  const ok = await call(
    'PATCH',
    `${base()}/${a.body.id}`,
    { display_name: 'Eng', description: null },
    { 'if-match': '"1"' },
  );
  t.is(ok.status, 200, ok.text);
  t.like(ok.body, { display_name: 'Eng', description: null, version: 2 });
  t.is(ok.headers.get('etag'), '"2"');
  t.is((await call('PATCH', `${base()}/${a.body.id}`, {})).status, 400);
  const ev = await rows("SELECT actor_id, summary FROM audit_events WHERE target_id = ? AND action = 'group.update'", [
    a.body.id,
  ]);
  t.is(ev.length, 1);
  t.is(ev[0].actor_id, s.tenantAdmin.clientId);
  t.regex(String(ev[0].summary), /Engineering/);
});

test.serial("members: add (unknown ids 400), list in pages, a user's groups, remove with revoke_tokens", async (t) => {
  const g = (await call('POST', base(), { display_name: 'Members' })).body.id as string;
  const unknown = await call('POST', `${base()}/${g}/members`, { user_ids: [users[0], 'usr_nope', otherUser] });
  t.is(unknown.status, 400);
  t.is(unknown.body.error, 'unknown_users');
  t.deepEqual(unknown.body.unknown_user_ids, ['usr_nope', otherUser]);
  t.is((await call('GET', `${base()}/${g}`)).body.member_count, 0, 'nothing added');
  t.is((await call('POST', `${base()}/${g}/members`, { user_ids: [] })).status, 400);

  const add = await call('POST', `${base()}/${g}/members`, { user_ids: [users[0], users[1], users[2]] });
  t.is(add.status, 200, add.text);
  t.like(add.body, { added: 3, already_members: 0, version: 2 });
  const again = await call('POST', `${base()}/${g}/members`, { user_ids: [users[0], users[3]] });
  t.like(again.body, { added: 1, already_members: 1 });

  const sorted = [...users].sort();
  const m1 = await call('GET', `${base()}/${g}/members?limit=3`);
  const m2 = await call('GET', `${base()}/${g}/members?limit=3&cursor=${m1.body.next_cursor}`);
  const seen = [...m1.body.members, ...m2.body.members].map((m: { user_id: string }) => m.user_id);
  t.deepEqual(seen, sorted);
  t.is(m2.body.next_cursor, undefined);
  t.truthy(m1.body.members[0].email);

  const mine = await call('GET', `/api/admin/tenants/${s.tenantId}/users/${users[0]}/groups`);
  t.deepEqual(
    mine.body.groups.map((x: { id: string }) => x.id),
    [g],
  );
  t.is((await call('GET', `/api/admin/tenants/${s.tenantId}/users/${otherUser}/groups`)).status, 404);

  // A token family of users[1]: removal without revoke_tokens leaves it, with it ends it.
  const scope = new TenantScope(services.ds, s.tenantId);
  for (const [id, u] of [
    ['fam_g1', users[1]],
    ['fam_g2', users[2]],
  ])
    await scope.tokens.createFamily({
      id,
      userId: u,
      clientId: s.tenantAdmin.clientId,
      sessionId: null,
      consentId: null,
      scope: ['openid'],
      createdAt: Date.now(),
    });
  const plain = await call('DELETE', `${base()}/${g}/members/${users[1]}`);
  t.like(plain.body, { removed: true, families_revoked: 0 });
  t.is((await scope.tokens.family('fam_g1'))!.revoked_at, null);
  const revoking = await call('DELETE', `${base()}/${g}/members/${users[2]}?revoke_tokens=true`);
  t.like(revoking.body, { removed: true, families_revoked: 1 });
  t.truthy((await scope.tokens.family('fam_g2'))!.revoked_at);
  t.like((await call('DELETE', `${base()}/${g}/members/${users[2]}`)).body, { removed: false });
  t.is((await call('DELETE', `${base()}/${g}/members/${users[2]}?revoke_tokens=yes`)).status, 400);
  const ev = await rows("SELECT summary FROM audit_events WHERE target_id = ? AND action = 'group.members.update'", [
    g,
  ]);
  t.is(ev.length, 4, 'two adds and two removals that changed something');

  // Erasing a user drops the memberships in the erasure's transaction.
  t.is((await call('DELETE', `/api/admin/tenants/${s.tenantId}/users/${users[3]}`)).status, 200);
  t.deepEqual(await rows('SELECT user_id FROM group_members WHERE user_id = ?', [users[3]]), []);
  t.is((await call('GET', `${base()}/${g}`)).body.member_count, 1);
});

test.serial("another tenant's group is 404 under this tenant, for every route", async (t) => {
  const gp = `${base()}/${otherGroup}`;
  for (const [method, path, body] of [
    ['GET', gp],
    ['PATCH', gp, { display_name: 'Mine' }],
    ['DELETE', gp],
    ['GET', `${gp}/members`],
    ['POST', `${gp}/members`, { user_ids: [users[0]] }],
    ['DELETE', `${gp}/members/${users[0]}`],
  ] as const) {
    const r = await call(method, path, body);
    t.is(r.status, 404, `${method} ${path}`);
    t.is(r.body.error, 'not_found');
  }
  // A tenant admin naming the other tenant: 403 before any lookup.
  t.is((await call('GET', base(otherTenant))).status, 403);
});

test.serial(
  'DELETE: 409 group_in_use while a SCIM mapping set names it; else members and roles go, audited',
  async (t) => {
    const g = (await call('POST', base(), { display_name: 'Finance' })).body.id as string;
    await call('POST', `${base()}/${g}/members`, { user_ids: [users[0], users[1]] });
    const set = await call('POST', '/api/admin/field-mapping/sets', {
      setKey: 'scim-finance',
      displayName: 'SCIM finance',
      sourceType: 'scim',
      mappings: [
        {
          source: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "Finance"',
          targetType: 'group',
          target: 'FINANCE',
        },
      ],
    });
    t.is(set.status, 201, set.text);
    const refused = await call('DELETE', `${base()}/${g}`);
    t.is(refused.status, 409);
    t.is(refused.body.error, 'group_in_use');
    t.deepEqual(refused.body.mapping_sets, [{ id: set.body.result.id, set_key: 'scim-finance' }]);
    t.regex(refused.body.message, /scim-finance/);
    t.is((await call('DELETE', `/api/admin/field-mapping/sets/${set.body.result.id}`)).status, 204);

    await services.ds.query(
      'INSERT INTO role_assignments (tenant_id, role_id, principal_type, principal_id, created_at) ' +
        "VALUES (?, 'role_x', 'group', ?, 1)",
      [s.tenantId, g],
    );
    t.is((await call('DELETE', `${base()}/${g}`, undefined, { 'if-match': '"1"' })).status, 412);
    const del = await call('DELETE', `${base()}/${g}`);
    t.is(del.status, 200, del.text);
    t.deepEqual(del.body, { id: g, deleted: true, members_removed: 2, role_assignments_removed: 1 });
    t.is((await call('GET', `${base()}/${g}`)).status, 404);
    t.deepEqual(await rows('SELECT 1 FROM group_members WHERE group_id = ?', [g]), []);
    t.deepEqual(await rows('SELECT 1 FROM role_assignments WHERE principal_id = ?', [g]), []);
    const ev = await rows(
      "SELECT actor_id, summary FROM audit_events WHERE target_id = ? AND action = 'group.delete'",
      [g],
    );
    t.is(ev[0].actor_id, s.tenantAdmin.clientId);
    t.like(JSON.parse(String(ev[0].summary)), { members_removed: 2, role_assignments_removed: 1 });
  },
);
