/**
 * `iam tenants set-standard-claims` and `iam users create --claims`, run as the real executable:
 * the tenant's optional claim scopes (address, phone) and a user's OIDC Core §5.1 claims, the
 * same service as the admin API (docs/claims.md, "Standard claims").
 */
import test from 'ava';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

const actor = { type: 'system' as const, id: 'test' };

test('help: both commands show their flags and an example', async (t) => {
  const db = { url: 'sqlite:/nonexistent/never-opened.db', dir: '/nonexistent' };
  const set = await iam(db, ['tenants', 'set-standard-claims', '--help']);
  t.is(set.code, 0, set.stderr);
  for (const s of ['--tenant', '--scope', 'address', 'phone', 'EXAMPLES']) t.true(set.stdout.includes(s), s);
  const create = await iam(db, ['users', 'create', '--help']);
  t.is(create.code, 0, create.stderr);
  t.true(create.stdout.includes('--claims'));
});

test('offer address and phone, create a user with claims; bad claims name the field', async (t) => {
  const db = await testDatabase(t);
  const { ds, provisioning, directory } = await openServices(db.url, db.dir);
  const tenant = await activeTenant(provisioning, { name: 'Claims CLI' }, actor);
  try {
    const T = ['--tenant', tenant.id];
    const on = await iamJson(db, ['tenants', 'set-standard-claims', ...T, '--scope', 'phone', '--scope', 'address']);
    t.deepEqual(on, { tenant_id: tenant.id, scopes: ['address', 'phone'] });
    t.deepEqual(await directory.standardClaimScopes(tenant.id), ['address', 'phone']);

    const claims = { given_name: 'Ada', locale: 'en-gb', phone_number: '+442071234567', address: { country: 'GB' } };
    const user = await iamJson<Record<string, unknown>>(db, [
      'users',
      'create',
      ...T,
      '--email',
      'ada@example.com',
      '--name',
      'Ada Lovelace',
      '--claims',
      JSON.stringify(claims),
    ]);
    t.is(user.given_name, 'Ada');
    t.is(user.locale, 'en-GB');
    t.deepEqual(user.address, { country: 'GB' });

    const bad = await iam(db, [
      'users',
      'create',
      ...T,
      '--email',
      'bad@example.com',
      '--name',
      'Bad',
      '--claims',
      '{"phone_number":"020 7123 4567"}',
      '--json',
    ]);
    t.not(bad.code, 0);
    t.regex(bad.stdout + bad.stderr, /phone_number/);
    const notJson = await iam(db, [
      'users',
      'create',
      ...T,
      '--email',
      'x@example.com',
      '--name',
      'X',
      '--claims',
      '{',
    ]);
    t.not(notJson.code, 0);
    t.regex(notJson.stderr, /--claims/);

    const off = await iamJson(db, ['tenants', 'set-standard-claims', ...T]);
    t.deepEqual(off, { tenant_id: tenant.id, scopes: [] });
  } finally {
    await ds.destroy();
  }
});
