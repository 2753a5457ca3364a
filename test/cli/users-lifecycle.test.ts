/**
 * `iam users disable|enable|signout|delete|invite` (docs/cli.md): the moves and their --json results
 * (an invitation of a disabled user refused);
 * a delete whose typed address is not the user's exits non-zero and deletes nothing; the
 * address typed on stdin confirms it.
 */
import test from 'ava';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

const actor = { type: 'system' as const, id: 'test' };

test('disable, enable, signout, and delete with typed confirmation', async (t) => {
  const db = await testDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const tenant = await activeTenant(provisioning, { name: 'Users CLI' }, actor);
  const user = await directory.createUser(tenant.id, { email: 'dora@example.com', name: 'Dora' }, actor);
  const U = ['--tenant', tenant.id, '--user', user.id];
  const status = async () =>
    (await ds.query<{ status: string }[]>('SELECT status FROM users WHERE id = ?', [user.id]))[0]?.status as
      string | undefined;

  t.like(await iamJson(db, ['users', 'disable', ...U]), { id: user.id, status: 'disabled', changed: true });
  t.is(await status(), 'disabled');
  const refused = await iam(db, ['users', 'invite', ...U, '--json']);
  t.is(refused.code, 1);
  t.is(JSON.parse(refused.stdout).error, 'user_disabled');
  t.like(await iamJson(db, ['users', 'enable', ...U]), { status: 'active', changed: true });
  const invited = await iamJson(db, ['users', 'invite', ...U]);
  t.like(invited, { user_id: user.id, tenant_id: tenant.id });
  t.regex(String(invited.sign_in_url), /\/account\/sign-in\?tenant=.+&login_hint=dora%40example\.com$/);
  t.like(await iamJson(db, ['users', 'signout', ...U]), { status: 'active', sessions_ended: 0 });

  const wrong = await iam(db, ['users', 'delete', ...U, '--confirm', 'someone@example.com', '--json']);
  t.is(wrong.code, 1);
  t.is(JSON.parse(wrong.stdout).error, 'confirmation_mismatch');
  t.is(await status(), 'active', 'nothing was deleted');

  const typed = await iam(db, ['users', 'delete', ...U], {}, { stdin: 'Dora@example.com\n' });
  t.is(typed.code, 0, typed.stderr);
  t.regex(typed.stdout, /Erased user usr_/);
  t.is(await status(), undefined);
  const actions = await ds.query<{ action: string }[]>(
    "SELECT action FROM audit_events WHERE target_id = ? AND action LIKE 'user.%'",
    [user.id],
  );
  t.deepEqual(actions.map((a) => a.action).sort(), [
    'user.create',
    'user.delete',
    'user.disable',
    'user.enable',
    'user.invite',
    'user.sign_out',
  ]);
});
