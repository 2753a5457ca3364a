/**
 * A third-party client in a real headless Chromium: GET /authorize → login page → email and
 * code → the continuation after sign-in shows the consent page (OIDC Core §3.1.2.4; not
 * consent_required) → Allow lands on the redirect URI with a code, Deny with
 * error=access_denied, both with state and iss (RFC 9207).
 * The redirect URI's host does not resolve, so the browser's request to it is intercepted.
 * Runs only in the browser lane (`npm run test:browser`), not in `npm test`.
 */
import test, { type ExecutionContext } from 'ava';
import type { Browser, Page } from 'playwright-core';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { authorizeUrl, codeFrom, pkce, REDIRECT } from '../helpers/oauth.js';
import { launchBrowser, newPage, screenshot } from './helpers.js';
import { interceptCallback, withTimeout } from './helpers.js';

let env: LoginEnv;
let browser: Browser;

test.before(async () => {
  env = await startLoginEnv();
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await stopLoginEnv(env ?? {});
});

/**
 * Signs a fresh user in at the third-party client's login page and returns on the page after
 * the code: the consent page, if the continuation works.
 */
async function signInAtPartner(t: ExecutionContext, page: Page) {
  const user = await createUserIn(env, 'browser-consent');
  const { verifier, challenge } = pkce();
  const state = `st-${Math.random().toString(36).slice(2)}`;
  const res = await page.goto(
    authorizeUrl(env.d.url, {
      response_type: 'code',
      client_id: env.app.thirdParty.clientId,
      redirect_uri: REDIRECT,
      scope: 'openid email',
      state,
      nonce: 'n-1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }),
  );
  t.is(res?.status(), 200, 'GET /authorize shows the login page');
  const earlier = new Set(env.sink.messages);
  await page.getByLabel('Email address').fill(user.email);
  await Promise.all([
    page.waitForURL(`${env.d.url}/login/email-code`),
    page.getByRole('button', { name: 'Email me a code' }).click(),
  ]);
  const mail = await env.sink.waitFor((m) => !earlier.has(m) && m.to.includes(user.email), 15_000);
  await page.getByLabel('Sign-in code').fill(codeFrom(mail.text));
  const navigated = page.waitForURL((u) => u.pathname === '/authorize');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await navigated;
  t.is(new URL(page.url()).searchParams.get('prompt'), null, 'the continuation is not a prompt=none request');
  await page.waitForLoadState();
  t.is(
    await page.getByRole('heading', { name: 'Allow Partner to access your account?' }).count(),
    1,
    `the consent page follows the sign-in; at ${page.url()}`,
  );
  t.regex(await page.locator('body').innerText(), new RegExp(user.email.replace(/[.+]/g, '\\$&')));
  return { verifier, state };
}

test.serial(
  'third-party client: sign in, the consent page, Allow → redirect URI with code, state and iss',
  async (t) => {
    const { page, errors } = await newPage(t, browser);
    const callback = interceptCallback(page);
    const { verifier, state } = await signInAtPartner(t, page);
    t.log(`screenshot: ${await screenshot(page, 'consent-page')}`);
    await page.getByRole('button', { name: 'Allow' }).click();

    const cb = await withTimeout(callback, 20_000, 'redirect to the client');
    t.is(`${cb.origin}${cb.pathname}`, REDIRECT, 'landed on the redirect URI');
    const code = cb.searchParams.get('code');
    t.truthy(code, `callback has a code: ${cb}`);
    t.is(cb.searchParams.get('state'), state);
    t.is(cb.searchParams.get('iss'), env.d.url);
    t.is(cb.searchParams.get('error'), null);

    const { clientId, secret } = env.app.thirdParty;
    const res = await fetch(`${env.d.url}/token`, {
      method: 'POST',
      headers: {
        authorization: 'Basic ' + Buffer.from(`${clientId}:${secret}`).toString('base64'),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: code!,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      }),
    });
    t.is(res.status, 200, 'the code redeems');
    t.deepEqual(errors, [], 'no console errors (e.g. CSP violations)');
  },
);

test.serial(
  'third-party client: sign in, the consent page, Deny → redirect URI with access_denied, state and iss',
  async (t) => {
    const { page, errors } = await newPage(t, browser);
    const callback = interceptCallback(page);
    const { state } = await signInAtPartner(t, page);
    await page.getByRole('button', { name: 'Deny' }).click();

    const cb = await withTimeout(callback, 20_000, 'redirect to the client');
    t.is(`${cb.origin}${cb.pathname}`, REDIRECT, 'landed on the redirect URI');
    t.is(cb.searchParams.get('error'), 'access_denied');
    t.is(cb.searchParams.get('state'), state);
    t.is(cb.searchParams.get('iss'), env.d.url);
    t.is(cb.searchParams.get('code'), null);
    t.deepEqual(errors, [], 'no console errors');
  },
);
