/**
 * What the data layer holds for the service's safety: an append-only audit log, client secrets
 * only as keyed hashes, signing keys sealed at rest. Tenant isolation: tenant-isolation.test.ts.
 */
import test from 'ava';
import { testDatabase } from '../helpers/db.js';
import { openServices, activeTenant } from '../helpers/seed.js';

test('the audit log is append-only in the database itself', async (t) => {
  const db = await testDatabase(t);
  const { ds, provisioning } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  await provisioning.createTenant({ name: 'Audited' }, { type: 'system', id: 'test' });
  await t.throwsAsync(() => ds.query("UPDATE audit_events SET outcome = 'failure'"), { message: /append-only/ });
  await t.throwsAsync(() => ds.query('DELETE FROM audit_events'), { message: /append-only/ });
  const rows = await ds.query('SELECT outcome FROM audit_events');
  t.true(rows.length > 0 && rows.every((r: { outcome: string }) => r.outcome === 'success'));
});

test('client secrets are stored only as a keyed hash and verify in constant time', async (t) => {
  const db = await testDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const actor = { type: 'system' as const, id: 'test' };
  const ten = await activeTenant(provisioning, { name: 'T' }, actor);
  const { client, client_secret } = await directory.createClient(
    ten.id,
    { name: 'svc', grant_types: ['client_credentials'], scopes: ['iam.admin'] },
    actor,
  );
  const rows = await ds.query('SELECT secret_hash FROM client_secrets WHERE client_id = ?', [client.client_id]);
  t.is(rows.length, 1);
  t.not(rows[0].secret_hash, client_secret);
  t.false(String(rows[0].secret_hash).includes(client_secret!));
  const full = (await directory.scope(ten.id).clients.get(client.id))!;
  t.truthy(await directory.verifyClientSecret(full, client_secret!));
  t.is(await directory.verifyClientSecret(full, client_secret! + 'x'), null);
  t.is(await directory.verifyClientSecret(full, ''), null);
});

test('signing keys: private part sealed at rest; rotation keeps the old key published as retiring', async (t) => {
  const db = await testDatabase(t);
  const { ds, config } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const { KeyService } = await import('../../shared/services/keys.js');
  const keys = new KeyService(ds, config.secretKey, 3600);
  const first = await keys.ensureActive();
  t.is(first.alg, 'ES256');
  // One active key per algorithm offered (docs/oauth.md, "Signing algorithms").
  const before = (await keys.list()).filter((k) => k.status === 'active');
  t.deepEqual(before.map((k) => k.alg).sort(), ['ES256', 'EdDSA', 'PS256', 'RS256']);
  t.deepEqual((await keys.ensureActive()).kid, first.kid, 'ensureActive adds nothing when every key is there');
  t.is((await keys.list()).length, 4);
  for (const k of before) {
    const [row] = await ds.query('SELECT private_jwk_sealed FROM signing_keys WHERE kid = ?', [k.kid]);
    t.false(String(row.private_jwk_sealed).includes('"d"'), 'the private JWK is not stored in the clear');
  }
  const r = await keys.rotate({ type: 'system', id: 'test' });
  t.not(r.active.kid, first.kid);
  t.is(r.active.alg, 'ES256');
  t.deepEqual(r.active_keys.map((k) => k.alg).sort(), ['ES256', 'EdDSA', 'PS256', 'RS256']);
  t.deepEqual(r.retiring.map((k) => k.kid).sort(), before.map((k) => k.kid).sort());
  const jwks = await keys.publicJwks();
  t.deepEqual(jwks.keys.map((k) => k.kid).sort(), [...before, ...r.active_keys].map((k) => k.kid).sort());
  t.false(
    jwks.keys.some((k) => 'd' in k || 'p' in k),
    'no private member is published',
  );
  t.is((await keys.signingKey()).kid, r.active.kid);
  for (const k of r.active_keys) {
    const signer = await keys.signingKey(k.alg as 'ES256');
    t.is(signer.kid, k.kid);
    t.is(signer.alg, k.alg);
  }
  // A key sealed under another secret key cannot be opened.
  const other = new KeyService(ds, 'another-secret-key-that-is-long-enough-000', 3600);
  await t.throwsAsync(() => other.signingKey());
});
