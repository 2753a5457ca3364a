/**
 * The rules of docs/rbac.md at the service level, without a daemon: governed scopes per
 * target resource (a role scoped to a resource grants only there, a tenant-wide one each
 * permission on its own resource, a direct assignment as well as a group's), and the `roles` and
 * `groups` claims emitted only where their bindings say (token type and granted scope).
 */
import test from 'ava';
import { ClaimsService } from '../../shared/services/claims.js';
import { CustomClaimsService } from '../../shared/services/custom-claims.js';
import { NO_PERMISSIONS_TTL_MS, RbacTokens } from '../../shared/services/rbac-tokens.js';
import { testDatabase } from '../helpers/db.js';
import { seedRbacIn } from '../helpers/rbac.js';
import { activeTenant, openServices } from '../helpers/seed.js';

const R = 'https://api.example.test';
const R2 = 'https://billing.example.test';
const actor = { type: 'system' as const, id: 'test' };

test('governed scopes follow the roles for the target resources; roles and groups claims only where bound', async (t) => {
  const db = await testDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const tenant = await activeTenant(provisioning, { name: 'RBAC' }, actor);
  const user = await directory.createUser(tenant.id, { email: 'rbac@example.test', name: 'R' }, actor);
  const other = await directory.createUser(tenant.id, { email: 'none@example.test', name: 'N' }, actor);
  await seedRbacIn(ds, tenant.id, {
    permissions: { [R]: ['invoices:read', 'invoices:write'], [R2]: ['invoices:read', 'reports:read'] },
    groups: { Accounting: [user.id], Everyone: [user.id, other.id] },
    roles: [
      {
        name: 'Invoice reader',
        resource: R,
        permissions: [{ resource: R, permission: 'invoices:read' }],
        groups: ['Accounting'],
      },
      // Tenant-wide, held directly: reports:read, a permission of R2 only.
      { name: 'Staff', permissions: [{ resource: R2, permission: 'reports:read' }], users: [user.id] },
    ],
  });
  const rbac = new RbacTokens(ds);
  const asUser = { type: 'user' as const, id: user.id };
  const asked = ['openid', 'invoices:read', 'invoices:write', 'reports:read', 'custom:thing'];
  // R: invoices:read through the group's role; write held by nobody; reports:read is R2's.
  t.deepEqual(await rbac.grantedScope(tenant.id, asUser, asked, [R]), ['openid', 'invoices:read', 'custom:thing']);
  // R2: invoices:read exists there but the role is scoped to R; reports:read through Staff.
  t.deepEqual(await rbac.grantedScope(tenant.id, asUser, asked, [R2]), ['openid', 'reports:read', 'custom:thing']);
  t.deepEqual(await rbac.grantedScope(tenant.id, asUser, asked, [R, R2]), [
    'openid',
    'invoices:read',
    'reports:read',
    'custom:thing',
  ]);
  // No target (a client without audiences): every governed scope is left out.
  t.deepEqual(await rbac.grantedScope(tenant.id, asUser, asked, []), ['openid', 'custom:thing']);
  t.deepEqual(await rbac.grantedScope(tenant.id, { type: 'user', id: other.id }, asked, [R, R2]), [
    'openid',
    'custom:thing',
  ]);

  const claims = new ClaimsService({ ds, customClaims: new CustomClaimsService(ds), directory, rbacTokens: rbac });
  const id = await claims.idToken(tenant.id, user.id, ['openid', 'groups'], ds, [R]);
  t.deepEqual(id.groups, ['Accounting', 'Everyone']);
  t.false('roles' in id, 'roles is bound to the roles scope, not granted here');
  const at = await claims.accessToken(tenant.id, user.id, ['openid', 'roles'], ds, [R]);
  t.deepEqual(at.roles, ['Invoice reader', 'Staff'], 'the role scoped to R, and the tenant-wide one');
  t.false('groups' in at);
  t.deepEqual((await claims.accessToken(tenant.id, user.id, ['roles'], ds, [R2])).roles, ['Staff']);
  const info = await claims.userinfo((await directory.scope(tenant.id).users.find(user.id))!, ['openid', 'email']);
  t.false('roles' in info);
  t.false('groups' in info);
  t.deepEqual(
    (await claims.userinfo((await directory.scope(tenant.id).users.find(user.id))!, ['openid', 'groups'])).groups,
    ['Accounting', 'Everyone'],
  );
});

test('a tenant without permissions is remembered for a while: its tokens read nothing, its first permission governs after that', async (t) => {
  const db = await testDatabase(t);
  const { ds, provisioning } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const tenant = await activeTenant(provisioning, { name: 'No RBAC' }, actor);
  const app = { type: 'client' as const, id: 'worker' };
  let now = 1_000_000;
  const rbac = new RbacTokens(ds, () => now);
  t.deepEqual(await rbac.grantedScope(tenant.id, app, ['api'], [R]), ['api'], 'no permission: not governed');
  // The tenant's first permission, held by no role: remembered "none" until the time runs out.
  await seedRbacIn(ds, tenant.id, { permissions: { [R]: ['api'] } });
  t.deepEqual(await rbac.grantedScope(tenant.id, app, ['api'], [R]), ['api'], 'still remembered');
  now += NO_PERMISSIONS_TTL_MS + 1;
  t.deepEqual(await rbac.grantedScope(tenant.id, app, ['api'], [R]), [], 'governed, and no role holds it');
  // A tenant with permissions is read every time: nothing is remembered for it.
  t.deepEqual(await new RbacTokens(ds, () => now).grantedScope(tenant.id, app, ['api'], [R]), []);
});
