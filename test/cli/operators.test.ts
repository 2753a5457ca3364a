/**
 * `iam operators add|list|remove` (docs/console.md, "Operators"): the first add creates the
 * platform tenant and the user, roles are RBAC roles there, each move is audited; a
 * tenant-admin without --tenant exits 1. One database, no daemon.
 */
import test from 'ava';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

const actor = { type: 'system' as const, id: 'test' };

test('add creates the platform tenant and the operator; list, remove; tenant-admin needs --tenant', async (t) => {
  const db = await testDatabase(t);
  const { ds, provisioning } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const acme = await activeTenant(provisioning, { name: 'Acme' }, actor);

  const ada = await iamJson(db, ['operators', 'add', '--email', 'Ada@Example.com', '--role', 'platform-admin']);
  t.like(ada, { email: 'ada@example.com', role: 'platform-admin', tenant_id: null, created: true });
  const [meta] = await ds.query<{ value: string }[]>(
    "SELECT value FROM service_meta WHERE name = 'platform_tenant_id'",
  );
  const [user] = await ds.query<{ tenant_id: string }[]>('SELECT tenant_id FROM users WHERE id = ?', [ada.user_id]);
  t.is(user.tenant_id, meta.value);

  const bad = await iam(db, ['operators', 'add', '--email', 'bob@example.com', '--role', 'tenant-admin', '--json']);
  t.is(bad.code, 1);
  t.like(JSON.parse(bad.stdout), { error: 'invalid_request' });

  await iamJson(db, ['operators', 'add', '--email', 'bob@example.com', '--role', 'tenant-admin', '--tenant', acme.id]);
  t.deepEqual(
    (await iamJson(db, ['operators', 'list'])).map((o: { email: string; role: string; tenant_id: string | null }) => [
      o.email,
      o.role,
      o.tenant_id,
    ]),
    [
      ['ada@example.com', 'platform-admin', null],
      ['bob@example.com', 'tenant-admin', acme.id],
    ],
  );
  t.like(
    await iamJson(db, [
      'operators',
      'remove',
      '--email',
      'bob@example.com',
      '--role',
      'tenant-admin',
      '--tenant',
      acme.id,
    ]),
    {
      removed: true,
    },
  );
  t.is((await iamJson(db, ['operators', 'list'])).length, 1);
  const actions = await ds.query<{ action: string; actor_type: string }[]>(
    "SELECT action, actor_type FROM audit_events WHERE action LIKE 'operator.%' ORDER BY created_at",
  );
  t.deepEqual(
    actions.map((a) => a.action),
    ['operator.add', 'operator.add', 'operator.remove'],
  );
  t.true(actions.every((a) => a.actor_type === 'cli'));
});
