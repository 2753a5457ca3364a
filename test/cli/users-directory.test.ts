/**
 * `iam users get`, `iam users update` and `iam users list`'s filters and cursor, run as the real
 * executable: the ETag get prints is what update's --if-match compares (a stale one fails
 * with precondition_failed and writes nothing), --claim goes through the custom claims checks.
 */
import test from 'ava';
import { CustomClaimsService } from '../../shared/services/custom-claims.js';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

const actor = { type: 'system' as const, id: 'test' };

test('get, update under --if-match, list with filters and a cursor', async (t) => {
  const db = await testDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const tenant = await activeTenant(provisioning, { name: 'Users CLI' }, actor);
  await new CustomClaimsService(ds).createSchema(
    tenant.id,
    { field_key: 'level', display_label: 'Level', field_type: 'number' },
    actor,
  );
  const ada = await directory.createUser(tenant.id, { email: 'ada@example.com', name: 'Ada' }, actor);
  await directory.createUser(tenant.id, { email: 'alan@example.com', name: 'Alan' }, actor);
  await directory.createUser(tenant.id, { email: 'grace@example.com', name: 'Grace' }, actor);
  await ds.destroy();
  const U = ['--tenant', tenant.id, '--user', ada.id];

  const got = await iamJson(db, ['users', 'get', ...U]);
  t.like(got, { id: ada.id, email: 'ada@example.com', email_verified: true, passkey_count: 0, last_sign_in: null });
  t.regex(got.etag, /^".+"$/);

  const updated = await iamJson(db, [
    'users',
    'update',
    ...U,
    '--name',
    'Ada L',
    '--claim',
    'level=3',
    '--if-match',
    got.etag,
  ]);
  t.like(updated, { name: 'Ada L', claims: { level: 3 } });
  t.not(updated.etag, got.etag);

  const stale = await iam(db, ['users', 'update', ...U, '--name', 'Lost', '--if-match', got.etag, '--json']);
  t.is(stale.code, 1);
  t.is(JSON.parse(stale.stdout).error, 'precondition_failed');

  const filtered = await iamJson(db, ['users', 'list', '--tenant', tenant.id, '--email-prefix', 'a']);
  t.deepEqual(
    filtered.map((u: { email: string }) => u.email),
    ['ada@example.com', 'alan@example.com'],
  );
  t.is(filtered[0].name, 'Ada L', 'the stale update wrote nothing');
  const first = await iam(db, ['users', 'list', '--tenant', tenant.id, '--limit', '2', '--json']);
  t.is(JSON.parse(first.stdout).length, 2);
  const cursor = /--cursor (\S+)/.exec(first.stderr)?.[1];
  t.truthy(cursor, first.stderr);
  const rest = await iamJson(db, ['users', 'list', '--tenant', tenant.id, '--cursor', cursor!]);
  t.deepEqual(
    rest.map((u: { email: string }) => u.email),
    ['grace@example.com'],
  );
});
