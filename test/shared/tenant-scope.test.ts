/**
 * The repository layer is the tenant isolation boundary: a scope bound to tenant A cannot
 * read, list or find tenant B's rows, even when it is handed B's ids.
 */
import test from 'ava';
import { testDatabase } from '../helpers/db.js';
import { openServices, activeTenant } from '../helpers/seed.js';

test('tenant A\'s repository calls cannot read tenant B\'s rows', async (t) => {
  const db = await testDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const actor = { type: 'system' as const, id: 'test' };
  const a = await activeTenant(provisioning, { name: 'A' }, actor);
  const b = await activeTenant(provisioning, { name: 'B' }, actor);
  const bClient = (await directory.createClient(b.id, { name: 'b-app', redirect_uris: ['https://b.example/cb'] }, actor)).client;
  const bUser = await directory.createUser(b.id, { email: 'shared@example.com', name: 'B user' }, actor);
  const aUser = await directory.createUser(a.id, { email: 'shared@example.com', name: 'A user' }, actor);

  const scopeA = directory.scope(a.id);
  t.is(await scopeA.clients.get(bClient.id), null);
  t.is(await scopeA.clients.getByClientId(bClient.client_id), null);
  t.deepEqual(await scopeA.clients.list(), []);
  t.is(await scopeA.users.get(bUser.id), null);
  // Same email in both tenants: A's lookup finds A's user, never B's.
  t.is((await scopeA.users.getByEmail('shared@example.com'))!.id, aUser.id);
  t.deepEqual((await scopeA.users.list()).map((u) => u.id), [aUser.id]);
  t.false((await scopeA.audit.list()).some((e) => e.tenant_id !== a.id));

  // And B's scope sees B's rows, so the empty results above are isolation, not absence.
  const scopeB = directory.scope(b.id);
  t.is((await scopeB.clients.get(bClient.id))!.client_id, bClient.client_id);
  t.is((await scopeB.users.get(bUser.id))!.name, 'B user');
  t.true((await scopeB.audit.list()).some((e) => e.action === 'client.create'));
});

test('the audit log is append-only in the database itself', async (t) => {
  const db = await testDatabase(t);
  const { ds, directory } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  await directory.createTenant({ name: 'Audited' }, { type: 'system', id: 'test' });
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
  const { client, client_secret } = await directory.createClient(ten.id, { name: 'svc', grant_types: ['client_credentials'], scopes: ['iam.admin'] }, actor);
  const [row] = await ds.query('SELECT secret_hash FROM clients WHERE id = ?', [client.id]);
  t.not(row.secret_hash, client_secret);
  t.false(String(row.secret_hash).includes(client_secret!));
  const full = (await directory.scope(ten.id).clients.get(client.id))!;
  t.true(directory.verifyClientSecret(full, client_secret!));
  t.false(directory.verifyClientSecret(full, client_secret! + 'x'));
  t.false(directory.verifyClientSecret(full, ''));
});

test('signing keys: private part sealed at rest; rotation keeps the old key published as retiring', async (t) => {
  const db = await testDatabase(t);
  const { ds, config } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const { KeyService } = await import('../../shared/services/keys.js');
  const keys = new KeyService(ds, config.secretKey, 3600);
  const first = await keys.ensureActive();
  t.is(first.alg, 'ES256');
  const [row] = await ds.query('SELECT private_jwk_sealed FROM signing_keys WHERE kid = ?', [first.kid]);
  t.false(String(row.private_jwk_sealed).includes('"d"'), 'the private JWK is not stored in the clear');
  const r = await keys.rotate({ type: 'system', id: 'test' });
  t.not(r.active.kid, first.kid);
  t.deepEqual(r.retiring.map((k) => k.kid), [first.kid]);
  const jwks = await keys.publicJwks();
  t.deepEqual(jwks.keys.map((k) => k.kid).sort(), [first.kid, r.active.kid].sort());
  t.false(jwks.keys.some((k) => 'd' in k), 'no private member is published');
  t.is((await keys.signingKey()).kid, r.active.kid);
  // A key sealed under another secret key cannot be opened.
  const other = new KeyService(ds, 'another-secret-key-that-is-long-enough-000', 3600);
  await t.throwsAsync(() => other.signingKey());
});
