/**
 * `iam permissions …` and `iam roles …` (docs/rbac.md, docs/cli.md) run as the real executable:
 * a permission, a role scoped to its resource given it by "<resource> <permission>", assigned to
 * a user, shown with its holder, taken away with --revoke-tokens, deleted with --confirm; and a
 * protocol scope refused as a permission, the message naming the flag.
 */
import test from 'ava';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, credentialsClient, openServices } from '../helpers/seed.js';

const actor = { type: 'system' as const, id: 'test' };
const API = 'https://api.example.test';

test('permissions create and list, roles create, permissions set, assign, show, unassign, delete', async (t) => {
  const db = await testDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const tenant = (await activeTenant(provisioning, { name: 'RBAC CLI' }, actor)).id;
  await credentialsClient(directory, tenant, { name: 'API', resource_identifiers: [API] });
  const ada = (await directory.createUser(tenant, { email: 'ada@example.com', name: 'Ada' }, actor)).id;
  await ds.destroy();
  const T = ['--tenant', tenant];

  const perm = await iamJson(db, ['permissions', 'create', ...T, '--resource', API, '--permission', 'invoices:read']);
  t.like(perm, { resource: API, permission: 'invoices:read' });
  const listed = await iamJson(db, ['permissions', 'list', ...T, '--resource', API]);
  t.deepEqual(
    listed.permissions.map((p: { id: string }) => p.id),
    [perm.id],
  );

  const role = await iamJson(db, ['roles', 'create', ...T, '--name', 'Billing', '--resource', API]);
  t.like(role, { name: 'Billing', resource: API, version: 1 });
  const set = await iamJson(db, ['roles', 'permissions', 'set', ...T, role.id, '--permission', `${API} invoices:read`]);
  t.deepEqual(
    set.permissions.map((p: { id: string }) => p.id),
    [perm.id],
  );
  t.like(await iamJson(db, ['roles', 'assign', ...T, role.id, '--user', ada]), { principal_id: ada, created: true });
  const shown = await iamJson(db, ['roles', 'show', ...T, role.id]);
  t.deepEqual(
    shown.assignments.map((a: { principal_id: string }) => a.principal_id),
    [ada],
  );
  t.like(await iamJson(db, ['roles', 'unassign', ...T, role.id, '--user', ada, '--revoke-tokens']), {
    removed: true,
    families_revoked: 0,
  });
  t.like(await iamJson(db, ['roles', 'delete', ...T, role.id, '--confirm', 'Billing']), { deleted: true });

  const refused = await iam(db, ['permissions', 'create', ...T, '--resource', API, '--permission', 'openid', '--json']);
  t.is(refused.code, 1);
  const err = JSON.parse(refused.stdout);
  t.is(err.error, 'reserved_permission');
  t.regex(err.message, /--permission/);
});
