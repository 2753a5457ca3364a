/** The auth-purge job deletes pending upstream sign-ins once expired, and only those. */
import test from 'ava';
import { purgeAuth } from '../../daemon/jobs/auth-purge.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

test('expired upstream_login_states are purged, live ones kept', async (t) => {
  const db = await testDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const tenant = await activeTenant(provisioning, { name: 'P' }, { type: 'system', id: 'test' });
  const now = Date.now();
  for (const [id, expires] of [
    ['uls_old', now - 1000],
    ['uls_live', now + 600_000],
  ] as const)
    await directory.scope(tenant.id).upstreamLoginStates.insert({
      id,
      provider_id: 'uip_x',
      state_hash: `h-${id}`,
      auth_request_id: 'ar',
      binding: 'b',
      nonce: 'n',
      code_verifier_sealed: 'v',
      key_id: 'k',
      user_hint: null,
      created_at: now - 700_000,
      expires_at: expires,
    });
  const counts = await purgeAuth(ds, undefined, now);
  t.is(counts.upstream_login_states, 1);
  const left = await ds.query<{ id: string }[]>('SELECT id FROM upstream_login_states');
  t.deepEqual(
    left.map((r) => r.id),
    ['uls_live'],
  );
});
