/**
 * `iam tenants get|update|offboard|restore|export`, run as the real executable: the same
 * service as the admin API (docs/directory.md, "Tenants"; docs/tenant-lifecycle.md,
 * "Offboarding"). One happy path through every command, and the typed confirmation's refusal.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

const actor = { type: 'system' as const, id: 'test' };

test('get, update, export, offboard (a wrong typed name changes nothing), list by state and name prefix, restore', async (t) => {
  const db = await testDatabase(t);
  const { ds, provisioning, directory } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const tenant = await activeTenant(provisioning, { name: 'Acme CLI' }, actor);
  await directory.createUser(tenant.id, { email: 'ada@acme.example', name: 'Ada' }, actor);
  const T = ['--tenant', tenant.id];

  const got = await iamJson<Record<string, any>>(db, ['tenants', 'get', ...T]);
  t.is(got.counts.users, 1);
  t.is(got.etag, `"t${Date.parse(got.updated_at)}"`, 'the ETag in its own field; updated_at as ISO 8601');
  const updated = await iamJson<Record<string, any>>(db, [
    'tenants',
    'update',
    ...T,
    '--name',
    'Acme Europe',
    '--allow-signup',
    '--if-match',
    got.etag,
  ]);
  t.deepEqual([updated.name, updated.allow_signup], ['Acme Europe', true]);

  const file = join(db.dir, 'acme.json');
  const exported = await iamJson<Record<string, any>>(db, ['tenants', 'export', ...T, '--output', file]);
  t.is(exported.users, 1);
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  t.is(doc.format, 'iam.tenant-export.v1');
  t.is(doc.users[0].email, 'ada@acme.example');

  // The typed name, read from stdin: a wrong one changes nothing.
  const wrong = await iam(db, ['tenants', 'offboard', ...T], {}, { stdin: 'Acme\n' });
  t.is(wrong.code, 1);
  t.regex(wrong.stderr, /not the tenant's name/);
  t.is((await directory.requireTenant(tenant.id)).lifecycle_state, 'active');
  const off = await iam(
    db,
    ['tenants', 'offboard', ...T, '--reason', 'contract ended'],
    {},
    { stdin: 'Acme Europe\n' },
  );
  t.is(off.code, 0, off.stderr);
  t.regex(off.stdout, /pending_deletion/);
  // The list's filters: the offboarded tenant by its state and name prefix, and not by another state.
  const pending = await iamJson<Record<string, any>[]>(db, [
    'tenants',
    'list',
    '--state',
    'pending_deletion',
    '--name-prefix',
    'Acme E',
  ]);
  t.deepEqual(
    pending.map((x) => x.id),
    [tenant.id],
  );
  t.true(Date.parse(pending[0].purge_after) > Date.now());
  t.deepEqual(await iamJson(db, ['tenants', 'list', '--state', 'suspended']), []);

  const back = await iamJson<Record<string, any>>(db, ['tenants', 'restore', ...T]);
  t.is(back.lifecycle_state, 'active');
});
