/**
 * `iam claims create|list|show|deactivate` and `iam users claims set|get`, run as the real
 * executable: the same service and refusals as the admin API, --json output, flag names in
 * the messages.
 */
import test from 'ava';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

const actor = { type: 'system' as const, id: 'test' };

test('define, list, show and deactivate schemas; set and get a user’s values', async (t) => {
  const db = await testDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const tenant = await activeTenant(provisioning, { name: 'Claims CLI' }, actor);
  const user = await directory.createUser(tenant.id, { email: 'cli@example.com', name: 'Cli' }, actor);
  await ds.destroy();
  const T = ['--tenant', tenant.id];

  const dept = await iamJson(db, [
    'claims',
    'create',
    ...T,
    '--key',
    'department',
    '--label',
    'Department',
    '--type',
    'string',
    '--pii',
    '--bind',
    'id_token:profile',
    '--bind',
    'userinfo',
  ]);
  t.like(dept, { field_key: 'department', field_type: 'string', cardinality: 'one', is_pii: 1, is_active: 1 });
  t.deepEqual(dept.field_usage_bindings, [{ token_type: 'id_token', scopes: ['profile'] }, { token_type: 'userinfo' }]);
  const roles = await iamJson(db, [
    'claims',
    'create',
    ...T,
    '--key',
    'roles',
    '--label',
    'Roles',
    '--type',
    'string',
    '--cardinality',
    'many',
    '--bind',
    'access_token',
  ]);
  await iamJson(db, ['claims', 'create', ...T, '--key', 'level', '--label', 'Level', '--type', 'number']);

  const bad = await iam(db, ['claims', 'create', ...T, '--key', 'Dept', '--label', 'D', '--type', 'string', '--json']);
  t.is(bad.code, 1);
  t.is(JSON.parse(bad.stdout).error, 'invalid_claim_key');
  const reserved = await iam(db, ['claims', 'create', ...T, '--key', 'sub', '--label', 'S', '--type', 'string']);
  t.is(reserved.code, 1);
  t.regex(reserved.stderr, /invalid --key "sub": reserved claim name/);
  const dup = await iam(db, ['claims', 'create', ...T, '--key', 'roles', '--label', 'R', '--type', 'string', '--json']);
  t.is(dup.code, 1);
  t.is(JSON.parse(dup.stdout).error, 'claim_key_conflict');
  const bind = await iam(db, [
    'claims',
    'create',
    ...T,
    '--key',
    'x_y',
    '--label',
    'X',
    '--type',
    'string',
    '--bind',
    'jwt',
  ]);
  t.is(bind.code, 1);
  t.regex(bind.stderr, /--bind "jwt"/);
  const type = await iam(db, ['claims', 'create', ...T, '--key', 'x_y', '--label', 'X', '--type', 'integer']);
  t.is(type.code, 2, 'an option outside the list is a usage error');

  const list = await iamJson<Record<string, any>[]>(db, ['claims', 'list', ...T]);
  t.deepEqual(
    list.map((s) => [s.field_key, s.is_system]),
    [
      ['email', 1],
      ['name', 1],
      ['department', 0],
      ['roles', 0],
      ['level', 0],
    ],
  );
  const human = await iam(db, ['claims', 'list', ...T]);
  t.is(human.code, 0);
  t.regex(human.stdout, /department\s+string\s+pii\s+active\s+id_token\[profile\] userinfo\s+Department/);
  t.deepEqual(await iamJson(db, ['claims', 'show', dept.id, ...T]), dept);
  const missing = await iam(db, ['claims', 'show', 'ccs_nope', ...T, '--json']);
  t.is(missing.code, 1);
  t.is(JSON.parse(missing.stdout).error, 'not_found');

  const set = await iamJson(db, [
    'users',
    'claims',
    'set',
    ...T,
    '--user',
    user.id,
    '--set',
    'department=Sales',
    '--set',
    'roles=admin,auditor',
    '--set',
    'level=3',
  ]);
  t.deepEqual(set.claims, { department: 'Sales', roles: ['admin', 'auditor'], level: 3 });
  const merged = await iamJson(db, ['users', 'claims', 'set', ...T, '--user', user.id, '--merge', '--set', 'level=']);
  t.deepEqual(merged.claims, { department: 'Sales', roles: ['admin', 'auditor'] });
  const fromJson = await iamJson(db, [
    'users',
    'claims',
    'set',
    ...T,
    '--user',
    user.id,
    '--claims',
    '{"department":"Ops","roles":["x"]}',
  ]);
  t.deepEqual(fromJson.claims, { department: 'Ops', roles: ['x'] });
  const got = await iamJson(db, ['users', 'claims', 'get', ...T, '--user', user.id]);
  t.deepEqual(got, {
    user_id: user.id,
    claims: { department: 'Ops', roles: ['x'] },
    system_claims: { email: 'cli@example.com', name: 'Cli' },
  });
  const invalid = await iam(db, ['users', 'claims', 'set', ...T, '--user', user.id, '--set', 'level=many', '--json']);
  t.is(invalid.code, 1);
  t.is(JSON.parse(invalid.stdout).error, 'invalid_claim_value');
  const unknown = await iam(db, ['users', 'claims', 'set', ...T, '--user', user.id, '--set', 'nope=1']);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /claims\.nope/);
  const nouser = await iam(db, ['users', 'claims', 'get', ...T, '--user', 'usr_nope', '--json']);
  t.is(nouser.code, 1);
  t.is(JSON.parse(nouser.stdout).error, 'not_found');

  const off = await iamJson(db, ['claims', 'deactivate', roles.id, ...T]);
  t.is(off.is_active, 0);
  t.deepEqual((await iamJson(db, ['users', 'claims', 'get', ...T, '--user', user.id])).claims, { department: 'Ops' });
  const system = await iam(db, ['claims', 'deactivate', list[0].id, ...T, '--json']);
  t.is(system.code, 1);
  t.is(JSON.parse(system.stdout).error, 'system_claim_schema');
  const help = await iam(db, ['claims', 'create', '--help']);
  t.regex(help.stdout, /EXAMPLES/);
  t.regex(help.stdout, /--bind id_token:profile/);
});
