/**
 * The CLI of the FAPI 2.0 profile switch (docs/fapi.md, docs/cli.md): `iam clients create
 * --fapi-profile`, `iam clients update --fapi-profile tenant`, and the tenant's profile with
 * `iam tenants fapi set|show`, audited with the CLI as the actor; an unknown profile exits 2.
 */
import test from 'ava';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { sql } from '../helpers/oauth.js';
import { seed } from '../helpers/seed.js';

test('clients create|update --fapi-profile and tenants fapi set|show, audited; an unknown profile exits 2', async (t) => {
  const db = await testDatabase(t);
  const { tenantId } = await seed(db.url, db.dir);
  const client = await iamJson(db, [
    'clients',
    'create',
    '--tenant',
    tenantId,
    '--name',
    'FAPI RP',
    '--redirect-uri',
    'https://rp.example.com/cb',
    '--fapi-profile',
    'fapi2-message-signing',
  ]);
  t.is(client.fapi_profile, 'fapi2-message-signing');
  const updated = await iamJson(db, ['clients', 'update', '--tenant', tenantId, client.id, '--fapi-profile', 'tenant']);
  t.is(updated.fapi_profile, null);

  const set = await iamJson(db, ['tenants', 'fapi', 'set', '--tenant', tenantId, '--profile', 'fapi2-security']);
  t.deepEqual(set.policy, { profile: 'fapi2-security' });
  const shown = await iam(db, ['tenants', 'fapi', 'show', '--tenant', tenantId]);
  t.is(shown.code, 0);
  t.regex(shown.stdout, /fapi2-security \(FAPI 2\.0 Security Profile\)/);
  const audit = (await sql(
    db.url,
    db.dir,
    "SELECT actor_type FROM audit_events WHERE action = 'tenant.fapi.update'",
  )) as {
    actor_type: string;
  }[];
  t.is(audit.length, 1);
  t.is(audit[0].actor_type, 'cli');

  const bad = await iam(db, ['tenants', 'fapi', 'set', '--tenant', tenantId, '--profile', 'fapi3']);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /fapi2-security/);
});
