/**
 * The login page's passkey sign-in over HTTP, with the software authenticator: the page's
 * scripts and CSP, the script assets and their caching, the two JSON endpoints bound to the
 * authorization request and its CSRF token, a sign-in that continues the authorization to a
 * code whose tokens carry the passkey's amr and acr, and the refusals: a replayed challenge, a
 * counter regression, and a removed passkey (the unknown-credential signal).
 */
import test from 'ava';
import { decodeJwt } from 'jose';
import type { TestDb } from '../helpers/db.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { loginKit } from '../helpers/login.js';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import {
  authorizeUrl,
  challengeFrom,
  CookieJar,
  csrfFrom,
  get,
  pkce,
  REDIRECT,
  seedApp,
  sql,
  type App,
} from '../helpers/oauth.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import { ACR_PASSKEY_HARDWARE, ACR_PASSKEY_SYNCED } from '../../shared/services/auth/passkeys.js';
import { KNOWN_DEVICE_COOKIE } from '../../shared/services/auth/policy.js';

let env: LoginEnv;
let db: TestDb;
let d: Daemon;
let app: App;
/** A second tenant on the same daemon: the same issuer, hence the same RP ID. */
let appB: App;
let sink: SmtpSink;
const kit = loginKit(
  () => d.url,
  () => sink,
);

test.before(async () => {
  env = await startLoginEnv();
  ({ db, d, app, sink } = env);
  appB = await seedApp(db.url, db.dir);
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

type Body = Record<string, any>;

async function json(path: string, body: unknown, jar?: CookieJar) {
  const r = await fetch(`${d.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(jar ? { cookie: jar.header() } : {}) },
    body: JSON.stringify(body),
  });
  jar?.take(r);
  return { status: r.status, headers: r.headers, body: (await r.json().catch(() => ({}))) as Body };
}

/** A user with one registered passkey (made through the account page's endpoints). */
async function userWithPasskey(opts: ConstructorParameters<typeof SoftAuthenticator>[1] = {}) {
  const user = await createUserIn(env, 'pklogin');
  const jar = await kit.signIn(app.web.clientId, user.email);
  const html = await (await fetch(`${d.url}/account`, { headers: { cookie: jar.header() } })).text();
  const csrf = csrfFrom(html);
  const auth = new SoftAuthenticator(d.url, opts);
  const o = await json('/account/passkeys/options', { csrf }, jar);
  const r = await json(
    '/account/passkeys',
    { csrf, name: 'Key', challenge_id: o.body.challenge_id, credential: auth.register(o.body.options) },
    jar,
  );
  if (r.status !== 201) throw new Error(`register ${r.status} ${JSON.stringify(r.body)}`);
  return { user, auth, passkeyId: r.body.id as string, accountJar: jar, accountCsrf: csrf };
}

/** GET /authorize in a fresh browser (for `at`'s web client): the login page's binding and the PKCE verifier. */
async function loginPage(at: App = app) {
  const jar = new CookieJar();
  const p = pkce();
  const r = await get(authorizeUrl(d.url, kit.authParams(at.web.clientId, p.challenge)), jar);
  const html = await r.text();
  return { jar, html, res: r, verifier: p.verifier, challenge: challengeFrom(html), csrf: csrfFrom(html) };
}

test('the login page: the passkey button is hidden until the script shows it; scripts by nonce; autofill', async (t) => {
  const { html, res } = await loginPage();
  const csp = res.headers.get('content-security-policy')!;
  const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
  t.truthy(nonce, csp);
  t.regex(csp, /connect-src 'self'/);
  t.regex(csp, /default-src 'none'/);
  const scripts = [...html.matchAll(/<script src="\/assets\/[a-z]+\.js\?v=[0-9a-f]{16}" nonce="([^"]+)"/g)];
  t.is(scripts.length, 2);
  t.true(
    scripts.every((m) => m[1] === nonce),
    'each script carries the CSP nonce',
  );
  t.regex(html, /<input id="email" name="email" type="email" autocomplete="username webauthn"/);
  // …and the script's messages in the page's language (data-msg-*, docs/localisation.md).
  t.regex(html, /<div id="passkey-login" hidden data-challenge="[^"]+" data-csrf="[^"]+" data-msg-unavailable="[^"]+"/);
  t.regex(html, /<button type="button" id="passkey-button" class="secondary">Sign in with a passkey<\/button>/);
  // The email form is still the page's form without JavaScript.
  t.regex(html, /<form method="post" action="\/login\/email-code" novalidate>/);
});

test('a page without scripts keeps the CSP that allows none (the code step)', async (t) => {
  const { jar, challenge, csrf } = await loginPage();
  const r = await fetch(`${d.url}/login/email-code`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    body: new URLSearchParams({ challenge, csrf, email: 'nobody@example.com' }),
  });
  t.is(r.status, 200);
  const csp = r.headers.get('content-security-policy')!;
  t.notRegex(csp, /script-src|connect-src/);
  t.notRegex(await r.text(), /<script/);
});

test('the script assets: JavaScript, immutable under their hashed URL, revalidated by ETag without it', async (t) => {
  const { html } = await loginPage();
  const urls = [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
  t.is(urls.length, 2);
  for (const url of urls) {
    const r = await fetch(`${d.url}${url}`);
    t.is(r.status, 200, url);
    t.regex(r.headers.get('content-type')!, /^text\/javascript/);
    t.is(r.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    const etag = r.headers.get('etag')!;
    t.is(etag, `"${new URL(url, d.url).searchParams.get('v')}"`);
    const body = await r.text();
    t.regex(body, url.startsWith('/assets/webauthn.js') ? /SimpleWebAuthnBrowser/ : /passkey-login/);

    const bare = await fetch(`${d.url}${url.replace(/\?.*$/, '')}`);
    t.is(bare.headers.get('cache-control'), 'public, max-age=0, must-revalidate');
    t.is(await bare.text(), body);
    const again = await fetch(`${d.url}${url}`, { headers: { 'if-none-match': etag } });
    t.is(again.status, 304);
  }
  t.is((await fetch(`${d.url}/assets/other.js`)).status, 404);
});

test('the options endpoint is bound to the authorization request and its CSRF token', async (t) => {
  const { jar, challenge, csrf } = await loginPage();
  const other = await loginPage();
  const forged = await json('/login/passkey/options', { challenge, csrf: other.csrf }, jar);
  t.is(forged.status, 403);
  t.is(forged.body.error, 'forbidden');
  const noCookie = await json('/login/passkey/options', { challenge, csrf });
  t.is(noCookie.status, 403, 'the CSRF cookie of the browser that got the page is needed');
  const gone = await json('/login/passkey/options', { challenge: 'nope', csrf }, jar);
  t.is(gone.status, 400);
  t.is(gone.body.error, 'invalid_request');
  const bad = await json('/login/passkey/options', { challenge }, jar);
  t.is(bad.status, 400);
  t.regex(bad.body.error_description, /body\.csrf/);

  const ok = await json('/login/passkey/options', { challenge, csrf }, jar);
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.is(ok.body.options.rpId, '127.0.0.1');
  t.falsy(ok.body.options.allowCredentials?.length, 'discoverable credentials: the authenticator names the user');
  t.true(ok.body.expires_in > 0);
  t.is(ok.headers.get('cache-control'), 'no-store');
});

test('sign in with a passkey: the session, the continuation, a code, tokens with the passkey’s amr and acr', async (t) => {
  const { user, auth } = await userWithPasskey();
  const { jar, challenge, csrf, verifier } = await loginPage();
  const o = await json('/login/passkey/options', { challenge, csrf }, jar);
  const credential = auth.assert(o.body.options);
  const r = await json('/login/passkey', { challenge, csrf, challenge_id: o.body.challenge_id, credential }, jar);
  t.is(r.status, 200, JSON.stringify(r.body));
  t.true(jar.cookies.has('service_session'), 'the session cookie is set');
  t.false(jar.cookies.has(KNOWN_DEVICE_COOKIE), 'no known-device cookie (that is the email code’s)');
  const redirect = new URL(r.body.redirect_url as string);
  t.is(redirect.origin + redirect.pathname, `${d.url}/authorize`);
  t.truthy(redirect.searchParams.get('login_done'));

  const back = await get(redirect.toString(), jar);
  t.is(back.status, 302);
  const cb = new URL(back.headers.get('location')!);
  t.is(cb.origin + cb.pathname, REDIRECT);
  const tokens = await kit.redeem(cb.searchParams.get('code')!, verifier, app.web);
  t.is(tokens.status, 200, JSON.stringify(tokens.body));
  const claims = decodeJwt(tokens.body.id_token);
  t.is(claims.sub, user.id);
  t.deepEqual(claims.amr, ['hwk', 'user']);
  t.is(claims.acr, ACR_PASSKEY_HARDWARE);

  // The request is consumed: the same page cannot sign in twice.
  const o2 = await json('/login/passkey/options', { challenge, csrf }, jar);
  t.is(o2.status, 400);
});

test('a synced passkey signs in with swk and the synced acr', async (t) => {
  const { auth } = await userWithPasskey({ backupEligible: true, backedUp: true });
  const { jar, challenge, csrf, verifier } = await loginPage();
  const o = await json('/login/passkey/options', { challenge, csrf }, jar);
  const r = await json(
    '/login/passkey',
    { challenge, csrf, challenge_id: o.body.challenge_id, credential: auth.assert(o.body.options) },
    jar,
  );
  t.is(r.status, 200, JSON.stringify(r.body));
  const back = await get(r.body.redirect_url as string, jar);
  const code = new URL(back.headers.get('location')!).searchParams.get('code')!;
  const claims = decodeJwt((await kit.redeem(code, verifier, app.web)).body.id_token);
  t.deepEqual(claims.amr, ['swk', 'user']);
  t.is(claims.acr, ACR_PASSKEY_SYNCED);
});

test('refused: a replayed challenge, a counter regression; neither signs in', async (t) => {
  const { auth } = await userWithPasskey();
  auth.counter = 10;
  const first = await loginPage();
  const o = await json('/login/passkey/options', { challenge: first.challenge, csrf: first.csrf }, first.jar);
  const assertion = auth.assert(o.body.options);
  const ok = await json(
    '/login/passkey',
    { challenge: first.challenge, csrf: first.csrf, challenge_id: o.body.challenge_id, credential: assertion },
    first.jar,
  );
  t.is(ok.status, 200, JSON.stringify(ok.body));

  // The same challenge and assertion replayed on another login page.
  const second = await loginPage();
  const replay = await json(
    '/login/passkey',
    { challenge: second.challenge, csrf: second.csrf, challenge_id: o.body.challenge_id, credential: assertion },
    second.jar,
  );
  t.is(replay.status, 400);
  t.is(replay.body.error, 'invalid_grant');
  t.false(second.jar.cookies.has('service_session'));

  // A fresh challenge, but the counter goes back: a possibly cloned authenticator.
  const o2 = await json('/login/passkey/options', { challenge: second.challenge, csrf: second.csrf }, second.jar);
  const cloned = await json(
    '/login/passkey',
    {
      challenge: second.challenge,
      csrf: second.csrf,
      challenge_id: o2.body.challenge_id,
      credential: auth.assert(o2.body.options, { counter: 5 }),
    },
    second.jar,
  );
  t.is(cloned.status, 400);
  t.is(cloned.body.error, 'invalid_grant');
  t.regex(cloned.body.error_description, /clon/);
  t.false(second.jar.cookies.has('service_session'));
  t.is(cloned.body.webauthn_signal, undefined, 'a known credential: no unknown-credential signal');
});

test("a challenge made for another login page's authorization request is refused there", async (t) => {
  const { auth } = await userWithPasskey();
  const mine = await loginPage();
  const other = await loginPage();
  // Options for the other page's request, answered on this page: the binding differs.
  const o = await json('/login/passkey/options', { challenge: other.challenge, csrf: other.csrf }, other.jar);
  const crossed = await json(
    '/login/passkey',
    {
      challenge: mine.challenge,
      csrf: mine.csrf,
      challenge_id: o.body.challenge_id,
      credential: auth.assert(o.body.options),
    },
    mine.jar,
  );
  t.is(crossed.status, 400, JSON.stringify(crossed.body));
  t.is(crossed.body.error, 'invalid_grant');
  t.false(mine.jar.cookies.has('service_session'));
});

test('a removed passkey: 400 invalid_grant with webauthn_signal.unknown_credential', async (t) => {
  const { auth, passkeyId, accountJar, accountCsrf } = await userWithPasskey();
  const del = await fetch(`${d.url}/account/passkeys/${passkeyId}/delete`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: accountJar.header() },
    body: new URLSearchParams({ csrf: accountCsrf }),
  });
  t.is(del.status, 303);
  const { jar, challenge, csrf } = await loginPage();
  const o = await json('/login/passkey/options', { challenge, csrf }, jar);
  const r = await json(
    '/login/passkey',
    { challenge, csrf, challenge_id: o.body.challenge_id, credential: auth.assert(o.body.options) },
    jar,
  );
  t.is(r.status, 400);
  t.is(r.body.error, 'invalid_grant');
  t.deepEqual(r.body.webauthn_signal, { unknown_credential: true });
  t.false(jar.cookies.has('service_session'));
});

/** options -> assertion -> POST /login/passkey on a fresh login page of `at`. */
async function passkeyAt(auth: SoftAuthenticator, at: App = app) {
  const { jar, challenge, csrf } = await loginPage(at);
  const o = await json('/login/passkey/options', { challenge, csrf }, jar);
  const r = await json(
    '/login/passkey',
    { challenge, csrf, challenge_id: o.body.challenge_id, credential: auth.assert(o.body.options) },
    jar,
  );
  return { ...r, jar };
}

test("a tenant-A passkey on tenant B's login page: 400 invalid_grant without webauthn_signal", async (t) => {
  const { auth } = await userWithPasskey();
  const atB = await passkeyAt(auth, appB);
  t.is(atB.status, 400, JSON.stringify(atB.body));
  t.is(atB.body.error, 'invalid_grant');
  t.is(atB.body.error_description, 'This passkey is not registered with this service.');
  t.is(atB.body.webauthn_signal, undefined, "tenant B's page must not make the browser drop tenant A's passkey");
  t.false(atB.jar.cookies.has('service_session'));
  // The same passkey still signs in on its own tenant's page.
  const atA = await passkeyAt(auth);
  t.is(atA.status, 200, JSON.stringify(atA.body));
});

test('a removed passkey whose tombstone is past its bound: refused without webauthn_signal', async (t) => {
  const { auth, passkeyId, accountJar, accountCsrf } = await userWithPasskey();
  const del = await fetch(`${d.url}/account/passkeys/${passkeyId}/delete`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: accountJar.header() },
    body: new URLSearchParams({ csrf: accountCsrf }),
  });
  t.is(del.status, 303);
  t.deepEqual((await passkeyAt(auth)).body.webauthn_signal, { unknown_credential: true });
  await sql(db.url, db.dir, 'UPDATE passkey_tombstones SET expires_at = ? WHERE passkey_id = ?', [
    Date.now() - 1,
    passkeyId,
  ]);
  const r = await passkeyAt(auth);
  t.is(r.status, 400);
  t.is(r.body.error, 'invalid_grant');
  t.is(r.body.webauthn_signal, undefined);
});
