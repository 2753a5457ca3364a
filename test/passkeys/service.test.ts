/**
 * PasskeyService against a real database, with a software authenticator: registration (step-up,
 * several passkeys, user handle), discoverable sign-in with hwk/swk, single-use and expiring
 * challenges, the counter policy, exact origins and RP ID, and that only the owner renames or
 * removes a passkey.
 */
import test from 'ava';
import type { Database } from '../../shared/db/index.js';
import type { LoginUser } from '../../shared/repositories/index.js';
import {
  ACR_PASSKEY_HARDWARE,
  ACR_PASSKEY_SYNCED,
  PASSKEY_TOMBSTONE_TTL_MS,
  PasskeyRefused,
  PasskeyService,
  STEP_UP_MAX_AGE_MS,
} from '../../shared/services/auth/passkeys.js';
import { ApiError } from '../../shared/errors.js';
import { buildExport } from '../../shared/services/data-export.js';
import { purgeExpiredAuth } from '../../shared/services/auth/purge.js';
import { createTestDatabase, TEST_SECRET_KEY, type TestDb } from '../helpers/db.js';
import { seedApp, type App } from '../helpers/oauth.js';
import { openServices } from '../helpers/seed.js';
import { registerPasskey, SoftAuthenticator } from '../helpers/soft-authenticator.js';

const ISSUER = 'http://localhost:4455';
let db: TestDb;
let app: App;
/** A second tenant on the same issuer, hence the same RP ID. */
let appB: App;
let ds: Database;
let svc: PasskeyService;
let n = 0;

test.before(async () => {
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  appB = await seedApp(db.url, db.dir);
  ds = (await openServices(db.url, db.dir)).ds;
  svc = new PasskeyService(ds, { issuer: ISSUER, secretKey: TEST_SECRET_KEY });
});
test.after.always(async () => {
  await ds?.destroy();
  await db?.drop();
});

async function newUser(): Promise<LoginUser> {
  const { ds: d, directory } = await openServices(db.url, db.dir);
  try {
    const u = await directory.createUser(
      app.tenantId,
      { email: `pk${++n}-${Date.now()}@example.com`, name: `Passkey ${n}` },
      { type: 'system', id: 'test' },
    );
    return { id: u.id, tenant_id: app.tenantId, email: u.email, name: u.name, status: 'active' };
  } finally {
    await d.destroy();
  }
}

const register = (user: LoginUser, auth: SoftAuthenticator, name = 'Laptop') =>
  registerPasskey(svc, user, auth, name, `sess-${user.id}`);

async function signIn(auth: SoftAuthenticator, over: Parameters<SoftAuthenticator['assert']>[1] = {}, at: App = app) {
  const o = await svc.authenticationOptions({ tenantId: at.tenantId, clientId: at.web.clientId });
  return svc.verifyAuthentication({
    tenantId: at.tenantId,
    clientId: at.web.clientId,
    challengeId: o.challengeId,
    response: auth.assert(o.options, over),
  });
}

test('RP ID and origin come from the issuer', (t) => {
  t.is(svc.rpId, 'localhost');
  t.is(svc.origin, ISSUER);
});

test('registration options: discoverable, none attestation, opaque user handle, existing passkeys excluded', async (t) => {
  const user = await newUser();
  const first = await svc.registrationOptions({ user, sessionId: 's1', authTime: Date.now() });
  t.is(first.options.rp.id, 'localhost');
  t.is(first.options.attestation, 'none');
  t.is(first.options.authenticatorSelection?.residentKey, 'required');
  t.is(first.options.authenticatorSelection?.userVerification, 'preferred');
  t.not(first.options.user.id, user.id);
  t.false(Buffer.from(first.options.user.id, 'base64url').toString('utf8').includes(user.email));
  t.deepEqual(first.options.excludeCredentials, []);
  const auth = new SoftAuthenticator(ISSUER);
  await register(user, auth);
  const second = await svc.registrationOptions({ user, sessionId: 's1', authTime: Date.now() });
  t.deepEqual(
    second.options.excludeCredentials?.map((c) => c.id),
    [auth.credentialId],
  );
  t.is(second.options.user.id, first.options.user.id, 'the same user handle for every passkey of a user');
});

test('a registered passkey signs in: hwk without backup, swk when synced', async (t) => {
  const user = await newUser();
  const hw = new SoftAuthenticator(ISSUER, {}, 1);
  const view = await register(user, hw, 'Security key');
  t.is(view.deviceType, 'singleDevice');
  t.false(view.backedUp);
  t.false('publicKey' in view);
  const a = await signIn(hw);
  t.is(a.signIn.user.id, user.id);
  t.is(a.signIn.acr, ACR_PASSKEY_HARDWARE);
  t.deepEqual(a.signIn.amr, ['hwk', 'user']);
  t.is(a.signIn.passkey.id, view.id);

  const synced = new SoftAuthenticator(ISSUER, { backupEligible: true, backedUp: true });
  const v2 = await register(user, synced, 'Phone');
  t.is(v2.deviceType, 'multiDevice');
  const b = await signIn(synced);
  t.is(b.signIn.acr, ACR_PASSKEY_SYNCED);
  t.deepEqual(b.signIn.amr, ['swk', 'user']);

  const list = await svc.list(app.tenantId, user.id);
  t.deepEqual(list.map((k) => k.name).sort(), ['Phone', 'Security key']);
  t.true(list.every((k) => k.lastUsedAt !== null));
});

test("the proof is spent in the caller's transaction: rolled back with it, the use is not recorded", async (t) => {
  const user = await newUser();
  const auth = new SoftAuthenticator(ISSUER);
  await register(user, auth);
  const o = await svc.authenticationOptions({ tenantId: app.tenantId, clientId: app.web.clientId });
  const proof = await svc.prove({
    tenantId: app.tenantId,
    clientId: app.web.clientId,
    challengeId: o.challengeId,
    response: auth.assert(o.options),
  });
  t.is(proof.signIn.user.id, user.id);
  t.is(proof.passkeyId, proof.signIn.passkey.id);
  await t.throwsAsync(
    ds.transaction(async (tx) => {
      t.deepEqual(await proof.spend(tx), { user: proof.signIn.user });
      throw new Error('the sign-in failed after the proof');
    }),
    { message: 'the sign-in failed after the proof' },
  );
  t.is((await svc.list(app.tenantId, user.id))[0].lastUsedAt, null);
  t.deepEqual(await ds.transaction((tx) => proof.spend(tx)), { user: proof.signIn.user });
  t.not((await svc.list(app.tenantId, user.id))[0].lastUsedAt, null);
});

test('a credential the tenant never registered is refused without the unknown-credential signal', async (t) => {
  const stranger = new SoftAuthenticator(ISSUER);
  const e = await t.throwsAsync(signIn(stranger), { instanceOf: PasskeyRefused });
  t.false(e.unknownCredential);
  t.is(e.status, 400);
  t.is(e.error, 'invalid_grant');
  t.is(e.message, 'This passkey is not registered with this service.');
  t.deepEqual(e.extra, {});
});

test("another tenant's passkey (same RP ID) is refused here without the signal, and still works at home", async (t) => {
  const user = await newUser();
  const auth = new SoftAuthenticator(ISSUER);
  await register(user, auth);
  const e = await t.throwsAsync(signIn(auth, {}, appB), { instanceOf: PasskeyRefused });
  t.is(e.error, 'invalid_grant');
  t.false(e.unknownCredential, 'tenant B must not tell the browser to delete tenant A’s passkey');
  t.deepEqual(e.extra, {});
  // Even after tenant A removes it, tenant B has no tombstone for it: still no signal at B.
  const home = await signIn(auth);
  t.is(home.signIn.user.id, user.id);
  t.true(await svc.remove(app.tenantId, user.id, home.signIn.passkey.id));
  t.false((await t.throwsAsync(signIn(auth, {}, appB), { instanceOf: PasskeyRefused })).unknownCredential);
  t.true((await t.throwsAsync(signIn(auth), { instanceOf: PasskeyRefused })).unknownCredential);
});

test('a removed passkey gets the signal until its tombstone expires; the auth purge then deletes it', async (t) => {
  const user = await newUser();
  const auth = new SoftAuthenticator(ISSUER);
  const view = await register(user, auth);
  t.true(await svc.remove(app.tenantId, user.id, view.id));
  const [tomb] = await ds.query<{ removed_at: number | string; expires_at: number | string }[]>(
    'SELECT removed_at, expires_at FROM passkey_tombstones WHERE tenant_id = ? AND passkey_id = ?',
    [app.tenantId, view.id],
  );
  t.is(Number(tomb.expires_at) - Number(tomb.removed_at), PASSKEY_TOMBSTONE_TTL_MS);
  const live = await t.throwsAsync(signIn(auth), { instanceOf: PasskeyRefused });
  t.true(live.unknownCredential);
  t.deepEqual(live.extra, { webauthn_signal: { unknown_credential: true } });
  t.true(await svc.removedRecently(app.tenantId, view.id));

  // Past its bound (the purge has not run yet): refused like a credential never known.
  const now = Date.now();
  await ds.query('UPDATE passkey_tombstones SET expires_at = ? WHERE passkey_id = ?', [now - 1, view.id]);
  const expired = await t.throwsAsync(signIn(auth), { instanceOf: PasskeyRefused });
  t.false(expired.unknownCredential);
  t.deepEqual(expired.extra, {});
  t.false(await svc.removedRecently(app.tenantId, view.id));

  const counts = await purgeExpiredAuth(ds, undefined, now);
  t.true(counts.passkey_tombstones >= 1);
  const left = await ds.query<unknown[]>('SELECT passkey_id FROM passkey_tombstones WHERE passkey_id = ?', [view.id]);
  t.is(left.length, 0);
});

test('a credential registered again after its removal signs in; removed again, its tombstone is replaced', async (t) => {
  const user = await newUser();
  const auth = new SoftAuthenticator(ISSUER);
  const first = await register(user, auth);
  t.true(await svc.remove(app.tenantId, user.id, first.id));
  const second = await register(user, auth, 'Again');
  t.is(second.credentialId, first.credentialId);
  t.is((await signIn(auth)).signIn.passkey.id, second.id);
  t.true(await svc.remove(app.tenantId, user.id, second.id));
  const rows = await ds.query<{ passkey_id: string }[]>(
    'SELECT passkey_id FROM passkey_tombstones WHERE tenant_id = ? AND passkey_id IN (?, ?)',
    [app.tenantId, first.id, second.id],
  );
  t.deepEqual(
    rows.map((r) => r.passkey_id),
    [second.id],
  );
  t.true((await t.throwsAsync(signIn(auth), { instanceOf: PasskeyRefused })).unknownCredential);
});

test('a removed passkey is unknown; only its owner can rename or remove it', async (t) => {
  const owner = await newUser();
  const other = await newUser();
  const auth = new SoftAuthenticator(ISSUER);
  const view = await register(owner, auth);
  t.false(await svc.rename(app.tenantId, other.id, view.id, 'Mine now'));
  t.false(await svc.remove(app.tenantId, other.id, view.id));
  t.true(await svc.rename(app.tenantId, owner.id, view.id, 'Renamed'));
  t.is((await svc.list(app.tenantId, owner.id))[0].name, 'Renamed');
  t.true(await svc.stillRegistered(app.tenantId, view.id));
  t.true(await svc.remove(app.tenantId, owner.id, view.id));
  t.false(await svc.stillRegistered(app.tenantId, view.id));
  const e = await t.throwsAsync(signIn(auth), { instanceOf: PasskeyRefused });
  t.true(e.unknownCredential);
});

test('a challenge is single use and expires', async (t) => {
  const user = await newUser();
  const auth = new SoftAuthenticator(ISSUER);
  await register(user, auth);
  const o = await svc.authenticationOptions({ tenantId: app.tenantId, clientId: app.web.clientId });
  const req = { tenantId: app.tenantId, clientId: app.web.clientId, challengeId: o.challengeId };
  await svc.verifyAuthentication({ ...req, response: auth.assert(o.options) });
  const replay = await t.throwsAsync(svc.verifyAuthentication({ ...req, response: auth.assert(o.options) }), {
    instanceOf: PasskeyRefused,
  });
  t.regex(replay.message, /challenge_id/);

  const o2 = await svc.authenticationOptions({ tenantId: app.tenantId, clientId: app.web.clientId });
  await ds.query('UPDATE webauthn_challenges SET expires_at = ? WHERE id = ?', [Date.now() - 1, o2.challengeId]);
  await t.throwsAsync(
    svc.verifyAuthentication({ ...req, challengeId: o2.challengeId, response: auth.assert(o2.options) }),
    { instanceOf: PasskeyRefused, message: /challenge_id/ },
  );
  // A challenge of another client is not this one's.
  const o3 = await svc.authenticationOptions({ tenantId: app.tenantId, clientId: app.native.clientId });
  await t.throwsAsync(
    svc.verifyAuthentication({ ...req, challengeId: o3.challengeId, response: auth.assert(o3.options) }),
    { instanceOf: PasskeyRefused, message: /challenge_id/ },
  );
});

test('the counter must grow; 0 and 0 is an authenticator that does not count', async (t) => {
  const user = await newUser();
  const counting = new SoftAuthenticator(ISSUER, {}, 5);
  const view = await register(user, counting);
  await signIn(counting, { counter: 6 });
  const equal = await t.throwsAsync(signIn(counting, { counter: 6 }), { instanceOf: PasskeyRefused });
  t.regex(equal.message, /possibly cloned authenticator/);
  const lower = await t.throwsAsync(signIn(counting, { counter: 2 }), { instanceOf: PasskeyRefused });
  t.regex(lower.message, /possibly cloned authenticator/);
  const zero = await t.throwsAsync(signIn(counting, { counter: 0 }), { instanceOf: PasskeyRefused });
  t.regex(zero.message, /possibly cloned authenticator/);
  await signIn(counting, { counter: 7 });
  const events = await ds.query<{ outcome: string }[]>(
    "SELECT outcome, target_id FROM audit_events WHERE action = 'passkey.counter_regression' AND target_id = ?",
    [view.id],
  );
  t.is(events.length, 3);
  t.true(events.every((e) => e.outcome === 'failure'));

  const nonCounting = new SoftAuthenticator(ISSUER);
  await register(user, nonCounting);
  await signIn(nonCounting, { counter: 0 });
  await signIn(nonCounting, { counter: 0 });
  t.pass();
});

test('origins are compared exactly and the RP ID hash must be ours', async (t) => {
  const user = await newUser();
  const auth = new SoftAuthenticator(ISSUER);
  await register(user, auth);
  for (const origin of [
    'http://localhost:4456',
    'https://localhost:4455',
    'http://localhost:4455.evil.test',
    'http://evil.localhost:4455',
    'http://localhost',
  ]) {
    const e = await t.throwsAsync(signIn(auth, { origin }), { instanceOf: PasskeyRefused });
    t.regex(e.message, /origin/, origin);
  }
  const rp = await t.throwsAsync(signIn(auth, { rpId: 'example.com' }), { instanceOf: PasskeyRefused });
  t.regex(rp.message, /RP ID/);
  await t.throwsAsync(signIn(auth, { up: false }), { instanceOf: PasskeyRefused, message: /not present/ });
  await t.throwsAsync(signIn(auth, { userHandle: Buffer.from('someone else').toString('base64url') }), {
    instanceOf: PasskeyRefused,
    message: /userHandle/,
  });
  // Without a user handle (an authenticator may omit it) the credential id alone decides.
  const ok = await signIn(auth, { userHandle: null });
  t.is(ok.signIn.user.id, user.id);
});

test('registration needs a recent sign-in and a fresh challenge of the same session', async (t) => {
  const user = await newUser();
  const stale = Date.now() - STEP_UP_MAX_AGE_MS - 1000;
  const e = await t.throwsAsync(svc.registrationOptions({ user, sessionId: 's', authTime: stale }), {
    instanceOf: ApiError,
  });
  t.is(e.status, 403);
  t.is(e.error, 'step_up_required');
  const o = await svc.registrationOptions({ user, sessionId: 's', authTime: Date.now() });
  const auth = new SoftAuthenticator(ISSUER);
  const response = auth.register(o.options);
  const late = await t.throwsAsync(
    svc.verifyRegistration({ user, sessionId: 's', authTime: stale, challengeId: o.challengeId, name: 'x', response }),
    { instanceOf: ApiError },
  );
  t.is(late.error, 'step_up_required');
  await t.throwsAsync(
    svc.verifyRegistration({
      user,
      sessionId: 'another',
      authTime: Date.now(),
      challengeId: o.challengeId,
      name: 'x',
      response,
    }),
    { instanceOf: PasskeyRefused, message: /challenge_id/ },
  );
  const bad = await t.throwsAsync(
    svc.verifyRegistration({
      user,
      sessionId: 's',
      authTime: Date.now(),
      challengeId: o.challengeId,
      name: ' ',
      response,
    }),
    { instanceOf: ApiError },
  );
  t.regex(bad.message, /name/);
  // Wrong origin at registration.
  const o2 = await svc.registrationOptions({ user, sessionId: 's', authTime: Date.now() });
  await t.throwsAsync(
    svc.verifyRegistration({
      user,
      sessionId: 's',
      authTime: Date.now(),
      challengeId: o2.challengeId,
      name: 'x',
      response: auth.register(o2.options, { origin: 'http://127.0.0.1:4455' }),
    }),
    { instanceOf: PasskeyRefused, message: /origin/ },
  );
  t.deepEqual(await svc.list(app.tenantId, user.id), []);
});

test('the data export lists the passkeys, public data only', async (t) => {
  const user = await newUser();
  const auth = new SoftAuthenticator(ISSUER, { backupEligible: true, backedUp: true });
  const view = await register(user, auth, '=Phone');
  const data = JSON.parse(await buildExport(ds, app.tenantId, user.id, ['passkeys'], 'json')) as {
    passkeys: Record<string, unknown>[];
  };
  t.deepEqual(data.passkeys, [
    {
      id: view.id,
      name: '=Phone',
      credential_id: auth.credentialId,
      device_type: 'multiDevice',
      backed_up: true,
      transports: ['internal', 'hybrid'],
      aaguid: '00000000-0000-0000-0000-000000000000',
      created_at: view.createdAt,
      last_used_at: null,
    },
  ]);
  const [row] = await ds.query<{ public_key: string; user_handle: string }[]>(
    'SELECT public_key, user_handle FROM passkeys WHERE id = ?',
    [view.id],
  );
  const csv = (JSON.parse(await buildExport(ds, app.tenantId, user.id, ['passkeys'], 'csv')) as { csv: string }).csv;
  for (const text of [JSON.stringify(data), csv]) {
    t.false(text.includes(row.public_key), 'never the public key');
    t.false(text.includes(row.user_handle), 'never the user handle');
    t.false(/counter/.test(text));
  }
  t.true(csv.includes("'=Phone"), 'formula neutralised');
  t.true(csv.includes('internal hybrid'));
});

test('the auth purge deletes expired challenges and keeps live ones', async (t) => {
  const live = await svc.authenticationOptions({ tenantId: app.tenantId, clientId: app.web.clientId });
  const old = await svc.authenticationOptions({ tenantId: app.tenantId, clientId: app.web.clientId });
  const now = Date.now();
  await ds.query('UPDATE webauthn_challenges SET expires_at = ? WHERE id = ?', [now - 1, old.challengeId]);
  const counts = await purgeExpiredAuth(ds, undefined, now);
  t.true(counts.webauthn_challenges >= 1);
  const left = (await ds.query<{ id: string }[]>('SELECT id FROM webauthn_challenges')).map((r) => r.id);
  t.false(left.includes(old.challengeId));
  t.true(left.includes(live.challengeId));
});

test('two assertions with the same counter at once: exactly one passes', async (t) => {
  const user = await newUser();
  const auth = new SoftAuthenticator(ISSUER, {}, 1);
  await register(user, auth);
  const results = await Promise.allSettled([signIn(auth, { counter: 5 }), signIn(auth, { counter: 5 })]);
  t.is(results.filter((r) => r.status === 'fulfilled').length, 1);
  const refused = results.find((r) => r.status === 'rejected');
  t.true(refused?.reason instanceof PasskeyRefused);
  t.is((await svc.list(app.tenantId, user.id)).length, 1);
  const [row] = await ds.query<{ counter: number | string }[]>('SELECT counter FROM passkeys WHERE user_id = ?', [
    user.id,
  ]);
  t.is(Number(row.counter), 5);
});

test('registration and removal are audited; a disabled user cannot sign in with a passkey', async (t) => {
  const user = await newUser();
  const auth = new SoftAuthenticator(ISSUER);
  const view = await register(user, auth, 'Audited');
  const actions = async () =>
    (
      await ds.query<{ action: string; actor_id: string }[]>(
        "SELECT action, actor_id FROM audit_events WHERE target_id = ? AND action LIKE 'passkey.%'",
        [view.id],
      )
    )
      .map((r) => [r.action, r.actor_id])
      .sort();
  t.deepEqual(await actions(), [['passkey.register', user.id]]);

  await ds.query("UPDATE users SET status = 'disabled' WHERE id = ?", [user.id]);
  const e = await t.throwsAsync(signIn(auth), { instanceOf: ApiError });
  t.is(e.status, 403);
  t.is(e.error, 'user_disabled');
  await ds.query("UPDATE users SET status = 'active' WHERE id = ?", [user.id]);

  t.true(await svc.remove(app.tenantId, user.id, view.id));
  t.deepEqual(await actions(), [
    ['passkey.register', user.id],
    ['passkey.remove', user.id],
  ]);
});
