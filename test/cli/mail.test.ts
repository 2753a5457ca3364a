/**
 * `iam mail preview` and `iam mail templates set`, run as the real executable
 * (docs/cli.md, "Mail templates"): the happy path on one tenant, and the refusal of an unknown
 * variable. list and delete are the same service calls as the admin API's, tested there.
 */
import test from 'ava';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

test('preview the default and an override, in German with HTML; an unknown variable is refused', async (t) => {
  const db = await testDatabase(t);
  const { ds, provisioning } = await openServices(db.url, db.dir);
  const tenant = await activeTenant(provisioning, { name: 'Acme' }, { type: 'system', id: 'test' });
  await ds.destroy();
  const signInCode = ['--tenant', tenant.id, '--kind', 'sign_in_code'];

  const byDefault = await iam(db, ['mail', 'preview', ...signInCode, '--locale', 'de', '--html']);
  t.is(byDefault.code, 0, byDefault.stderr);
  t.regex(
    byDefault.stdout,
    /^Subject: Ihr Anmeldecode: 123456\n\(sign_in_code, de, the default\)\n\nIhr Anmeldecode für /,
  );
  t.regex(byDefault.stdout, /--- HTML ---\n<!doctype html><html lang="de">.*<strong[^>]*>Acme<\/strong>/s);

  const set = await iamJson(db, [
    'mail',
    'templates',
    'set',
    ...signInCode,
    '--locale',
    'de',
    '--subject',
    '{{tenant_name}}: {{code}}',
  ]);
  t.like(set, { kind: 'sign_in_code', locale: 'de', subject: '{{tenant_name}}: {{code}}' });
  const preview = await iamJson(db, ['mail', 'preview', ...signInCode, '--locale', 'de']);
  t.like(preview, { source: 'override', subject: 'Acme: 123456' });
  const bad = await iam(db, ['mail', 'templates', 'set', ...signInCode, '--text', 'Code {{otp}}', '--json']);
  t.is(bad.code, 1);
  t.like(JSON.parse(bad.stdout), { error: 'invalid_template' });
  t.regex(JSON.parse(bad.stdout).message, /^--text: .*unknown variable \{\{otp\}\}/);
});
