/**
 * `iam groups create|list|show|delete` and `iam groups members add|list|remove` (docs/cli.md,
 * "Groups"): the happy path with --json, and an unknown user named by the add (exit 1,
 * unknown_users, nothing added). One database, no daemon.
 */
import test from 'ava';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

const actor = { type: 'system' as const, id: 'test' };

test('create, list, show, members add/list/remove, delete; an unknown member exits 1', async (t) => {
  const db = await testDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const tenant = await activeTenant(provisioning, { name: 'Groups CLI' }, actor);
  const ada = await directory.createUser(tenant.id, { email: 'ada@example.com', name: 'Ada' }, actor);
  const T = ['--tenant', tenant.id];

  const g = await iamJson(db, ['groups', 'create', ...T, '--name', 'Engineering', '--description', 'builders']);
  t.like(g, { display_name: 'Engineering', description: 'builders', member_count: 0 });
  const G = [...T, '--group', g.id];

  const bad = await iam(db, ['groups', 'members', 'add', ...G, '--user', `${ada.id},usr_nope`, '--json']);
  t.is(bad.code, 1);
  t.like(JSON.parse(bad.stdout), { error: 'unknown_users' });
  t.regex(bad.stdout, /usr_nope/);

  t.like(await iamJson(db, ['groups', 'members', 'add', ...G, '--user', ada.id]), { added: 1, already_members: 0 });
  t.deepEqual(
    (await iamJson(db, ['groups', 'members', 'list', ...G])).map((m: { email: string }) => m.email),
    ['ada@example.com'],
  );
  t.deepEqual(
    (await iamJson(db, ['groups', 'list', ...T, '--name-prefix', 'ENG'])).map((x: { id: string }) => x.id),
    [g.id],
  );
  t.like(await iamJson(db, ['groups', 'show', ...G]), { id: g.id, member_count: 1 });
  t.like(await iamJson(db, ['groups', 'members', 'remove', ...G, '--user', ada.id, '--revoke-tokens']), {
    removed: true,
    families_revoked: 0,
  });
  t.like(await iamJson(db, ['groups', 'delete', ...G, '--confirm', 'engineering']), {
    id: g.id,
    deleted: true,
  });
  const actions = await ds.query<{ action: string; actor_type: string }[]>(
    'SELECT action, actor_type FROM audit_events WHERE target_id = ? ORDER BY created_at',
    [g.id],
  );
  t.deepEqual(
    actions.map((a) => a.action),
    ['group.create', 'group.members.update', 'group.members.update', 'group.delete'],
  );
  t.true(actions.every((a) => a.actor_type === 'cli'));
});
