/**
 * `iam tenants token-exchange set|show`, run as the real executable: an ID-JAG issuance policy
 * and requireMayAct stored through the same service as the admin API, audited with the CLI as
 * the actor; an invalid target issuer names its field and stores nothing.
 */
import test from 'ava';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';
import { sql } from '../helpers/oauth.js';

const actor = { type: 'system' as const, id: 'test' };

test('set an issuance policy from stdin and --require-may-act, show it; an http target is refused', async (t) => {
  const db = await testDatabase(t);
  const { ds, provisioning } = await openServices(db.url, db.dir);
  const tenant = await activeTenant(provisioning, { name: 'Token exchange CLI' }, actor);
  await ds.destroy();
  const T = ['--tenant', tenant.id];
  const policy = {
    enabled: true,
    idJagIssuance: {
      enabled: true,
      maxLifetime: 60,
      trustedAuthorizationServers: [
        {
          issuer: 'https://as.chat.example',
          clients: [{ clientId: 'web', targetClientId: 'chat-web', scopes: ['chat.read'] }],
        },
      ],
    },
  };
  const set = await iam(
    db,
    ['tenants', 'token-exchange', 'set', ...T, '--file', '-', '--require-may-act', '--json'],
    {},
    {
      stdin: JSON.stringify(policy),
    },
  );
  t.is(set.code, 0, set.stderr);
  const stored = JSON.parse(set.stdout).settings;
  t.is(stored.requireMayAct, true);
  t.deepEqual(stored.idJagIssuance, policy.idJagIssuance);

  const shown = await iam(db, ['tenants', 'token-exchange', 'show', ...T]);
  t.is(shown.code, 0, shown.stderr);
  t.regex(shown.stdout, /to https:\/\/as\.chat\.example/);
  t.regex(shown.stdout, /web as chat-web: scopes chat\.read/);

  const bad = await iam(
    db,
    ['tenants', 'token-exchange', 'set', ...T, '--file', '-', '--json'],
    {},
    {
      stdin: JSON.stringify({
        idJagIssuance: { trustedAuthorizationServers: [{ issuer: 'http://as.x', clients: [] }] },
      }),
    },
  );
  t.is(bad.code, 1);
  t.regex(bad.stdout + bad.stderr, /idJagIssuance\.trustedAuthorizationServers\.0\.issuer/);
  const after = await iamJson(db, ['tenants', 'token-exchange', 'show', ...T]);
  t.is(after.settings.idJagIssuance.trustedAuthorizationServers[0].issuer, 'https://as.chat.example', 'nothing stored');
  const rows = (await sql(db.url, db.dir, 'SELECT actor_type FROM audit_events WHERE tenant_id = ? AND action = ?', [
    tenant.id,
    'tenant.token_exchange_settings.update',
  ])) as { actor_type: string }[];
  t.deepEqual(
    rows.map((r) => r.actor_type),
    ['cli'],
    'one audited change, by the CLI',
  );
});
