/**
 * Passkeys in a real headless Chromium with a virtual authenticator (the CDP WebAuthn domain):
 * a user signs in with an email code, adds a passkey on the account page, signs out, and signs
 * in with the passkey from the login page; openid-client, as the relying party, gets the code
 * and tokens. A removed passkey is answered with the unknown-credential signal, which the
 * page shows. Runs only in the browser lane.
 *
 * WebAuthn refuses an IP address as RP ID (WebAuthn §5.1.3 step 8, via the "valid domain"
 * check), so this daemon's issuer is http://localhost:<port> (a secure context without TLS).
 */
import test, { type ExecutionContext } from 'ava';
import * as oidc from 'openid-client';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startLocalhostDaemon, type Daemon } from '../helpers/daemon.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { codeFrom, REDIRECT, seedApp, sql, type App } from '../helpers/oauth.js';
import { openServices } from '../helpers/seed.js';
import { ACR_PASSKEY_HARDWARE, ACR_PASSKEY_SYNCED, STEP_UP_MAX_AGE_MS } from '../../shared/services/auth/passkeys.js';
import { addAuthenticator, interceptCallback, launchBrowser, newPage, screenshot, withTimeout } from './helpers.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let browser: Browser;
let issuer: string;
let rp: oidc.Configuration;

test.before(async () => {
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  sink = await startSmtpSink();
  ({ d, issuer } = await startLocalhostDaemon(db.url, db.dir, {
    IAM_SMTP_URL: sink.url,
    IAM_EMAIL_CODE_RESEND_SECONDS: '0',
  }));
  rp = await oidc.discovery(
    new URL(issuer),
    app.web.clientId,
    { redirect_uris: [REDIRECT] },
    oidc.ClientSecretBasic(app.web.secret),
    { execute: [oidc.allowInsecureRequests] },
  );
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await d?.stop();
  await sink?.close();
  await db?.drop();
});

let seq = 0;
async function newUser(): Promise<{ id: string; email: string }> {
  const email = `passkey${++seq}-${Date.now()}@example.com`;
  const { ds, directory } = await openServices(db.url, db.dir);
  try {
    const u = await directory.createUser(
      app.tenantId,
      { email, name: `Passkey ${seq}` },
      { type: 'system', id: 'test' },
    );
    return { id: u.id, email };
  } finally {
    await ds.destroy();
  }
}

/** A page with a CDP virtual authenticator (helpers.ts); `autofill` leaves conditional mediation on. */
async function pageWithAuthenticator(t: ExecutionContext, opts: { autofill?: boolean } = {}) {
  const bp = await newPage(t, browser);
  const { cdp, id } = await addAuthenticator(bp.context, bp.page, opts);
  return { ...bp, cdp, authenticatorId: id };
}

async function credentials(cdp: CDPSession, authenticatorId: string) {
  return (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;
}

/** A new authorization request from openid-client (PKCE, state, nonce). */
async function authorization() {
  const checks = { verifier: oidc.randomPKCECodeVerifier(), state: oidc.randomState(), nonce: oidc.randomNonce() };
  const url = oidc.buildAuthorizationUrl(rp, {
    redirect_uri: REDIRECT,
    scope: 'openid email',
    state: checks.state,
    nonce: checks.nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(checks.verifier),
    code_challenge_method: 'S256',
  });
  return { url: url.toString(), checks };
}

/** Signs in with an email code on the login page; resolves with the callback URL. */
async function emailSignIn(page: Page, email: string): Promise<URL> {
  const { url } = await authorization();
  const callback = interceptCallback(page);
  await page.goto(url);
  await page.getByLabel('Email address').fill(email);
  const earlier = new Set(sink.messages);
  await page.getByRole('button', { name: 'Email me a code' }).click();
  const mail = await sink.waitFor((m) => !earlier.has(m) && m.to.includes(email), 15_000);
  await page.getByLabel('Sign-in code').fill(codeFrom(mail.text));
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  return callbackReached(page, callback, 'redirect to the client after the email code');
}

/**
 * The callback URL the browser was sent to, once its intercepted page has loaded: the callback
 * is requested before that page loads, and a navigation started earlier would be cut short by it.
 */
async function callbackReached(page: Page, callback: Promise<URL>, what: string): Promise<URL> {
  const cb = await withTimeout(callback, 20_000, what);
  await page.waitForURL((u) => u.origin === new URL(REDIRECT).origin);
  return cb;
}

/** Adds a passkey named `name` on the account page (the sign-in must be fresh). */
async function addPasskey(t: ExecutionContext, page: Page, name: string) {
  const res = await page.goto(`${issuer}/account`);
  t.is(res!.status(), 200);
  const csp = res!.headers()['content-security-policy'] ?? '';
  t.regex(csp, /script-src 'nonce-[^']+'/, 'the account page allows its own scripts by nonce');
  t.regex(csp, /connect-src 'self'/);
  await page.getByLabel('Name of the new passkey').fill(name);
  await Promise.all([
    page.waitForURL(`${issuer}/account?done=passkey_added#passkeys`),
    page.getByRole('button', { name: 'Add a passkey' }).click(),
  ]);
  await page.getByRole('status').waitFor();
  t.regex(await page.getByRole('status').innerText(), /passkey was added/);
}

/** Signs this browser's session out from the account page's device list. */
async function signOut(t: ExecutionContext, page: Page) {
  await page.goto(`${issuer}/account`);
  const row = page.locator('table[aria-labelledby="devices"] tbody tr', { hasText: '(this device)' });
  await Promise.all([page.waitForURL(`${issuer}/account`), row.getByRole('button', { name: /^Sign out/ }).click()]);
  await page.getByRole('heading', { name: 'You are not signed in' }).waitFor();
  t.pass('signed out');
}

test.serial(
  'add a passkey on the account page, sign out, sign in with it: openid-client gets a code and tokens with amr ' +
    'and acr of a passkey',
  async (t) => {
    const user = await newUser();
    const { page, cdp, authenticatorId, errors } = await pageWithAuthenticator(t);

    // 1. A fresh sign-in with an email code (the step-up window is open).
    const first = await emailSignIn(page, user.email);
    t.truthy(first.searchParams.get('code'));

    // 2. The account page: add "Test key"; it is listed.
    await addPasskey(t, page, 'Test key');
    const item = page.locator('ul.passkeys > li', { hasText: 'Test key' });
    t.is(await item.count(), 1, 'the passkey is listed');
    // The virtual authenticator's credential is not backup eligible: a device-bound passkey.
    t.regex(await item.innerText(), /Device-bound passkey/);
    t.regex(await item.innerText(), /never used/);
    const held = await credentials(cdp, authenticatorId);
    t.is(held.length, 1, 'the authenticator holds one credential');
    t.true(held[0].isResidentCredential, 'a discoverable credential');
    t.log(`screenshot: ${await screenshot(page, 'passkeys-account-added')}`);

    // 3. Sign out: the session ends.
    await signOut(t, page);

    // 4. A new authorization; the login page's "Sign in with a passkey".
    const { url, checks } = await authorization();
    const callback = interceptCallback(page);
    const login = await page.goto(url);
    t.regex(login!.headers()['content-security-policy'] ?? '', /script-src 'nonce-/);
    t.is(await page.getByLabel('Email address').getAttribute('autocomplete'), 'username webauthn');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    const cb = await callbackReached(page, callback, 'redirect to the client after the passkey');
    t.is(cb.searchParams.get('iss'), issuer);

    // 5. openid-client redeems the code (PKCE, state, nonce, ID token validated).
    const tokens = await oidc.authorizationCodeGrant(rp, cb, {
      pkceCodeVerifier: checks.verifier,
      expectedState: checks.state,
      expectedNonce: checks.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims()!;
    t.is(claims.sub, user.id);
    const amr = claims.amr as string[];
    t.true(amr.includes('user'), `amr has "user": ${JSON.stringify(amr)}`);
    t.true(amr.includes('hwk') !== amr.includes('swk'), `amr has one of hwk / swk: ${JSON.stringify(amr)}`);
    t.is(claims.acr, amr.includes('hwk') ? ACR_PASSKEY_HARDWARE : ACR_PASSKEY_SYNCED);
    // A device-bound credential: hwk and phrh (docs/passkeys.md).
    t.deepEqual(amr, ['hwk', 'user']);
    t.true(typeof claims.auth_time === 'number' && claims.auth_time * 1000 > Date.now() - 120_000);
    t.is((await oidc.fetchUserInfo(rp, tokens.access_token, user.id)).email, user.email);

    // The signature counter moved on and the passkey shows its use.
    t.true((await credentials(cdp, authenticatorId))[0].signCount > held[0].signCount);
    await page.goto(`${issuer}/account`);
    t.regex(await page.locator('ul.passkeys > li', { hasText: 'Test key' }).innerText(), /last used/);
    t.deepEqual(
      errors.filter((e) => !/status of 401/.test(e)),
      [],
      'no console errors (e.g. CSP violations) apart from the 401 of the signed-out page',
    );
  },
);

test.serial(
  'a removed passkey: the login page shows the unknown-credential answer, and the browser is told to forget it',
  async (t) => {
    const user = await newUser();
    const { page, cdp, authenticatorId, errors } = await pageWithAuthenticator(t);
    await emailSignIn(page, user.email);
    await addPasskey(t, page, 'Old key');

    // Remove it on the account page.
    await Promise.all([
      page.waitForURL(`${issuer}/account?done=passkey_removed#passkeys`),
      page.getByRole('button', { name: 'Remove Old key' }).click(),
    ]);
    t.regex(await page.getByRole('status').innerText(), /passkey was removed/);
    t.is(await page.locator('ul.passkeys > li').count(), 0);
    t.is(await page.getByText('You have no passkeys yet.').count(), 1);
    t.is((await credentials(cdp, authenticatorId)).length, 1, 'the authenticator still holds the credential');
    await signOut(t, page);

    // The still-present credential signs a fresh challenge; the service no longer knows it.
    const { url } = await authorization();
    await page.goto(url);
    const answer = page.waitForResponse((r) => r.url() === `${issuer}/login/passkey`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    const res = await withTimeout(answer, 20_000, 'the answer to the assertion');
    t.is(res.status(), 400);
    const body = (await res.json()) as { error: string; webauthn_signal?: { unknown_credential?: boolean } };
    t.is(body.error, 'invalid_grant');
    t.deepEqual(body.webauthn_signal, { unknown_credential: true });

    const message = page.locator('#passkey-message');
    await message.waitFor({ state: 'visible' });
    t.regex(await message.innerText(), /no longer registered/);
    t.is(await page.locator('#passkey-login').getAttribute('data-result'), 'unknown_credential');
    t.is(new URL(page.url()).pathname, '/authorize', 'still on the login page');
    t.log(`screenshot: ${await screenshot(page, 'passkeys-unknown-credential')}`);
    // The page passed the signal on (PublicKeyCredential.signalUnknownCredential), and the
    // authenticator dropped the credential.
    let left = (await credentials(cdp, authenticatorId)).length;
    for (let i = 0; i < 100 && left > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = (await credentials(cdp, authenticatorId)).length;
    }
    t.is(left, 0, 'the browser forgot the unknown credential');
    t.deepEqual(
      errors.filter((e) => !/status of (400|401)/.test(e)),
      [],
      'no console errors apart from the 400 of the refused assertion and the 401 of the signed-out page',
    );
  },
);

test.serial(
  'autofill: with conditional mediation the login page signs in with the passkey the browser offers',
  async (t) => {
    const user = await newUser();
    const { page, errors } = await pageWithAuthenticator(t, { autofill: true });
    await emailSignIn(page, user.email);
    await addPasskey(t, page, 'Autofill key');
    await signOut(t, page);

    // No click: the page starts a conditional request on load, and the virtual authenticator
    // answers it as a user picking the passkey from the email field's suggestions would.
    const { url, checks } = await authorization();
    const callback = interceptCallback(page);
    await page.goto(url);
    const cb = await callbackReached(page, callback, 'redirect to the client after the autofill sign-in');
    const tokens = await oidc.authorizationCodeGrant(rp, cb, {
      pkceCodeVerifier: checks.verifier,
      expectedState: checks.state,
      expectedNonce: checks.nonce,
      idTokenExpected: true,
    });
    t.is(tokens.claims()!.sub, user.id);
    t.deepEqual(tokens.claims()!.amr, ['hwk', 'user']);
    t.deepEqual(
      errors.filter((e) => !/status of 401/.test(e)),
      [],
      'no console errors apart from the 401 of the signed-out page',
    );
  },
);

test.serial('step-up: a stale sign-in confirms it is the user with an email code, then adds a passkey', async (t) => {
  const user = await newUser();
  const { page, cdp, authenticatorId, errors } = await pageWithAuthenticator(t);
  await emailSignIn(page, user.email);
  // The sign-in is now older than the step-up window.
  await sql(db.url, db.dir, 'UPDATE sessions SET auth_time = ? WHERE user_id = ?', [
    Date.now() - STEP_UP_MAX_AGE_MS - 60_000,
    user.id,
  ]);

  await page.goto(`${issuer}/account`);
  t.false(await page.getByRole('button', { name: 'Add a passkey' }).isVisible(), 'no add form while stale');
  await page.getByRole('link', { name: 'confirm it is you with an email code' }).click();
  await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
  t.true((await page.locator('main').innerText()).includes(user.email), 'the page names the address');
  const earlier = new Set(sink.messages);
  await page.getByRole('button', { name: 'Email me a code' }).click();
  const mail = await sink.waitFor((m) => !earlier.has(m) && m.to.includes(user.email), 15_000);
  await page.getByLabel('Confirmation code').fill(codeFrom(mail.text));
  await Promise.all([
    page.waitForURL(`${issuer}/account?done=reauth#passkeys`),
    page.getByRole('button', { name: 'Confirm' }).click(),
  ]);
  t.regex(await page.getByRole('status').innerText(), /confirming it is you/);

  await page.getByLabel('Name of the new passkey').fill('After step-up');
  await Promise.all([
    page.waitForURL(`${issuer}/account?done=passkey_added#passkeys`),
    page.getByRole('button', { name: 'Add a passkey' }).click(),
  ]);
  t.is(await page.locator('ul.passkeys > li', { hasText: 'After step-up' }).count(), 1);
  t.is((await credentials(cdp, authenticatorId)).length, 1);
  t.deepEqual(errors, [], 'no console errors');
});

test.serial('without JavaScript the login page is the email form alone, and it still signs in', async (t) => {
  const user = await newUser();
  const context = await browser.newContext({ javaScriptEnabled: false, locale: 'en-US' });
  t.teardown(() => context.close());
  const page = await context.newPage();
  const cb = await emailSignIn(page, user.email);
  t.truthy(cb.searchParams.get('code'), 'the email code flow works without scripts');
  const { url } = await authorization();
  await context.clearCookies();
  await page.goto(url);
  t.false(await page.getByRole('button', { name: 'Sign in with a passkey' }).isVisible());
  t.true(await page.getByRole('button', { name: 'Email me a code' }).isVisible());
});
