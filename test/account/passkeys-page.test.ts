/**
 * The account page's passkeys over HTTP, with the software authenticator: the section and its
 * CSP, registration through the JSON endpoints (session cookie + the page's CSRF token), the
 * step-up (a sign-in older than five minutes is refused until an email code renews it at
 * /account/reauth), rename and remove of one's own passkeys only, and 401 without a session.
 */
import test from 'ava';
import type { TestDb } from '../helpers/db.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { loginKit } from '../helpers/login.js';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { codeFrom, csrfFrom, sql, type App, type CookieJar } from '../helpers/oauth.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import { STEP_UP_MAX_AGE_MS } from '../../shared/services/auth/passkeys.js';

let env: LoginEnv;
let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
const kit = loginKit(
  () => d.url,
  () => sink,
);

test.before(async () => {
  env = await startLoginEnv();
  ({ db, d, app, sink } = env);
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

/** A fresh user signed in (auth_time now) in a jar of its own. */
async function signedIn() {
  const user = await createUserIn(env, 'pkpage');
  const jar = await kit.signIn(app.web.clientId, user.email);
  return { user, jar };
}

async function page(jar: CookieJar, path = '/account') {
  const r = await fetch(`${d.url}${path}`, { headers: { cookie: jar.header() }, redirect: 'manual' });
  return { status: r.status, html: await r.text(), headers: r.headers };
}

async function json(path: string, body: unknown, jar?: CookieJar, headers: Record<string, string> = {}) {
  const r = await fetch(`${d.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(jar ? { cookie: jar.header() } : {}), ...headers },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json().catch(() => ({}))) as Record<string, any> };
}

async function form(path: string, fields: Record<string, string>, jar?: CookieJar) {
  const r = await fetch(`${d.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(jar ? { cookie: jar.header() } : {}) },
    body: new URLSearchParams(fields),
  });
  return { status: r.status, location: r.headers.get('location'), html: await r.text() };
}

/** Registers a passkey named `name` through the page's two JSON endpoints. */
async function register(jar: CookieJar, csrf: string, name: string, auth = new SoftAuthenticator(d.url)) {
  const o = await json('/account/passkeys/options', { csrf }, jar);
  if (o.status !== 200) throw new Error(`options ${o.status} ${JSON.stringify(o.body)}`);
  const credential = auth.register(o.body.options);
  const r = await json('/account/passkeys', { csrf, name, challenge_id: o.body.challenge_id, credential }, jar);
  return { ...r, auth };
}

const makeStale = (userId: string) =>
  sql(db.url, db.dir, 'UPDATE sessions SET auth_time = ? WHERE user_id = ?', [
    Date.now() - STEP_UP_MAX_AGE_MS - 60_000,
    userId,
  ]);

test('the account page has a Passkeys section and loads its scripts by nonce; the add form is for a fresh sign-in', async (t) => {
  const { jar } = await signedIn();
  const p = await page(jar);
  t.is(p.status, 200);
  t.regex(p.html, /<h2 id="passkeys">Passkeys<\/h2>/);
  t.regex(p.html, /You have no passkeys yet\./);
  const csp = p.headers.get('content-security-policy')!;
  const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
  t.truthy(nonce, csp);
  t.regex(csp, /connect-src 'self'/);
  t.regex(csp, /frame-ancestors 'none'/);
  const scripts = [...p.html.matchAll(/<script src="([^"]+)" nonce="([^"]+)"/g)];
  t.deepEqual(
    scripts.map((m) => m[1].replace(/\?v=[0-9a-f]+$/, '')),
    ['/assets/webauthn.js', '/assets/passkeys.js'],
  );
  t.true(scripts.every((m) => m[2] === nonce));
  // Without JavaScript nothing of the add form shows; the step-up link is hidden while fresh.
  t.regex(p.html, /<div id="passkey-add" hidden/);
  t.regex(p.html, /<form id="passkey-add-form" novalidate>/);
  t.regex(p.html, /<p id="passkey-step-up" hidden>/);
});

test('register from the account page: listed with its name and kind; several per user; the JSON shows public data only', async (t) => {
  const { jar } = await signedIn();
  const csrf = csrfFrom((await page(jar)).html);
  const first = await register(jar, csrf, 'Laptop');
  t.is(first.status, 201, JSON.stringify(first.body));
  t.is(first.body.name, 'Laptop');
  t.is(first.body.credential_id, first.auth.credentialId);
  t.is(first.body.device_type, 'singleDevice');
  t.false('public_key' in first.body || 'publicKey' in first.body);
  const second = await register(
    jar,
    csrf,
    '  Phone  ',
    new SoftAuthenticator(d.url, { backupEligible: true, backedUp: true }),
  );
  t.is(second.status, 201, JSON.stringify(second.body));
  t.is(second.body.name, 'Phone', 'the name is trimmed');

  const html = (await page(jar)).html;
  t.regex(html, /<strong>Laptop<\/strong><br>\s*<span class="hint">Device-bound passkey · added <time/);
  t.regex(html, /<strong>Phone<\/strong><br>\s*<span class="hint">Synced passkey · added <time/);
  t.is([...html.matchAll(/action="\/account\/passkeys\/[^"]+\/delete"/g)].length, 2);
  t.regex(html, /aria-label="Remove Laptop"/);
});

test('the JSON endpoints refuse a missing or wrong CSRF token and another Origin (403), and bad input (400)', async (t) => {
  const { jar } = await signedIn();
  const other = await signedIn();
  const csrf = csrfFrom((await page(jar)).html);
  const otherCsrf = csrfFrom((await page(other.jar)).html);

  t.is((await json('/account/passkeys/options', { csrf: 'x'.repeat(43) }, jar)).status, 403);
  const wrong = await json('/account/passkeys/options', { csrf: otherCsrf }, jar);
  t.is(wrong.status, 403, 'another session’s token');
  t.is(wrong.body.error, 'forbidden');
  t.regex(wrong.body.message, /csrf/);
  const missing = await json('/account/passkeys/options', {}, jar);
  t.is(missing.status, 400);
  t.regex(missing.body.error_description, /body\.csrf/);
  const cross = await json('/account/passkeys/options', { csrf }, jar, { origin: 'https://evil.example' });
  t.is(cross.status, 403);
  t.is(cross.body.error, 'forbidden');

  const o = await json('/account/passkeys/options', { csrf }, jar);
  t.is(o.status, 200);
  const credential = new SoftAuthenticator(d.url).register(o.body.options);
  const body = { csrf: otherCsrf, name: 'Key', challenge_id: o.body.challenge_id, credential };
  t.is((await json('/account/passkeys', body, jar)).status, 403);
  const long = await json('/account/passkeys', { ...body, csrf, name: 'x'.repeat(65) }, jar);
  t.is(long.status, 400);
  t.regex(long.body.error_description, /body\.name/);
  // Nothing was stored by the refused attempts; the right token and name still work.
  t.is((await json('/account/passkeys', { ...body, csrf }, jar)).status, 201);
});

test('without a session: the JSON endpoints answer 401, the forms and the reauth page the signed-out page', async (t) => {
  for (const path of ['/account/passkeys/options', '/account/passkeys']) {
    const r = await json(path, { csrf: 'x' });
    t.is(r.status, 401, path);
    t.is(r.body.error, 'invalid_token');
  }
  for (const path of [
    '/account/passkeys/pk_1/delete',
    '/account/passkeys/pk_1/rename',
    '/account/reauth/send',
    '/account/reauth/verify',
  ]) {
    const r = await form(path, { csrf: 'x', name: 'n', code: '123456' });
    t.is(r.status, 401, path);
    t.regex(r.html, /You are not signed in/);
  }
  const r = await fetch(`${d.url}/account/reauth`);
  t.is(r.status, 401);
});

test('step-up: a sign-in older than five minutes is refused; an email code at /account/reauth renews it', async (t) => {
  const { user, jar } = await signedIn();
  const csrf = csrfFrom((await page(jar)).html);
  await makeStale(user.id);

  const stale = await json('/account/passkeys/options', { csrf }, jar);
  t.is(stale.status, 403);
  t.is(stale.body.error, 'step_up_required');
  // The page offers the re-authentication instead of the add form.
  const html = (await page(jar)).html;
  t.regex(html, /<form id="passkey-add-form" novalidate hidden>/);
  t.regex(html, /<p id="passkey-step-up">[^<]*<a href="\/account\/reauth">/);

  const start = await page(jar, '/account/reauth');
  t.is(start.status, 200);
  t.true(start.html.includes(user.email), 'the page names the address the code goes to');
  t.is((await form('/account/reauth/send', { csrf: 'wrong' }, jar)).status, 403, 'CSRF refused');

  const earlier = new Set(sink.messages);
  const sent = await form('/account/reauth/send', { csrf: csrfFrom(start.html) }, jar);
  t.is(sent.status, 200);
  t.regex(sent.html, /action="\/account\/reauth\/verify"/);
  const code = codeFrom((await sink.waitFor((m) => !earlier.has(m) && m.to.includes(user.email), 15_000)).text);

  const wrongCode = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
  const bad = await form('/account/reauth/verify', { csrf, code: wrongCode }, jar);
  t.is(bad.status, 400);
  t.regex(bad.html, /incorrect/);
  t.is((await form('/account/reauth/verify', { csrf: 'wrong', code }, jar)).status, 403, 'CSRF refused');
  t.is((await json('/account/passkeys/options', { csrf }, jar)).status, 403, 'still stale');

  // The code was sent for this session: the user's other session cannot use it.
  const otherJar = await kit.signIn(app.web.clientId, user.email);
  const otherCsrf = csrfFrom((await page(otherJar)).html);
  const elsewhere = await form('/account/reauth/verify', { csrf: otherCsrf, code }, otherJar);
  t.is(elsewhere.status, 400, 'another session’s code');

  const before = Date.now();
  const ok = await form('/account/reauth/verify', { csrf, code }, jar);
  t.is(ok.status, 303);
  t.is(ok.location, '/account?done=reauth#passkeys');
  const rows = (await sql(
    db.url,
    db.dir,
    'SELECT id, auth_time, acr, amr FROM sessions WHERE user_id = ? ORDER BY created_at',
    [user.id],
  )) as { auth_time: number; acr: string; amr: string }[];
  t.true(Number(rows[0].auth_time) >= before, 'auth_time is now');
  t.is(rows[0].acr, 'urn:iam:acr:email-code');
  t.deepEqual(JSON.parse(rows[0].amr), ['otp', 'email']);
  t.regex((await page(jar, '/account?done=reauth')).html, /confirming it is you/);

  // Registration is allowed again.
  t.is((await register(jar, csrf, 'After step-up')).status, 201);
  // A used code does not renew the session again.
  t.is((await form('/account/reauth/verify', { csrf, code }, jar)).status, 400);
});

test('rename and remove: forms with the session’s CSRF token, only for one’s own passkeys', async (t) => {
  const alice = await signedIn();
  const bob = await signedIn();
  const aCsrf = csrfFrom((await page(alice.jar)).html);
  const bCsrf = csrfFrom((await page(bob.jar)).html);
  const key = await register(alice.jar, aCsrf, 'Laptop');
  t.is(key.status, 201);
  const id = key.body.id as string;

  // Bob cannot rename or remove Alice's passkey, even with his own valid token.
  t.is((await form(`/account/passkeys/${id}/rename`, { csrf: bCsrf, name: 'Mine' }, bob.jar)).status, 404);
  t.is((await form(`/account/passkeys/${id}/delete`, { csrf: bCsrf }, bob.jar)).status, 404);
  // Alice's own forms without her token are refused.
  t.is((await form(`/account/passkeys/${id}/rename`, { csrf: bCsrf, name: 'X' }, alice.jar)).status, 403);
  t.is((await form(`/account/passkeys/${id}/delete`, { csrf: 'nope' }, alice.jar)).status, 403);
  t.is((await form(`/account/passkeys/${id}/rename`, { csrf: aCsrf, name: '   ' }, alice.jar)).status, 400);

  const renamed = await form(`/account/passkeys/${id}/rename`, { csrf: aCsrf, name: 'Work laptop' }, alice.jar);
  t.is(renamed.status, 303);
  t.is(renamed.location, '/account?done=passkey_renamed#passkeys');
  t.regex((await page(alice.jar)).html, /<strong>Work laptop<\/strong>/);

  const removed = await form(`/account/passkeys/${id}/delete`, { csrf: aCsrf }, alice.jar);
  t.is(removed.status, 303);
  t.is(removed.location, '/account?done=passkey_removed#passkeys');
  const html = (await page(alice.jar, '/account?done=passkey_removed')).html;
  t.regex(html, /The passkey was removed\./);
  t.regex(html, /You have no passkeys yet\./);
  t.is((await form(`/account/passkeys/${id}/delete`, { csrf: aCsrf }, alice.jar)).status, 404, 'already removed');
});
