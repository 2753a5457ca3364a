/**
 * `iam clients get|update|disable|enable|delete` and `iam clients secrets add|list|revoke`, the
 * real executable (docs/cli.md): the happy path of each, and delete's typed confirmation refused.
 */
import test from 'ava';
import { newClientId } from '../../shared/crypto.js';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

test('clients lifecycle commands: update, get, secrets add/list/revoke, disable, enable, delete', async (t) => {
  const db = await testDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  const tenant = (await activeTenant(provisioning, { name: 'CLI clients' }, actor)).id;
  const created = await directory.createClient(tenant, { name: 'svc', grant_types: ['client_credentials'] }, actor);
  const cid = created.client.client_id;
  const at = ['--tenant', tenant];

  const updated = await iamJson(db, ['clients', 'update', cid, ...at, '--name', 'renamed', '--scope', 'api', '--json']);
  t.is(updated.name, 'renamed');
  t.deepEqual(updated.scopes, ['api']);
  const got = await iamJson(db, ['clients', 'get', cid, ...at, '--json']);
  t.is(got.etag, updated.etag);
  // A bad value names the flag, as `clients create` does.
  const bad = await iam(db, ['clients', 'update', cid, ...at, '--redirect-uri', 'nope']);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /--redirect-uri/);

  const added = await iam(db, ['clients', 'secrets', 'add', cid, ...at, '--old-secret-expires-in', '600', '--json']);
  t.is(added.code, 0, added.stderr);
  t.regex(added.stderr, /WARNING: store the client secret now/);
  const secret = JSON.parse(added.stdout) as { id: string; client_secret: string };
  const listed = await iamJson<{ id: string; expires_at: number | null }[]>(db, [
    'clients',
    'secrets',
    'list',
    cid,
    ...at,
    '--json',
  ]);
  t.is(listed.length, 2);
  t.false(JSON.stringify(listed).includes(secret.client_secret));
  const old = listed.find((s) => s.id !== secret.id)!;
  t.truthy(old.expires_at);
  t.is((await iam(db, ['clients', 'secrets', 'revoke', cid, old.id, ...at])).code, 0);
  t.truthy(await directory.verifyClientSecret(created.client, secret.client_secret));
  t.is(await directory.verifyClientSecret(created.client, created.client_secret!), null);

  t.is((await iamJson(db, ['clients', 'disable', cid, ...at, '--json'])).status, 'disabled');
  t.is((await iamJson(db, ['clients', 'enable', cid, ...at, '--json'])).status, 'active');

  // Refused: --json never prompts (usage, 2); a wrong confirmation deletes nothing (1).
  const noConfirm = await iam(db, ['clients', 'delete', cid, ...at, '--json']);
  t.is(noConfirm.code, 2);
  t.regex(noConfirm.stdout + noConfirm.stderr, /confirmation_required/);
  const wrong = await iam(db, ['clients', 'delete', cid, ...at], {}, { stdin: 'not-it\n' });
  t.is(wrong.code, 1);
  t.regex(wrong.stderr, /does not match/);
  t.truthy(await directory.scope(tenant).clients.getByClientId(cid));

  const deleted = await iam(db, ['clients', 'delete', cid, ...at], {}, { stdin: `${cid}\n` });
  t.is(deleted.code, 0, deleted.stderr);
  t.is(await directory.scope(tenant).clients.getByClientId(cid), null);
  t.is((await iam(db, ['clients', 'get', cid, ...at])).code, 1);
  await ds.destroy();
});

test('client_ids never start with a dash; one that does (an older client) is named after `--`', async (t) => {
  // One base64url id in 64 began with `-`, and the CLI read it as an unknown flag.
  for (let i = 0; i < 2000; i++) t.false(newClientId().startsWith('-'));

  const db = await testDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  const tenant = (await activeTenant(provisioning, { name: 'CLI dash' }, actor)).id;
  const created = await directory.createClient(tenant, { name: 'svc', grant_types: ['client_credentials'] }, actor);
  const dashed = `-${created.client.client_id.slice(1)}`;
  await ds.query('UPDATE clients SET client_id = ? WHERE id = ?', [dashed, created.client.id]);

  const asFlag = await iam(db, ['clients', 'get', dashed, '--tenant', tenant, '--json']);
  t.is(asFlag.code, 2);
  t.regex(asFlag.stdout, /Nonexistent flag/);
  const got = await iam(db, ['clients', 'get', '--tenant', tenant, '--json', '--', dashed]);
  t.is(got.code, 0, got.stderr);
  t.is(JSON.parse(got.stdout).client_id, dashed);
  await ds.destroy();
});
