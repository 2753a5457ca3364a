/**
 * The direct passkey API over HTTP against the real daemon, with a software authenticator:
 * options -> verify -> direct-auth artifact -> POST /api/v1/auth/direct/session (acr/amr by
 * the backup flags, the session cookie), the unknown-credential signal at verify and at
 * redemption (a passkey removed in between), single-use and expiring challenges, the counter,
 * exact origins, and bodies refused with a 400 naming the field.
 *
 * Passkeys are registered through the service (the account page's endpoints are the pages
 * helper's), on the same database and with the daemon's issuer and secret key.
 */
import test from 'ava';
import type { Database } from '../../shared/db/index.js';
import type { LoginUser } from '../../shared/repositories/index.js';
import { PasskeyService } from '../../shared/services/auth/passkeys.js';
import { createTestDatabase, TEST_SECRET_KEY, type TestDb } from '../helpers/db.js';
import { startLocalhostDaemon, type Daemon } from '../helpers/daemon.js';
import { authorizeUrl, CookieJar, get, pkce, postJson, REDIRECT, seedApp, type App } from '../helpers/oauth.js';
import { openServices } from '../helpers/seed.js';
import { registerPasskey, SoftAuthenticator, type SoftOptions } from '../helpers/soft-authenticator.js';
import { api } from '../helpers/api.js';

let db: TestDb;
let d: Daemon;
let app: App;
/** A second tenant served by the same daemon: the same issuer, hence the same RP ID. */
let appB: App;
let ds: Database;
let svc: PasskeyService;
let issuer: string;
let n = 0;

test.before(async () => {
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  appB = await seedApp(db.url, db.dir);
  ({ d, issuer } = await startLocalhostDaemon(db.url, db.dir));
  ds = (await openServices(db.url, db.dir)).ds;
  svc = new PasskeyService(ds, { issuer, secretKey: TEST_SECRET_KEY });
});
test.after.always(async () => {
  await d?.stop();
  await ds?.destroy();
  await db?.drop();
});

async function newUser(): Promise<LoginUser> {
  const { ds: conn, directory } = await openServices(db.url, db.dir);
  try {
    const u = await directory.createUser(
      app.tenantId,
      { email: `direct-pk${++n}-${Date.now()}@example.com`, name: `Direct ${n}` },
      { type: 'system', id: 'test' },
    );
    return { id: u.id, tenant_id: app.tenantId, email: u.email, name: u.name, status: 'active' };
  } finally {
    await conn.destroy();
  }
}

/** A user with one registered passkey on `auth`; returns the passkey's view. */
async function registered(auth: SoftAuthenticator, user?: LoginUser) {
  const u = user ?? (await newUser());
  return { user: u, view: await registerPasskey(svc, u, auth) };
}

const post = (path: string, body: unknown) => api(d.url, 'POST', path, { body });

const options = (at: App = app) => post('/api/v1/auth/direct/passkey/options', { client_id: at.web.clientId });

/** options -> assertion -> verify (at `at`'s web client); returns the verify answer and the PKCE pair used. */
async function verify(auth: SoftAuthenticator, over: SoftOptions = {}, at: App = app) {
  const o = await options(at);
  const { verifier, challenge } = pkce();
  const r = await post('/api/v1/auth/direct/passkey/verify', {
    client_id: at.web.clientId,
    challenge_id: o.body.challenge_id,
    credential: auth.assert(o.body.public_key as never, over),
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  return { ...r, verifier, challengeId: o.body.challenge_id as string, publicKey: o.body.public_key };
}

const redeem = (artifact: string, verifier: string, at: App = app) =>
  post('/api/v1/auth/direct/session', {
    direct_auth_artifact: artifact,
    client_id: at.web.clientId,
    code_verifier: verifier,
    channel: 'browser',
    provider_id: 'passkey',
  });

test('options: a discoverable request for the issuer host, with a challenge id', async (t) => {
  const r = await options();
  t.is(r.status, 200);
  t.true(r.body.ok);
  t.regex(r.body.challenge_id, /^wac_/);
  t.is(r.body.public_key.rpId, 'localhost');
  t.is(r.body.public_key.userVerification, 'preferred');
  t.is(r.body.public_key.allowCredentials, undefined);
  t.is(typeof r.body.public_key.challenge, 'string');
  t.is(r.body.expires_in, 300);
});

test('a hardware-bound passkey signs in through the artifact: acr phrh, amr hwk+user, session cookie', async (t) => {
  const auth = new SoftAuthenticator(issuer, {}, 1);
  const { user } = await registered(auth);
  const v = await verify(auth);
  t.is(v.status, 200, JSON.stringify(v.body));
  t.true(v.body.ok);
  t.is(typeof v.body.direct_auth_artifact, 'string');
  t.is(v.body.expires_in, 120);
  const s = await redeem(v.body.direct_auth_artifact, v.verifier);
  t.is(s.status, 200, JSON.stringify(s.body));
  t.is(s.body.user.id, user.id);
  t.is(s.body.session.acr, 'phrh');
  t.deepEqual(s.body.session.amr, ['hwk', 'user']);
  t.true(s.headers.getSetCookie().some((c) => /HttpOnly/i.test(c)));
  // The artifact is single use.
  const again = await redeem(v.body.direct_auth_artifact, v.verifier);
  t.is(again.status, 400);
  t.is(again.body.error, 'invalid_grant');
});

test('a synced passkey (backup eligible and backed up) signs in with acr phr, amr swk+user', async (t) => {
  const auth = new SoftAuthenticator(issuer, { backupEligible: true, backedUp: true });
  await registered(auth);
  const v = await verify(auth);
  t.is(v.status, 200, JSON.stringify(v.body));
  const s = await redeem(v.body.direct_auth_artifact, v.verifier);
  t.is(s.status, 200, JSON.stringify(s.body));
  t.is(s.body.session.acr, 'phr');
  t.deepEqual(s.body.session.amr, ['swk', 'user']);
});

test('a credential the tenant never registered, at verify: 400 invalid_grant without webauthn_signal', async (t) => {
  const stranger = new SoftAuthenticator(issuer);
  const v = await verify(stranger);
  t.is(v.status, 400);
  t.is(v.body.error, 'invalid_grant');
  t.is(v.body.webauthn_signal, undefined);
});

test("a tenant-A passkey at tenant B's verify: the same refusal, without webauthn_signal", async (t) => {
  const auth = new SoftAuthenticator(issuer);
  const { user, view } = await registered(auth);
  const atB = await verify(auth, {}, appB);
  t.is(atB.status, 400);
  t.is(atB.body.error, 'invalid_grant');
  t.is(atB.body.error_description, 'This passkey is not registered with this service.');
  t.is(atB.body.webauthn_signal, undefined, "tenant B must not make the browser drop tenant A's passkey");
  // The passkey is fine at home.
  const atA = await verify(auth);
  t.is(atA.status, 200, JSON.stringify(atA.body));
  // Removed at A: A signals it, B (which has no tombstone for it) still does not.
  t.true(await svc.remove(app.tenantId, user.id, view.id));
  t.deepEqual((await verify(auth)).body.webauthn_signal, { unknown_credential: true });
  t.is((await verify(auth, {}, appB)).body.webauthn_signal, undefined);
});

test("a tenant-A passkey artifact redeemed with tenant B's client: refused by its bindings, no signal", async (t) => {
  // The passkey check at redemption is reached only with the artifact's own client (and so its
  // own tenant); another tenant's client fails the bindings first.
  const auth = new SoftAuthenticator(issuer);
  const { user, view } = await registered(auth);
  const v = await verify(auth);
  t.is(v.status, 200, JSON.stringify(v.body));
  t.true(await svc.remove(app.tenantId, user.id, view.id));
  const s = await redeem(v.body.direct_auth_artifact, v.verifier, appB);
  t.is(s.status, 400);
  t.is(s.body.error, 'invalid_grant');
  t.is(s.body.webauthn_signal, undefined);
});

test('a passkey removed before redemption whose tombstone is past its bound: refused without the signal', async (t) => {
  const auth = new SoftAuthenticator(issuer);
  const { user, view } = await registered(auth);
  const v = await verify(auth);
  t.is(v.status, 200, JSON.stringify(v.body));
  t.true(await svc.remove(app.tenantId, user.id, view.id));
  await ds.query('UPDATE passkey_tombstones SET expires_at = ? WHERE passkey_id = ?', [Date.now() - 1, view.id]);
  const s = await redeem(v.body.direct_auth_artifact, v.verifier);
  t.is(s.status, 400);
  t.is(s.body.error, 'invalid_grant');
  t.is(s.body.webauthn_signal, undefined);
  t.is(s.headers.getSetCookie().length, 0);
  const again = await verify(auth);
  t.is(again.status, 400);
  t.is(again.body.webauthn_signal, undefined);
});

test('a passkey removed between verify and redemption: the session endpoint sends the signal', async (t) => {
  const auth = new SoftAuthenticator(issuer);
  const { user, view } = await registered(auth);
  const v = await verify(auth);
  t.is(v.status, 200, JSON.stringify(v.body));
  t.true(await svc.remove(app.tenantId, user.id, view.id));
  const s = await redeem(v.body.direct_auth_artifact, v.verifier);
  t.is(s.status, 400);
  t.is(s.body.error, 'invalid_grant');
  t.deepEqual(s.body.webauthn_signal, { unknown_credential: true });
  t.is(s.headers.getSetCookie().length, 0);
  // And a new assertion with it is refused with the same signal.
  const again = await verify(auth);
  t.deepEqual(again.body.webauthn_signal, { unknown_credential: true });
});

test('a wrong PKCE verifier at redemption says nothing about the passkey', async (t) => {
  const auth = new SoftAuthenticator(issuer);
  const { user, view } = await registered(auth);
  const v = await verify(auth);
  await svc.remove(app.tenantId, user.id, view.id);
  const s = await redeem(v.body.direct_auth_artifact, pkce().verifier);
  t.is(s.status, 400);
  t.is(s.body.webauthn_signal, undefined);
});

test('a challenge answered twice is refused the second time; an expired one is refused', async (t) => {
  const auth = new SoftAuthenticator(issuer);
  await registered(auth);
  const first = await verify(auth);
  t.is(first.status, 200, JSON.stringify(first.body));
  const replay = await post('/api/v1/auth/direct/passkey/verify', {
    client_id: app.web.clientId,
    challenge_id: first.challengeId,
    credential: auth.assert(first.publicKey as never),
    code_challenge: pkce().challenge,
  });
  t.is(replay.status, 400);
  t.is(replay.body.error, 'invalid_grant');
  t.regex(replay.body.error_description, /challenge_id/);
  t.is(replay.body.webauthn_signal, undefined);

  const o = await options();
  await ds.query('UPDATE webauthn_challenges SET expires_at = ? WHERE id = ?', [Date.now() - 1, o.body.challenge_id]);
  const late = await post('/api/v1/auth/direct/passkey/verify', {
    client_id: app.web.clientId,
    challenge_id: o.body.challenge_id,
    credential: auth.assert(o.body.public_key as never),
    code_challenge: pkce().challenge,
  });
  t.is(late.status, 400);
  t.regex(late.body.error_description, /challenge_id/);
});

test('a counter regression is refused as a possibly cloned authenticator', async (t) => {
  const auth = new SoftAuthenticator(issuer, {}, 10);
  await registered(auth);
  t.is((await verify(auth, { counter: 11 })).status, 200);
  const cloned = await verify(auth, { counter: 11 });
  t.is(cloned.status, 400);
  t.is(cloned.body.error, 'invalid_grant');
  t.regex(cloned.body.error_description, /possibly cloned authenticator/);
  const older = await verify(auth, { counter: 4 });
  t.is(older.status, 400);
  t.regex(older.body.error_description, /possibly cloned authenticator/);
  t.is((await verify(auth, { counter: 12 })).status, 200);
});

test('origins are exact: another port, https, a longer host are refused; so is another RP ID', async (t) => {
  const auth = new SoftAuthenticator(issuer);
  await registered(auth);
  const url = new URL(issuer);
  for (const origin of [
    `http://localhost:${Number(url.port) + 1}`,
    `https://localhost:${url.port}`,
    `http://localhost.example.test:${url.port}`,
  ]) {
    const r = await verify(auth, { origin });
    t.is(r.status, 400, origin);
    t.regex(r.body.error_description, /origin/, origin);
  }
  const rp = await verify(auth, { rpId: 'example.test' });
  t.is(rp.status, 400);
  t.regex(rp.body.error_description, /RP ID/);
  t.is((await verify(auth)).status, 200);
});

test('bodies are checked before anything else: 400 naming the field', async (t) => {
  const auth = new SoftAuthenticator(issuer);
  await registered(auth);
  const o = await options();
  const good = {
    client_id: app.web.clientId,
    challenge_id: o.body.challenge_id,
    credential: auth.assert(o.body.public_key),
    code_challenge: pkce().challenge,
  };
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ ...good, credential: undefined }, /credential/],
    [{ ...good, code_challenge: undefined }, /code_challenge/],
    [{ ...good, challenge_id: undefined }, /challenge_id/],
    [{ ...good, credential: 'junk' }, /credential/],
    [{ ...good, credential: { ...good.credential, id: 'not base64url!' } }, /credential\.id/],
    [{ ...good, credential: { ...good.credential, type: 'password' } }, /credential\.type/],
    [
      { ...good, credential: { ...good.credential, response: { ...good.credential.response, signature: 1 } } },
      /credential\.response\.signature/,
    ],
    [{ ...good, credential: { ...good.credential, id: 'A'.repeat(2000) } }, /credential\.id/],
    [{ ...good, code_challenge_method: 'plain' }, /code_challenge_method/],
    [{ ...good, extra: 1 }, /extra/],
  ];
  for (const [body, field] of cases) {
    const r = await post('/api/v1/auth/direct/passkey/verify', body);
    t.is(r.status, 400, JSON.stringify(body).slice(0, 200));
    t.is(r.body.error, 'invalid_request');
    t.regex(r.body.error_description, field);
  }
  const noClient = await post('/api/v1/auth/direct/passkey/options', {});
  t.is(noClient.status, 400);
  t.regex(noClient.body.error_description, /client_id/);
  const unknownClient = await post('/api/v1/auth/direct/passkey/options', { client_id: 'nope' });
  t.is(unknownClient.status, 401);
  // The body was refused before the challenge was looked at: it still answers once.
  const ok = await post('/api/v1/auth/direct/passkey/verify', good);
  t.is(ok.status, 200, JSON.stringify(ok.body));
});

test("a challenge is bound to its client: another client's verify is refused", async (t) => {
  const auth = new SoftAuthenticator(issuer);
  await registered(auth);
  const o = await options();
  const r = await post('/api/v1/auth/direct/passkey/verify', {
    client_id: app.native.clientId,
    challenge_id: o.body.challenge_id,
    credential: auth.assert(o.body.public_key),
    code_challenge: pkce().challenge,
  });
  t.is(r.status, 400);
  t.regex(r.body.error_description, /challenge_id/);
});

test('the passkey session signs the user in to an app: the ID token carries its acr and amr', async (t) => {
  const auth = new SoftAuthenticator(issuer, {}, 1);
  const { user } = await registered(auth);
  const v = await verify(auth);
  const jar = new CookieJar();
  const s = await postJson(
    `${d.url}/api/v1/auth/direct/session`,
    {
      direct_auth_artifact: v.body.direct_auth_artifact,
      client_id: app.web.clientId,
      code_verifier: v.verifier,
      channel: 'browser',
    },
    jar,
  );
  t.is(s.status, 200);
  const p = pkce();
  const r = await get(
    authorizeUrl(d.url, {
      response_type: 'code',
      client_id: app.web.clientId,
      redirect_uri: REDIRECT,
      scope: 'openid email',
      state: 's1',
      nonce: 'n1',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
      prompt: 'none',
    }),
    jar,
  );
  const loc = new URL(r.headers.get('location')!);
  const code = loc.searchParams.get('code');
  t.truthy(code, loc.toString());
  const res = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic ' + Buffer.from(`${app.web.clientId}:${app.web.secret}`).toString('base64'),
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: REDIRECT,
      code_verifier: p.verifier,
    }),
  });
  t.is(res.status, 200);
  const tokens = (await res.json()) as { id_token: string };
  const claims = JSON.parse(Buffer.from(tokens.id_token.split('.')[1], 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
  t.is(claims.sub, user.id);
  t.is(claims.acr, 'phrh');
  t.deepEqual(claims.amr, ['hwk', 'user']);
});
