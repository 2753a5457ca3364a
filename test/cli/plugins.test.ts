/**
 * `iam plugins list|configure|enable|disable`, run as the real executable: a secret piped in on
 * stdin (never in argv) is stored sealed and shown masked; enabling with a field missing fails
 * with every missing field (and in --json); enable and disable per tenant and platform.
 */
import test from 'ava';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

const actor = { type: 'system' as const, id: 'test' };
const SECRET = 'whsec_cli_0123456789abcdefghijkl';

test('configure in steps with the secret on stdin, enable (missing fields first), list and disable', async (t) => {
  t.timeout(120_000);
  const db = await testDatabase(t);
  const { ds, provisioning } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const ten = (await activeTenant(provisioning, { name: 'CLI plugins' }, actor)).id;

  const listed = await iamJson<{ tenantId: string | null; plugins: { pluginId: string }[] }>(db, ['plugins', 'list']);
  t.is(listed.tenantId, null);
  t.deepEqual(
    listed.plugins.map((p) => p.pluginId),
    ['webhook-email', 'audit-webhook'],
  );
  const human = await iam(db, ['plugins', 'list', '--tenant', ten]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /audit-webhook\s+no\s+none\s+url, signingSecret/);
  t.regex(human.stdout, /signingSecret\* \(secret\)/);

  // Enable before anything is set: every missing field, in the message and in --json.
  const early = await iam(db, ['plugins', 'enable', 'audit-webhook', '--tenant', ten, '--json']);
  t.is(early.code, 1);
  const err = JSON.parse(early.stdout) as { error: string; missingRequiredFields: string[] };
  t.is(err.error, 'plugin_config_incomplete');
  t.deepEqual(err.missingRequiredFields, ['url', 'signingSecret']);

  const step1 = await iamJson<{ missingRequiredFields: string[] }>(db, [
    'plugins',
    'configure',
    'audit-webhook',
    '--tenant',
    ten,
    '--set',
    'url=https://siem.example.com/ingest',
    '--set',
    'batchSize=20',
  ]);
  t.deepEqual(step1.missingRequiredFields, ['signingSecret']);
  const step2 = await iam(
    db,
    ['plugins', 'configure', 'audit-webhook', '--tenant', ten, '--secret-stdin', 'signingSecret'],
    {},
    { stdin: `${SECRET}\n` },
  );
  t.is(step2.code, 0, step2.stderr);
  t.false(step2.stdout.includes(SECRET));
  t.regex(step2.stdout, /signingSecret = ••••ijkl/);
  t.regex(step2.stdout, /batchSize = 20/);
  const raw = await ds.query<{ config: string; secrets_sealed: string }[]>(
    'SELECT config, secrets_sealed FROM plugin_settings WHERE scope_key = ?',
    [ten],
  );
  t.false(raw[0].secrets_sealed.includes(SECRET));
  t.false(raw[0].config.includes(SECRET));

  const bad = await iam(db, ['plugins', 'configure', 'audit-webhook', '--tenant', ten, '--set', 'url=http://x.test/']);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /config\.url/);

  const on = await iamJson<{ enabled: boolean; provisioning: { state: string; kind: string } }>(db, [
    'plugins',
    'enable',
    'audit-webhook',
    '--tenant',
    ten,
  ]);
  t.true(on.enabled);
  t.is(on.provisioning.state, 'pending');
  t.is(on.provisioning.kind, 'verification_delivery');
  const off = await iam(db, ['plugins', 'disable', 'audit-webhook', '--tenant', ten]);
  t.is(off.code, 0, off.stderr);
  t.regex(off.stdout, /enabled: +no/);

  const unknown = await iam(db, ['plugins', 'enable', 'nope']);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /Plugin nope was not found/);
  const noTenant = await iam(db, ['plugins', 'list', '--tenant', 'ten_missing']);
  t.is(noTenant.code, 1);
  const nothing = await iam(db, ['plugins', 'configure', 'webhook-email']);
  t.is(nothing.code, 1);
  t.regex(nothing.stderr, /nothing to change/);
});
