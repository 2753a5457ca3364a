/**
 * `iam tenants registration show|set`, `iam registration default-tenant` and
 * `iam registration tokens create|list|revoke` on a seeded database (docs/registration.md):
 * the happy path of each, and a refused input. No daemon: the commands use the services.
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { iam, iamJson } from '../helpers/cli.js';
import { seed } from '../helpers/seed.js';

let db: TestDb;
let tenant: string;

test.before(async () => {
  db = await createTestDatabase();
  tenant = (await seed(db.url, db.dir)).tenantId;
});
test.after.always(async () => {
  await db?.drop();
});

test.serial('registration policy, default tenant and initial access tokens through the CLI', async (t) => {
  const shown = await iamJson(db, ['tenants', 'registration', 'show', '--tenant', tenant]);
  t.is(shown.policy.mode, 'closed');
  const set = await iamJson(db, [
    'tenants',
    'registration',
    'set',
    '--tenant',
    tenant,
    '--mode',
    'open',
    '--scope-ceiling',
    'openid email',
    '--per-ip-per-hour',
    '5',
  ]);
  t.deepEqual(set.policy, {
    mode: 'open',
    scopeCeiling: ['openid', 'email'],
    openLimits: { perIpPerHour: 5, perTenantPerDay: 100 },
  });
  t.deepEqual(await iamJson(db, ['registration', 'default-tenant', tenant]), { defaultTenantId: tenant });

  const created = await iamJson(db, ['registration', 'tokens', 'create', '--tenant', tenant, '--max-uses', '3']);
  t.regex(created.token, /^iat_/);
  const listed = await iamJson(db, ['registration', 'tokens', 'list', '--tenant', tenant]);
  t.deepEqual(
    listed.tokens.map((x: { id: string; maxUses: number }) => [x.id, x.maxUses]),
    [[created.id, 3]],
  );
  t.false(JSON.stringify(listed).includes(created.token));
  await iamJson(db, ['registration', 'tokens', 'revoke', '--tenant', tenant, '--id', created.id]);
  t.deepEqual((await iamJson(db, ['registration', 'tokens', 'list', '--tenant', tenant])).tokens, []);
});

test.serial('a policy the schema refuses names the flag and exits 1; nothing changes', async (t) => {
  const args = ['tenants', 'registration', 'set', '--tenant', tenant, '--scope-ceiling', 'openid iam.admin', '--json'];
  const r = await iam(db, args);
  t.is(r.code, 1);
  t.regex(r.stdout + r.stderr, /scope-ceiling/);
  const after = await iamJson(db, ['tenants', 'registration', 'show', '--tenant', tenant]);
  t.deepEqual(after.policy.scopeCeiling, ['openid', 'email']);
});
