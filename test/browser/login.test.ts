/**
 * The server-rendered email-code login in a real headless Chromium, driven with the keyboard
 * only (an accessibility requirement): GET /authorize → "Email address" (autofocused), Enter →
 * POST /login/email-code → code page (autofocused) → Enter → POST /login/verify → 303 to
 * /authorize?…&login_done=… (the client's request, marked signed in) → 302 to the client's
 * redirect URI with code, state and iss.
 * The redirect URI's host does not resolve, so the browser's request to it is intercepted.
 * Runs only in the browser lane (`npm run test:browser`), not in `npm test`.
 */
import test, { type ExecutionContext } from 'ava';
import type { Browser, Page } from 'playwright-core';
import type { TestDb } from '../helpers/db.js';
import { startLoginEnv, stopLoginEnv } from '../helpers/env.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { authorizeUrl, codeFrom, pkce, REDIRECT, type App } from '../helpers/oauth.js';
import { focusedElement, isFocused, launchBrowser, newPage, screenshot } from './helpers.js';
import { interceptCallback, withTimeout } from './helpers.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let browser: Browser;

test.before(async () => {
  ({ db, d, app, sink } = await startLoginEnv());
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await stopLoginEnv({ db, d, sink });
});

async function startLogin(t: ExecutionContext, page: Page) {
  const { verifier, challenge } = pkce();
  const state = `st-${Math.random().toString(36).slice(2)}`;
  const nonce = `n-${Math.random().toString(36).slice(2)}`;
  const url = authorizeUrl(d.url, {
    response_type: 'code',
    client_id: app.web.clientId,
    redirect_uri: REDIRECT,
    scope: 'openid email profile',
    state,
    nonce,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const res = await page.goto(url);
  t.is(res?.status(), 200, 'GET /authorize shows the login page');

  // The accessible names exist: the field is labelled, the button is named.
  const email = page.getByLabel('Email address');
  t.is(await email.count(), 1, 'one field labelled "Email address"');
  t.is(await email.getAttribute('type'), 'email');
  t.is(await email.getAttribute('autocomplete'), 'username webauthn', 'autofill offers addresses and passkeys');
  t.is(await page.getByRole('button', { name: 'Email me a code' }).count(), 1, 'a button named "Email me a code"');
  t.true(
    await isFocused(page, '#email'),
    `focus starts in the email field (autofocus); focused: ${await focusedElement(page)}`,
  );
  return { verifier, state, nonce };
}

/** Types the email into the focused field and presses Enter; returns the mail with the code. */
async function requestCode(t: ExecutionContext, page: Page): Promise<string> {
  const earlier = new Set(sink.messages);
  await page.keyboard.type(app.user.email);
  await Promise.all([page.waitForURL(`${d.url}/login/email-code`), page.keyboard.press('Enter')]);

  const code = page.getByLabel('Sign-in code');
  t.is(await code.count(), 1, 'one field labelled "Sign-in code"');
  t.is(await code.getAttribute('autocomplete'), 'one-time-code');
  t.is(await page.getByRole('button', { name: 'Sign in' }).count(), 1, 'a button named "Sign in"');
  t.true(
    await isFocused(page, '#code'),
    `focus is in the code field (autofocus); focused: ${await focusedElement(page)}`,
  );

  const mail = await sink.waitFor((m) => !earlier.has(m) && m.to.includes(app.user.email), 15_000);
  return codeFrom(mail.text);
}

/** Redeems the code at POST /token with the web client's secret (client_secret_basic). */
async function redeem(code: string, verifier: string) {
  const basic = Buffer.from(`${encodeURIComponent(app.web.clientId)}:${encodeURIComponent(app.web.secret)}`).toString(
    'base64',
  );
  const res = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function assertCallback(t: ExecutionContext, cb: URL, state: string): string {
  t.is(`${cb.origin}${cb.pathname}`, REDIRECT, 'landed on the redirect URI');
  const code = cb.searchParams.get('code');
  t.truthy(code, `callback has a code: ${cb}`);
  t.is(cb.searchParams.get('state'), state, 'same state');
  t.is(cb.searchParams.get('iss'), d.url, 'iss is the issuer (RFC 9207)');
  t.is(cb.searchParams.get('error'), null);
  return code!;
}

test.serial(
  'keyboard-only login: email, Enter, code, Enter → redirect with code, state, iss; the code redeems for an ID token',
  async (t) => {
    const { context, page, errors } = await newPage(t, browser);
    const callback = interceptCallback(page);
    const { verifier, state } = await startLogin(t, page);

    const code = await requestCode(t, page);
    t.log(`screenshot: ${await screenshot(page, 'login-code-page')}`);

    await page.keyboard.type(code);
    await page.keyboard.press('Enter');
    const cb = await withTimeout(callback, 20_000, 'redirect to the client');
    const authCode = assertCallback(t, cb, state);

    const cookies = await context.cookies(d.url);
    const session = cookies.find((c) => c.name === 'service_session');
    t.truthy(session, `a session cookie is set; cookies: ${cookies.map((c) => c.name).join(', ')}`);
    t.true(session?.httpOnly, 'the session cookie is HttpOnly');
    t.is(session?.sameSite, 'Lax');
    for (const c of cookies) t.true(c.httpOnly, `cookie ${c.name} is HttpOnly`);

    const tokens = await redeem(authCode, verifier);
    t.is(tokens.status, 200, JSON.stringify(tokens.body));
    t.is(typeof tokens.body.id_token, 'string');
    t.is(typeof tokens.body.access_token, 'string');
    t.deepEqual(errors, [], 'no console errors (e.g. CSP violations)');
  },
);

test.serial(
  'a wrong code is announced (role=alert), marks the field aria-invalid, and the right code then succeeds',
  async (t) => {
    const { page, errors } = await newPage(t, browser);
    const callback = interceptCallback(page);
    const { verifier, state } = await startLogin(t, page);
    const right = await requestCode(t, page);
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, '0');

    await page.keyboard.type(wrong);
    await Promise.all([page.waitForURL(`${d.url}/login/verify`), page.keyboard.press('Enter')]);

    const alert = page.getByRole('alert');
    t.is(await alert.count(), 1, 'one alert');
    const message = (await alert.innerText()).trim();
    t.regex(message, /incorrect/i, 'the alert says the code is wrong');
    const field = page.getByLabel('Sign-in code');
    t.is(await field.getAttribute('aria-invalid'), 'true', 'the field is aria-invalid');
    const describedBy = (await field.getAttribute('aria-describedby')) ?? '';
    const alertId = await alert.getAttribute('id');
    t.truthy(
      alertId && describedBy.split(/\s+/).includes(alertId),
      `the field is described by the alert (aria-describedby="${describedBy}")`,
    );
    t.log(`screenshot: ${await screenshot(page, 'login-wrong-code')}`);

    // Still usable by keyboard: focus is back in the (empty) code field; Tab reaches "Sign in".
    t.true(
      await isFocused(page, '#code'),
      `focus is in the code field after the error; focused: ${await focusedElement(page)}`,
    );
    t.is(await field.inputValue(), '', 'the field is empty for a new attempt');
    await page.keyboard.type(right);
    await page.keyboard.press('Tab');
    t.true(
      await page.getByRole('button', { name: 'Sign in' }).evaluate((el) => el === document.activeElement),
      `Tab moves to "Sign in"; focused: ${await focusedElement(page)}`,
    );
    await page.keyboard.press('Enter');

    const cb = await withTimeout(callback, 20_000, 'redirect to the client after the right code');
    const authCode = assertCallback(t, cb, state);
    const tokens = await redeem(authCode, verifier);
    t.is(tokens.status, 200, JSON.stringify(tokens.body));
    t.is(typeof tokens.body.id_token, 'string');
    t.deepEqual(
      errors.filter((e) => !/status of 400/.test(e)),
      [],
      'no console errors apart from the 400 of the error page',
    );
  },
);
