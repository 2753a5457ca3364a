/**
 * /api/admin/tenants/{tenantId}/permissions, …/roles, …/roles/{id}/assignments and
 * …/users/{id}/roles (docs/rbac.md) over HTTP, one daemon: the permission rules (a registered
 * resource, a scope token that is no protocol or admin scope, 409 for a duplicate and for one a
 * role holds), roles (409 on a name, ETag and If-Match, the permissions PUT and its 400s),
 * assignments (users, groups, client_credentials clients only; idempotent), effective roles
 * through a group, the delete rules (409 role_in_use for a client and for a SCIM mapping set),
 * revoke_tokens, the clean-ups on client delete and user erasure, another tenant's ids (404),
 * the audit log naming the actor, and the statuses each operation declares in /openapi.json.
 */
import test from 'ava';
import { TenantScope } from '../../shared/repositories/index.js';
import { FieldMappingSetService } from '../../shared/services/federation/mapping-sets.js';
import type { Database } from '../../shared/db/index.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import {
  activeTenant,
  clientCredentialsToken,
  credentialsClient,
  openServices,
  seed,
  type Seeded,
} from '../helpers/seed.js';
import { api } from '../helpers/api.js';

const API = 'https://api.example.test';
const OTHER_API = 'https://other.example.test';
const actor = { type: 'system' as const, id: 'test' };

let db: TestDb;
let d: Daemon;
let s: Seeded;
let ds: Database;
let admin: string;
let platform: string;
let machine: string;
let browserApp: string;
let doomedMachine: string;
let ada: string;
let bob: string;
let eve: string;
let otherTenant: string;
let otherUser: string;
const GROUP = 'grp_testgroup000001';

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  const services = await openServices(db.url, db.dir);
  ds = services.ds;
  const { directory, provisioning } = services;
  await credentialsClient(directory, s.tenantId, {
    name: 'API',
    scopes: ['api'],
    resource_identifiers: [API, OTHER_API],
  });
  machine = (await credentialsClient(directory, s.tenantId, { name: 'worker' })).clientId;
  doomedMachine = (await credentialsClient(directory, s.tenantId, { name: 'doomed' })).clientId;
  const web = await directory.createClient(
    s.tenantId,
    { name: 'web', grant_types: ['authorization_code'], redirect_uris: ['https://app.example.test/cb'] },
    actor,
  );
  browserApp = web.client.client_id;
  ada = (await directory.createUser(s.tenantId, { email: 'ada@example.com', name: 'Ada' }, actor)).id;
  bob = (await directory.createUser(s.tenantId, { email: 'bob@example.com', name: 'Bob' }, actor)).id;
  eve = (await directory.createUser(s.tenantId, { email: 'eve@example.com', name: 'Eve' }, actor)).id;
  // The groups API is another area's: the group and its member are written as its rows.
  const now = Date.now();
  await ds.query(
    `INSERT INTO user_groups (id, tenant_id, display_name, display_name_key, version, created_at, updated_at)
     VALUES (?, ?, 'Finance', 'finance', 1, ?, ?)`,
    [GROUP, s.tenantId, now, now],
  );
  await ds.query('INSERT INTO group_members (tenant_id, group_id, user_id, created_at) VALUES (?, ?, ?, ?)', [
    s.tenantId,
    GROUP,
    bob,
    now,
  ]);
  // Token families of Ada and Bob, to see what an unassignment revokes.
  const scope = new TenantScope(ds, s.tenantId);
  for (const [id, user] of [
    ['fam_ada', ada],
    ['fam_bob', bob],
  ])
    await scope.tokens.createFamily({
      id,
      userId: user,
      clientId: browserApp,
      sessionId: null,
      consentId: null,
      scope: ['openid'],
      createdAt: now,
    });
  await new FieldMappingSetService(ds).create(
    s.tenantId,
    {
      setKey: 'okta',
      displayName: 'Okta',
      sourceType: 'scim',
      mappings: [{ source: 'title eq "Auditor"', targetType: 'role', target: 'Auditors' }],
    },
    actor,
  );
  const other = await activeTenant(provisioning, { name: 'Other' }, actor);
  otherTenant = other.id;
  await credentialsClient(directory, otherTenant, { name: 'B API', resource_identifiers: [API] });
  otherUser = (await directory.createUser(otherTenant, { email: 'x@example.com', name: 'X' }, actor)).id;
  d = await startDaemon(db.url, db.dir);
  admin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
  platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
});
test.after.always(async () => {
  await d?.stop();
  await ds?.destroy();
  await db?.drop();
});

const base = (tenant = s.tenantId) => `/api/admin/tenants/${tenant}`;
const call = (
  method: string,
  path: string,
  body?: unknown,
  opts: { token?: string; headers?: Record<string, string> } = {},
) => api(d.url, method, `${base()}${path}`, { token: opts.token ?? admin, body, headers: opts.headers });
const rows = (q: string, p: unknown[]) => ds.query<Record<string, unknown>[]>(q, p);

/** Shared across the serial tests below. */
const ids: Record<string, string> = {};

test.serial(
  'permissions: created on a registered resource; the rules of the resource and the scope token',
  async (t) => {
    const r = await call('POST', '/permissions', { resource: API, permission: 'invoices:read', description: 'Read' });
    t.is(r.status, 201, r.text);
    t.like(r.body, { resource: API, permission: 'invoices:read', description: 'Read' });
    t.regex(r.body.id, /^perm_/);
    ids.read = r.body.id;
    ids.write = (await call('POST', '/permissions', { resource: API, permission: 'invoices:write' })).body.id;
    ids.other = (await call('POST', '/permissions', { resource: OTHER_API, permission: 'reports:read' })).body.id;

    const dup = await call('POST', '/permissions', { resource: API, permission: 'invoices:read' });
    t.is(dup.status, 409);
    t.is(dup.body.error, 'conflict');

    const unregistered = await call('POST', '/permissions', {
      resource: 'https://nobody.example.test',
      permission: 'x',
    });
    t.is(unregistered.status, 400);
    t.is(unregistered.body.error, 'resource_not_registered');
    t.is(unregistered.body.details[0].field, 'body.resource');
    // Another tenant's resource server is no resource of this one.
    const foreign = await api(d.url, 'POST', `${base(otherTenant)}/permissions`, {
      token: platform,
      body: { resource: OTHER_API, permission: 'x' },
    });
    t.is(foreign.body.error, 'resource_not_registered');

    for (const reserved of ['openid', 'offline_access', 'account', 'scim', 'iam.admin', 'iam.anything', 'Email']) {
      const x = await call('POST', '/permissions', { resource: API, permission: reserved });
      t.is(x.status, 400, reserved);
      t.is(x.body.error, 'reserved_permission', reserved);
      t.is(x.body.details[0].field, 'body.permission');
    }
    for (const bad of ['two words', '', 'a"b', 'x'.repeat(129)]) {
      const x = await call('POST', '/permissions', { resource: API, permission: bad });
      t.is(x.status, 400, bad);
      t.is(x.body.error, 'invalid_request');
    }

    const ofApi = await call('GET', `/permissions?resource=${encodeURIComponent(API)}&limit=1`);
    t.is(ofApi.status, 200);
    t.deepEqual(
      ofApi.body.permissions.map((p: { permission: string }) => p.permission),
      ['invoices:read'],
    );
    const next = await call('GET', `/permissions?resource=${encodeURIComponent(API)}&cursor=${ofApi.body.next_cursor}`);
    t.deepEqual(
      next.body.permissions.map((p: { permission: string }) => p.permission),
      ['invoices:write'],
    );
    t.is(next.body.next_cursor, undefined);
    t.is((await call('GET', '/permissions')).body.permissions.length, 3);

    const [event] = await rows(
      "SELECT actor_id, summary FROM audit_events WHERE action = 'permission.create' AND target_id = ?",
      [ids.read],
    );
    t.is(event.actor_id, s.tenantAdmin.clientId, 'the audit names the calling client');
  },
);

test.serial('roles: create, a taken name, ETag and If-Match, the permissions PUT and its 400s', async (t) => {
  const r = await call('POST', '/roles', { name: 'Billing', description: 'Invoices', resource: API });
  t.is(r.status, 201, r.text);
  t.is(r.headers.get('etag'), '"v1"');
  t.like(r.body, { name: 'Billing', resource: API, version: 1, permissions: [] });
  ids.billing = r.body.id;
  t.is((await call('POST', '/roles', { name: 'billing' })).status, 409, 'names compare case-insensitively');
  t.is(
    (await call('POST', '/roles', { name: 'Wide', resource: 'https://nobody.example.test' })).body.error,
    'resource_not_registered',
  );
  ids.wide = (await call('POST', '/roles', { name: 'Wide' })).body.id;
  ids.auditors = (await call('POST', '/roles', { name: 'Auditors' })).body.id;

  const set = await call('PUT', `/roles/${ids.billing}/permissions`, {
    permissions: [ids.read, { resource: API, permission: 'invoices:write' }],
  });
  t.is(set.status, 200, set.text);
  t.is(set.headers.get('etag'), '"v2"');
  t.deepEqual(
    set.body.permissions.map((p: { permission: string }) => p.permission),
    ['invoices:read', 'invoices:write'],
  );
  const unknown = await call('PUT', `/roles/${ids.billing}/permissions`, {
    permissions: [ids.read, { resource: API, permission: 'invoices:delete' }],
  });
  t.is(unknown.status, 400);
  t.is(unknown.body.error, 'unknown_permission');
  t.is(unknown.body.details[0].field, 'body.permissions.1');
  const mismatch = await call('PUT', `/roles/${ids.billing}/permissions`, { permissions: [ids.other] });
  t.is(mismatch.body.error, 'permission_resource_mismatch');
  t.is(mismatch.body.details[0].field, 'body.permissions.0');
  t.is((await call('GET', `/roles/${ids.billing}`)).body.permissions.length, 2, 'a refused PUT changed nothing');
  t.is(
    (await call('PATCH', `/roles/${ids.billing}`, { resource: OTHER_API })).body.error,
    'permission_resource_mismatch',
  );
  // A tenant-wide role takes any resource's permissions.
  t.is((await call('PUT', `/roles/${ids.wide}/permissions`, { permissions: [ids.other, ids.read] })).status, 200);

  const stale = await call('PATCH', `/roles/${ids.billing}`, { description: 'x' }, { headers: { 'if-match': '"v1"' } });
  t.is(stale.status, 412);
  t.is(stale.body.error, 'precondition_failed');
  const got = await call('GET', `/roles/${ids.billing}`);
  const ok = await call(
    'PATCH',
    `/roles/${ids.billing}`,
    { description: 'All invoices' },
    { headers: { 'if-match': got.headers.get('etag')! } },
  );
  t.is(ok.status, 200, ok.text);
  t.like(ok.body, { description: 'All invoices', version: 3 });
  t.is(ok.headers.get('etag'), '"v3"');
  t.is((await call('PATCH', `/roles/${ids.billing}`, { name: 'WIDE' })).status, 409);

  const list = await call('GET', '/roles?limit=2');
  t.deepEqual(
    list.body.roles.map((x: { name: string }) => x.name),
    ['Auditors', 'Billing'],
  );
  t.truthy(list.body.next_cursor);

  const held = await call('DELETE', `/permissions/${ids.read}`);
  t.is(held.status, 409);
  t.is(held.body.error, 'permission_in_use');
  t.deepEqual(
    held.body.roles.map((x: { name: string }) => x.name),
    ['Billing', 'Wide'],
  );
});

test.serial('assignments: users, groups and client_credentials clients of the tenant; idempotent', async (t) => {
  const assign = (principal_type: string, principal_id: string, role = ids.billing) =>
    call('POST', `/roles/${role}/assignments`, { principal_type, principal_id });
  const first = await assign('user', ada);
  t.is(first.status, 201, first.text);
  t.like(first.body, { role_id: ids.billing, principal_type: 'user', principal_id: ada });
  t.is((await assign('user', ada)).status, 200, 'assigning again writes nothing');
  t.is((await assign('group', GROUP)).status, 201);
  t.is((await assign('client', machine)).status, 201);
  t.is((await assign('user', bob, ids.wide)).status, 201);
  t.is((await assign('user', eve)).status, 201);
  t.is((await assign('client', doomedMachine, ids.wide)).status, 201);

  const browser = await assign('client', browserApp);
  t.is(browser.status, 400);
  t.is(browser.body.error, 'client_credentials_required');
  for (const [type, id] of [
    ['user', 'usr_nobody'],
    ['user', otherUser],
    ['group', 'grp_nobody'],
    ['client', 'nobody'],
  ]) {
    const x = await assign(type, id);
    t.is(x.status, 400, `${type} ${id}`);
    t.is(x.body.error, 'principal_not_found');
    t.is(x.body.details[0].field, 'body.principal_id');
  }
  const events = await rows("SELECT actor_id FROM audit_events WHERE action = 'role.assign' AND target_id = ?", [
    ids.billing,
  ]);
  t.is(events.length, 4, 'one event per assignment made, none for the repeat');

  const listed = await call('GET', `/roles/${ids.billing}/assignments?principal_type=user`);
  t.deepEqual(
    listed.body.assignments.map((a: { principal_id: string }) => a.principal_id),
    [ada, eve].sort(),
  );
  const page = await call('GET', `/roles/${ids.billing}/assignments?limit=2`);
  const rest = await call('GET', `/roles/${ids.billing}/assignments?cursor=${page.body.next_cursor}`);
  t.deepEqual(
    [...page.body.assignments, ...rest.body.assignments].map((a: { principal_type: string }) => a.principal_type),
    ['client', 'group', 'user', 'user'],
  );
});

test.serial("a user's effective roles: direct and through a group, with permissions and via", async (t) => {
  const r = await call('GET', `/users/${bob}/roles`);
  t.is(r.status, 200, r.text);
  t.deepEqual(
    r.body.roles.map((x: { name: string; via: string[] }) => [x.name, x.via]),
    [
      ['Billing', [GROUP]],
      ['Wide', ['direct']],
    ],
  );
  t.deepEqual(
    r.body.roles[0].permissions.map((p: { permission: string }) => p.permission),
    ['invoices:read', 'invoices:write'],
  );
  const adas = await call('GET', `/users/${ada}/roles`);
  t.deepEqual(adas.body.roles[0].via, ['direct']);
  t.is((await call('GET', `/users/${otherUser}/roles`)).status, 404);
});

test.serial('unassign: nothing revoked by default; revoke_tokens=true signs the user out', async (t) => {
  const family = async (id: string) => (await rows('SELECT revoked_at FROM token_families WHERE id = ?', [id]))[0];
  const plain = await call('DELETE', `/roles/${ids.wide}/assignments/user/${bob}`);
  t.is(plain.status, 200, plain.text);
  t.like(plain.body, { removed: true, principal_id: bob });
  t.is((await family('fam_bob')).revoked_at, null, 'the next refresh gets the reduced scope; nothing revoked now');

  const revoking = await call('DELETE', `/roles/${ids.billing}/assignments/user/${ada}?revoke_tokens=true`);
  t.is(revoking.status, 200, revoking.text);
  t.like(revoking.body, { removed: true, families_revoked: 1 });
  t.not((await family('fam_ada')).revoked_at, null);
  const again = await call('DELETE', `/roles/${ids.billing}/assignments/user/${ada}`);
  t.like(again.body, { removed: false }, 'idempotent');
  t.is((await call('DELETE', `/roles/${ids.billing}/assignments/group/${GROUP}?revoke_tokens=true`)).status, 400);
  const [unassigned] = await rows("SELECT summary FROM audit_events WHERE action = 'role.unassign' AND target_id = ?", [
    ids.billing,
  ]);
  t.truthy(unassigned);
  t.is((await rows("SELECT id FROM audit_events WHERE action = 'user.sign_out' AND target_id = ?", [ada])).length, 1);
});

test.serial(
  'delete a role: 409 while a client holds it or a SCIM mapping set names it; else it and its assignments go',
  async (t) => {
    const byClient = await call('DELETE', `/roles/${ids.billing}`);
    t.is(byClient.status, 409);
    t.is(byClient.body.error, 'role_in_use');
    t.deepEqual(byClient.body.clients, [machine]);
    const bySet = await call('DELETE', `/roles/${ids.auditors}`);
    t.is(bySet.status, 409);
    t.is(bySet.body.error, 'role_in_use');
    t.deepEqual(
      bySet.body.mapping_sets.map((x: { set_key: string }) => x.set_key),
      ['okta'],
    );

    t.is((await call('DELETE', `/roles/${ids.billing}/assignments/client/${machine}`)).status, 200);
    const gone = await call('DELETE', `/roles/${ids.billing}`);
    t.is(gone.status, 204, gone.text);
    t.is((await call('GET', `/roles/${ids.billing}`)).status, 404);
    t.is((await rows('SELECT 1 FROM role_assignments WHERE role_id = ?', [ids.billing])).length, 0);
    t.is((await rows('SELECT 1 FROM role_permissions WHERE role_id = ?', [ids.billing])).length, 0);
    const [event] = await rows(
      "SELECT actor_id, summary FROM audit_events WHERE action = 'role.delete' AND target_id = ?",
      [ids.billing],
    );
    const summary = typeof event.summary === 'string' ? JSON.parse(event.summary) : event.summary;
    t.like(summary, { name: 'Billing', assignments_removed: 2 }, 'the group and Eve');
    t.is(event.actor_id, s.tenantAdmin.clientId);
    t.is((await call('DELETE', `/permissions/${ids.write}`)).status, 204, 'no role holds it now');
  },
);

test.serial('clean-ups: a deleted client and an erased user take their assignments with them', async (t) => {
  t.is(
    (await call('POST', `/roles/${ids.wide}/assignments`, { principal_type: 'user', principal_id: eve })).status,
    201,
  );
  const before = await rows('SELECT principal_id FROM role_assignments WHERE role_id = ? ORDER BY principal_id', [
    ids.wide,
  ]);
  t.is(before.length, 2);
  t.is((await call('DELETE', `/clients/${doomedMachine}`)).status, 204);
  t.is((await call('DELETE', `/users/${eve}`)).status, 200);
  t.deepEqual(await rows('SELECT principal_id FROM role_assignments WHERE role_id = ?', [ids.wide]), []);
});

test.serial("another tenant's ids answer 404, another tenant's path 403 for a tenant admin", async (t) => {
  const theirs = await api(d.url, 'POST', `${base(otherTenant)}/roles`, { token: platform, body: { name: 'Theirs' } });
  t.is(theirs.status, 201);
  const role = theirs.body.id as string;
  t.is((await call('GET', `/roles/${role}`)).status, 404);
  t.is((await call('PATCH', `/roles/${role}`, { name: 'x' })).status, 404);
  t.is((await call('PUT', `/roles/${role}/permissions`, { permissions: [] })).status, 404);
  t.is((await call('DELETE', `/roles/${role}`)).status, 404);
  t.is((await call('GET', `/roles/${role}/assignments`)).status, 404);
  t.is((await call('POST', `/roles/${role}/assignments`, { principal_type: 'user', principal_id: ada })).status, 404);
  t.is((await call('DELETE', `/roles/${role}/assignments/user/${otherUser}`)).status, 404);
  t.is(
    (await call('DELETE', `/permissions/${ids.other}`, undefined, { token: platform })).status,
    409,
    'own id: found',
  );
  t.is((await api(d.url, 'DELETE', `${base(otherTenant)}/permissions/${ids.other}`, { token: platform })).status, 404);
  const forbidden = await api(d.url, 'GET', `${base(otherTenant)}/roles`, { token: admin });
  t.is(forbidden.status, 403);
  t.is(forbidden.body.error, 'tenant_forbidden');
  t.is((await api(d.url, 'GET', `${base(otherTenant)}/roles/${role}`, { token: platform })).status, 200);
});

test('every operation declares the statuses it answers in /openapi.json', async (t) => {
  type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
  const doc = (await (await fetch(`${d.url}/openapi.json`)).json()) as Doc;
  const p = '/api/admin/tenants/{tenantId}';
  const table: [string, string, number[]][] = [
    ['post', `${p}/permissions`, [201, 400, 401, 403, 404, 409]],
    ['get', `${p}/permissions`, [200, 400, 401, 403, 404]],
    ['delete', `${p}/permissions/{permissionId}`, [204, 400, 401, 403, 404, 409]],
    ['post', `${p}/roles`, [201, 400, 401, 403, 404, 409]],
    ['get', `${p}/roles`, [200, 400, 401, 403, 404]],
    ['get', `${p}/roles/{roleId}`, [200, 400, 401, 403, 404]],
    ['patch', `${p}/roles/{roleId}`, [200, 400, 401, 403, 404, 409, 412]],
    ['delete', `${p}/roles/{roleId}`, [204, 400, 401, 403, 404, 409]],
    ['put', `${p}/roles/{roleId}/permissions`, [200, 400, 401, 403, 404, 412]],
    ['get', `${p}/roles/{roleId}/assignments`, [200, 400, 401, 403, 404]],
    ['post', `${p}/roles/{roleId}/assignments`, [200, 201, 400, 401, 403, 404]],
    ['delete', `${p}/roles/{roleId}/assignments/{principalType}/{principalId}`, [200, 400, 401, 403, 404]],
    ['get', `${p}/users/{userId}/roles`, [200, 400, 401, 403, 404]],
  ];
  for (const [method, path, statuses] of table) {
    const op = doc.paths[path]?.[method];
    t.truthy(op, `${method} ${path}`);
    t.deepEqual(
      Object.keys(op?.responses ?? {})
        .map(Number)
        .sort((a, b) => a - b),
      statuses,
      `${method} ${path}`,
    );
  }
});
