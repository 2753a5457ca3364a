/**
 * /api/admin/tenants/{tenantId}/users/{id}/passkeys over HTTP against the real daemon: an
 * operator lists a user's passkeys (public data only) and removes one; 404 for an unknown user
 * or another user's passkey, 401 without a token, 403 for another tenant's admin; the audit
 * event names the operator; and the removed passkey can no longer sign in (the direct API
 * answers with the unknown-credential signal). Passkeys are registered through the service, with
 * the daemon's issuer and secret key, as test/passkeys/direct.test.ts does.
 */
import test from 'ava';
import type { Database } from '../../shared/db/index.js';
import type { LoginUser } from '../../shared/repositories/index.js';
import { SCOPE_PLATFORM, SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';
import { PasskeyService } from '../../shared/services/auth/passkeys.js';
import { createTestDatabase, TEST_SECRET_KEY, type TestDb } from '../helpers/db.js';
import { startLocalhostDaemon, type Daemon } from '../helpers/daemon.js';
import { pkce, seedApp, type App } from '../helpers/oauth.js';
import { activeTenant, clientCredentialsToken, openServices } from '../helpers/seed.js';
import { registerPasskey, SoftAuthenticator } from '../helpers/soft-authenticator.js';
import { api } from '../helpers/api.js';

let db: TestDb;
let d: Daemon;
let app: App;
let ds: Database;
let svc: PasskeyService;
let issuer: string;
let admin: string;
let platform: string;
let otherAdmin: string;
let otherTenantId: string;
let n = 0;
const actor = { type: 'system' as const, id: 'test' };

test.before(async () => {
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  ({ d, issuer } = await startLocalhostDaemon(db.url, db.dir));
  const services = await openServices(db.url, db.dir);
  ds = services.ds;
  svc = new PasskeyService(ds, { issuer, secretKey: TEST_SECRET_KEY });
  const other = await activeTenant(services.provisioning, { name: 'Other' }, actor);
  otherTenantId = other.id;
  const oa = await services.directory.createClient(
    other.id,
    { name: 'other admin', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN] },
    actor,
  );
  const p = await services.directory.createClient(
    app.tenantId,
    { name: 'platform', grant_types: ['client_credentials'], scopes: [SCOPE_PLATFORM] },
    actor,
  );
  admin = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);
  otherAdmin = await clientCredentialsToken(d.url, oa.client.client_id, oa.client_secret!);
  platform = await clientCredentialsToken(d.url, p.client.client_id, p.client_secret!);
});
test.after.always(async () => {
  await d?.stop();
  await ds?.destroy();
  await db?.drop();
});

async function newUser(tenantId = app.tenantId): Promise<LoginUser> {
  const { ds: conn, directory } = await openServices(db.url, db.dir);
  try {
    const u = await directory.createUser(
      tenantId,
      { email: `admin-pk${++n}-${Date.now()}@example.com`, name: `Admin pk ${n}` },
      actor,
    );
    return { id: u.id, tenant_id: tenantId, email: u.email, name: u.name, status: 'active' };
  } finally {
    await conn.destroy();
  }
}

const register = (auth: SoftAuthenticator, user: LoginUser, name = 'Test key') =>
  registerPasskey(svc, user, auth, name);

const call = (method: string, path: string, token?: string) => api(d.url, method, path, { token });
const listPath = (userId: string, tenantId = app.tenantId) => `/api/admin/tenants/${tenantId}/users/${userId}/passkeys`;

const post = (path: string, body: unknown) => api(d.url, 'POST', path, { body });

/** A passkey sign-in through the direct API: options -> assertion -> verify. */
async function signIn(auth: SoftAuthenticator) {
  const o = await post('/api/v1/auth/direct/passkey/options', { client_id: app.web.clientId });
  return post('/api/v1/auth/direct/passkey/verify', {
    client_id: app.web.clientId,
    challenge_id: o.body.challenge_id,
    credential: auth.assert(o.body.public_key as never),
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
  });
}

test('list: the user’s passkeys, newest first, public data only; none for a user without any', async (t) => {
  const user = await newUser();
  const first = await register(new SoftAuthenticator(issuer), user, 'Laptop');
  const second = await register(new SoftAuthenticator(issuer, { backupEligible: true, backedUp: true }), user, 'Phone');
  const r = await call('GET', listPath(user.id), admin);
  t.is(r.status, 200, JSON.stringify(r.body));
  t.deepEqual(Object.keys(r.body), ['passkeys']);
  t.deepEqual(
    r.body.passkeys.map((p: Record<string, unknown>) => [p.id, p.name, p.device_type, p.backed_up]),
    [
      [second.id, 'Phone', 'multiDevice', true],
      [first.id, 'Laptop', 'singleDevice', false],
    ],
  );
  t.like(r.body.passkeys[1], {
    user_id: user.id,
    credential_id: first.credentialId,
    aaguid: first.aaguid,
    created_at: first.createdAt,
    last_used_at: null,
  });
  t.true(Array.isArray(r.body.passkeys[1].transports));
  for (const p of r.body.passkeys as Record<string, unknown>[]) {
    t.deepEqual(Object.keys(p).sort(), [
      'aaguid',
      'backed_up',
      'created_at',
      'credential_id',
      'device_type',
      'id',
      'last_used_at',
      'name',
      'transports',
      'user_id',
    ]);
  }
  // The stored public key never appears in the answer.
  const [row] = await ds.query<{ public_key: string }[]>('SELECT public_key FROM passkeys WHERE id = ?', [first.id]);
  t.false(JSON.stringify(r.body).includes(row.public_key));

  const none = await call('GET', listPath((await newUser()).id), admin);
  t.is(none.status, 200);
  t.deepEqual(none.body, { passkeys: [] });
});

test('reach: 401 without a token, 403 for another tenant’s admin, 404 for no such user or tenant', async (t) => {
  const user = await newUser();
  const pk = await register(new SoftAuthenticator(issuer), user);
  t.is((await call('GET', listPath(user.id))).status, 401);
  t.is((await call('DELETE', `${listPath(user.id)}/${pk.id}`)).status, 401);

  const foreign = await call('GET', listPath(user.id), otherAdmin);
  t.is(foreign.status, 403);
  t.is(foreign.body.error, 'tenant_forbidden');
  const foreignDelete = await call('DELETE', `${listPath(user.id)}/${pk.id}`, otherAdmin);
  t.is(foreignDelete.status, 403);
  t.is(foreignDelete.body.error, 'tenant_forbidden');
  // Naming the other tenant in the path does not help: the user is not there.
  const wrongTenant = await call('GET', listPath(user.id, otherTenantId), otherAdmin);
  t.is(wrongTenant.status, 404);
  t.is(wrongTenant.body.error, 'not_found');
  t.is((await call('DELETE', `${listPath(user.id, otherTenantId)}/${pk.id}`, otherAdmin)).status, 404);

  const missing = await call('GET', listPath('usr_doesnotexist'), admin);
  t.is(missing.status, 404);
  t.is(missing.body.error, 'not_found');
  t.regex(missing.body.message, /usr_doesnotexist/);
  t.is((await call('GET', listPath(user.id, 'ten_doesnotexist'), platform)).status, 404);
  // A platform admin reaches the user's tenant.
  const viaPlatform = await call('GET', listPath(user.id), platform);
  t.is(viaPlatform.status, 200);
  t.is(viaPlatform.body.passkeys.length, 1);

  const tooLong = await call('DELETE', `${listPath(user.id)}/${'p'.repeat(41)}`, admin);
  t.is(tooLong.status, 400);
  t.is(tooLong.body.error, 'invalid_request');
  t.regex(tooLong.body.message, /passkeyId/);

  // The passkey is still there after every refusal.
  t.is((await svc.list(app.tenantId, user.id)).length, 1);
});

test('remove: 204, the audit event names the operator, 404 for another user’s or an unknown passkey', async (t) => {
  const alice = await newUser();
  const bob = await newUser();
  const alicePk = await register(new SoftAuthenticator(issuer), alice);
  const bobPk = await register(new SoftAuthenticator(issuer), bob);

  const cross = await call('DELETE', `${listPath(alice.id)}/${bobPk.id}`, admin);
  t.is(cross.status, 404);
  t.is(cross.body.error, 'not_found');
  t.is((await svc.list(app.tenantId, bob.id)).length, 1, 'another user’s passkey is untouched');
  t.is((await call('DELETE', `${listPath(alice.id)}/pk_doesnotexist`, admin)).status, 404);
  t.is((await call('DELETE', `${listPath('usr_doesnotexist')}/${alicePk.id}`, admin)).status, 404);

  const removed = await call('DELETE', `${listPath(alice.id)}/${alicePk.id}`, admin);
  t.is(removed.status, 204);
  t.deepEqual((await call('GET', listPath(alice.id), admin)).body, { passkeys: [] });
  t.is((await call('DELETE', `${listPath(alice.id)}/${alicePk.id}`, admin)).status, 404, 'already removed');

  const events = await ds.query<{ actor_type: string; actor_id: string }[]>(
    "SELECT actor_type, actor_id FROM audit_events WHERE target_id = ? AND action = 'passkey.remove'",
    [alicePk.id],
  );
  t.deepEqual(
    events.map((e) => [e.actor_type, e.actor_id]),
    [['client', app.admin.clientId]],
  );
});

test('a passkey removed by an operator can no longer sign in; the user’s other passkey still can', async (t) => {
  const user = await newUser();
  const lost = new SoftAuthenticator(issuer);
  const kept = new SoftAuthenticator(issuer);
  const lostPk = await register(lost, user, 'Lost phone');
  await register(kept, user, 'Security key');
  const before = await signIn(lost);
  t.is(before.status, 200, JSON.stringify(before.body));

  t.is((await call('DELETE', `${listPath(user.id)}/${lostPk.id}`, admin)).status, 204);
  const after = await signIn(lost);
  t.is(after.status, 400);
  t.is(after.body.error, 'invalid_grant');
  t.deepEqual(after.body.webauthn_signal, { unknown_credential: true });
  const other = await signIn(kept);
  t.is(other.status, 200, JSON.stringify(other.body));
});
