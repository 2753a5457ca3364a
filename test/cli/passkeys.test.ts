/**
 * `iam users passkeys list|remove`, run as the real executable on a real database: the same
 * records as the admin API (public data only), --json output, not_found for an unknown user or
 * another user's passkey, and the `passkey.remove` audit event naming the operator (cli).
 */
import test from 'ava';
import type { LoginUser } from '../../shared/repositories/index.js';
import { PasskeyService } from '../../shared/services/auth/passkeys.js';
import { iam, iamJson } from '../helpers/cli.js';
import { TEST_SECRET_KEY, testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';
import { registerPasskey, SoftAuthenticator } from '../helpers/soft-authenticator.js';

const actor = { type: 'system' as const, id: 'test' };
const issuer = 'http://localhost:8080';

test('help: both commands show their flags and examples', async (t) => {
  const db = { url: 'sqlite:/nonexistent/never-opened.db', dir: '/nonexistent' };
  const topic = await iam(db, ['users', 'passkeys', '--help']);
  t.is(topic.code, 0, topic.stderr);
  t.regex(topic.stdout, /users passkeys list\s+\S/);
  t.regex(topic.stdout, /users passkeys remove\s+\S/);
  const remove = await iam(db, ['users', 'passkeys', 'remove', '--help']);
  t.is(remove.code, 0, remove.stderr);
  for (const flag of ['--tenant', '--user', '--json', 'PASSKEY']) t.true(remove.stdout.includes(flag), flag);
  t.regex(remove.stdout, /EXAMPLES[\s\S]*\$ iam users passkeys remove --tenant/);
});

test('list and remove a user’s passkeys; refusals name what was not found', async (t) => {
  const db = await testDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const svc = new PasskeyService(ds, { issuer, secretKey: TEST_SECRET_KEY });
  const tenant = await activeTenant(provisioning, { name: 'Passkeys CLI' }, actor);
  const users: LoginUser[] = [];
  for (const email of ['ann@example.com', 'ben@example.com']) {
    const u = await directory.createUser(tenant.id, { email, name: email }, actor);
    users.push({ id: u.id, tenant_id: tenant.id, email: u.email, name: u.name, status: 'active' });
  }
  const register = (user: LoginUser, name: string) => registerPasskey(svc, user, new SoftAuthenticator(issuer), name);
  const [ann, ben] = users;
  const annKey = await register(ann, 'Lost phone');
  const benKey = await register(ben, 'Ben key');
  const T = ['--tenant', tenant.id];

  try {
    const list = await iamJson(db, ['users', 'passkeys', 'list', ...T, '--user', ann.id]);
    t.deepEqual(list, {
      passkeys: [
        {
          id: annKey.id,
          user_id: ann.id,
          name: 'Lost phone',
          credential_id: annKey.credentialId,
          device_type: 'singleDevice',
          backed_up: false,
          transports: annKey.transports,
          aaguid: annKey.aaguid,
          created_at: new Date(annKey.createdAt).toISOString(), // --json times are ISO 8601
          last_used_at: null,
        },
      ],
    });
    const human = await iam(db, ['users', 'passkeys', 'list', ...T, '--user', ann.id]);
    t.is(human.code, 0);
    t.regex(human.stdout, new RegExp(`${annKey.id}\\s+device-bound\\s+.*Lost phone`));

    const unknownUser = await iam(db, ['users', 'passkeys', 'list', ...T, '--user', 'usr_nope', '--json']);
    t.is(unknownUser.code, 1);
    t.is(JSON.parse(unknownUser.stdout).error, 'not_found');
    const unknownTenant = await iam(db, ['users', 'passkeys', 'list', '--tenant', 'ten_nope', '--user', ann.id]);
    t.is(unknownTenant.code, 1);
    t.regex(unknownTenant.stderr, /--tenant: no tenant with id "ten_nope"/);
    const noUser = await iam(db, ['users', 'passkeys', 'list', ...T]);
    t.is(noUser.code, 2, 'a missing required flag is a usage error');

    // Ben's passkey is not Ann's: not found, and left alone.
    const cross = await iam(db, ['users', 'passkeys', 'remove', ...T, '--user', ann.id, benKey.id, '--json']);
    t.is(cross.code, 1);
    t.like(JSON.parse(cross.stdout), { error: 'not_found' });
    t.is((await svc.list(tenant.id, ben.id)).length, 1);

    const removed = await iamJson(db, ['users', 'passkeys', 'remove', ...T, '--user', ann.id, annKey.id]);
    t.deepEqual(removed, { removed: true, id: annKey.id, user_id: ann.id });
    t.deepEqual(await svc.list(tenant.id, ann.id), []);
    const again = await iam(db, ['users', 'passkeys', 'remove', ...T, '--user', ann.id, annKey.id]);
    t.is(again.code, 1);
    t.regex(again.stderr, new RegExp(`no passkey "${annKey.id}" of user "${ann.id}"`));
    const empty = await iam(db, ['users', 'passkeys', 'list', ...T, '--user', ann.id]);
    t.regex(empty.stdout, /has no passkeys/);

    const events = await ds.query<{ actor_type: string }[]>(
      "SELECT actor_type FROM audit_events WHERE target_id = ? AND action = 'passkey.remove'",
      [annKey.id],
    );
    t.deepEqual(
      events.map((e) => e.actor_type),
      ['cli'],
    );
  } finally {
    await ds.destroy();
  }
});
