/**
 * Migration 0036 (client secrets in their own table) on a database that already has clients:
 * undone, each client's newest live secret is back on its row; applied again, it moves to
 * `client_secrets` and still authenticates (docs/directory.md, "Clients").
 */
import test from 'ava';
import { ClientSecrets1763769600036 } from '../../migrations/0036-client-secrets.js';
import { migrations } from '../../migrations/index.js';
import { migrate } from '../../shared/db/data-source.js';
import { ClientLifecycleService } from '../../shared/services/client-lifecycle.js';
import { TEST_SECRET_KEY, testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

test('0036 down puts the newest live secret back on the client; up moves it to client_secrets', async (t) => {
  const db = await testDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  try {
    const actor = { type: 'system' as const, id: 'test' };
    const tenant = await activeTenant(provisioning, { name: 'Before 0036' }, actor);
    const c = await directory.createClient(tenant.id, { name: 'svc', grant_types: ['client_credentials'] }, actor);
    const lifecycle = new ClientLifecycleService(ds, TEST_SECRET_KEY, directory);
    const added = await lifecycle.addSecret(tenant.id, c.client.client_id, { old_secret_expires_in: 600 }, actor);
    const pub = await directory.createClient(
      tenant.id,
      { name: 'pub', public: true, redirect_uris: ['https://app.example.com/cb'] },
      actor,
    );

    const fromThis = migrations.slice(migrations.indexOf(ClientSecrets1763769600036)).map((m) => m.name);
    for (let i = 0; i < fromThis.length; i++) await ds.undoLastMigration({ transaction: 'each' });
    const rows = await ds.query<{ client_id: string; secret_hash: string | null }[]>(
      'SELECT client_id, secret_hash FROM clients WHERE tenant_id = ?',
      [tenant.id],
    );
    t.truthy(rows.find((r) => r.client_id === c.client.client_id)?.secret_hash);
    t.is(rows.find((r) => r.client_id === pub.client.client_id)?.secret_hash, null);

    t.deepEqual(await migrate(ds), fromThis);
    const secrets = await ds.query<{ client_id: string; expires_at: unknown }[]>(
      'SELECT client_id, expires_at FROM client_secrets WHERE tenant_id = ?',
      [tenant.id],
    );
    t.deepEqual(
      secrets.map((s) => [s.client_id, s.expires_at]),
      [[c.client.client_id, null]],
    );
    // The newest secret (the rotation's) is the one that came back; the old one is gone.
    t.truthy(await directory.verifyClientSecret(c.client, added.client_secret));
    t.is(await directory.verifyClientSecret(c.client, c.client_secret!), null);
  } finally {
    await ds.destroy();
  }
});
