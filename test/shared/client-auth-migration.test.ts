/**
 * Migration 0013 (client authentication methods) on a database that already has clients:
 * undone, then applied again, it gives every confidential client client_secret_basic and every
 * public client none (docs/oauth.md, "Client authentication"), and no keys.
 */
import test from 'ava';
import { migrations } from '../../migrations/index.js';
import { ClientAuth1763769600013 } from '../../migrations/0013-client-auth.js';
import { migrate } from '../../shared/db/data-source.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

test('existing clients get client_secret_basic (confidential) or none (public), and no keys', async (t) => {
  const db = await testDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  try {
    const actor = { type: 'system' as const, id: 'test' };
    const tenant = await activeTenant(provisioning, { name: 'Before 0013' }, actor);
    const cc = { grant_types: ['client_credentials'], scopes: ['api'] };
    const conf = await directory.createClient(
      tenant.id,
      { name: 'conf', ...cc, token_endpoint_auth_method: 'client_secret_post' },
      actor,
    );
    const pub = await directory.createClient(
      tenant.id,
      { name: 'pub', public: true, redirect_uris: ['https://app.example.com/cb'] },
      actor,
    );

    // Undo 0013 and every migration after it, newest first, then apply them again.
    const fromThis = migrations.slice(migrations.indexOf(ClientAuth1763769600013)).map((m) => m.name);
    for (let i = 0; i < fromThis.length; i++) await ds.undoLastMigration({ transaction: 'each' });
    const columns = await ds.query<Record<string, unknown>[]>('SELECT * FROM clients');
    t.false('token_endpoint_auth_method' in columns[0], 'undone: the column is gone');
    t.deepEqual(await migrate(ds), fromThis);

    const rows = await ds.query<{ client_id: string; m: string; jwks: unknown; jwks_uri: unknown }[]>(
      'SELECT client_id, token_endpoint_auth_method AS m, jwks, jwks_uri FROM clients WHERE tenant_id = ?',
      [tenant.id],
    );
    const method = (id: string) => rows.find((r) => r.client_id === id)?.m;
    t.is(method(conf.client.client_id), 'client_secret_basic');
    t.is(method(pub.client.client_id), 'none');
    t.true(rows.every((r) => r.jwks === null && r.jwks_uri === null));
  } finally {
    await ds.destroy();
  }
});
