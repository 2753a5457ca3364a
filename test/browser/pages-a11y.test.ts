/**
 * Every server-rendered page on a phone (390 px wide) in a real headless Chromium, in the light
 * and the dark colour scheme: no horizontal scrolling, and no serious or critical WCAG 2.2 A/AA
 * violation found by axe-core. The walk is a newcomer's: the landing page, the signed-out
 * account page, its "Sign in" (the account console's own authorization code + PKCE sign-in:
 * login email step, code step), the account page, a third party's consent page, the logout
 * confirmation and an error page. Screenshots of the login, code, consent and account pages at
 * phone and desktop size go to IAM_SCREENSHOTS_DIR (docs/screenshots/ when the docs are
 * refreshed) or else test/artifacts/. Runs only in the browser lane.
 */
import test, { type ExecutionContext } from 'ava';
import type { Browser, Page } from 'playwright-core';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { authorizeUrl, codeFrom, pkce, REDIRECT } from '../helpers/oauth.js';
import { checkPage, launchBrowser, newPage, PHONE, shoot } from './helpers.js';

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

type Scheme = 'light' | 'dark';

/** A phone-sized page in `scheme`. bypassCSP lets axe-core be injected past the page's CSP. */
async function phonePage(t: ExecutionContext, scheme: Scheme) {
  return (await newPage(t, browser, { viewport: PHONE, colorScheme: scheme, bypassCSP: true })).page;
}

/**
 * Signed out at /account?tenant=…, "Sign in", the email and the code: back on the account page.
 * `each` runs on each page of the way (the signed-out page, the email step, the code step);
 * with `detour`, a mistyped address is corrected with the code page's "Use a different address".
 */
async function signInFromAccount(
  t: ExecutionContext,
  page: Page,
  email: string,
  each: (what: string) => Promise<void> = async () => {},
  detour = false,
) {
  const res = await page.goto(`${env.d.url}/account?tenant=${env.app.tenantId}`);
  t.is(res?.status(), 401);
  await page.getByRole('heading', { name: 'You are not signed in' }).waitFor();
  await each('account, signed out');
  await Promise.all([
    page.waitForURL((u) => u.pathname === '/authorize'),
    page.getByRole('link', { name: 'Sign in' }).click(),
  ]);
  await each('login, email step');
  const sendCode = () =>
    Promise.all([
      page.waitForURL(`${env.d.url}/login/email-code`),
      page.getByRole('button', { name: 'Email me a code' }).click(),
    ]);
  await page.getByLabel('Email address').fill(detour ? `typo-${email}` : email);
  let earlier = new Set(env.sink.messages);
  await sendCode();
  await each('login, code step');
  if (detour) {
    // "Use a different address": the email step of the same request, the address to correct.
    await Promise.all([
      page.waitForURL(`${env.d.url}/login/change-address`),
      page.getByRole('button', { name: 'Use a different address' }).click(),
    ]);
    t.is(await page.getByLabel('Email address').inputValue(), `typo-${email}`);
    await page.getByLabel('Email address').fill(email);
    earlier = new Set(env.sink.messages);
    await sendCode();
  }
  const mail = await env.sink.waitFor((m) => !earlier.has(m) && m.to.includes(email), 15_000);
  await page.getByLabel('Sign-in code').fill(codeFrom(mail.text));
  await Promise.all([
    page.waitForURL(`${env.d.url}/account`),
    page.getByRole('button', { name: 'Sign in', exact: true }).click(),
  ]);
  await page.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
}

test("signed out, the account page's Sign in signs the user in (code + PKCE, a mistyped address corrected with 'Use a different address') and shows the account page", async (t) => {
  const user = await createUserIn(env, 'console');
  const page = await phonePage(t, 'light');
  await signInFromAccount(t, page, user.email, undefined, true);
  const body = await page.locator('main').innerText();
  t.true(body.includes(user.email), 'the account page is the signed-in user’s');
  t.is(await page.getByText('(this device)').count(), 1, 'this browser is listed as this device');
  // A callback whose state is not this browser's is refused, and signs nothing in.
  const forged = await page.goto(`${env.d.url}/account/callback?code=x&state=forged`);
  t.is(forged?.status(), 400);
  t.is(await page.getByRole('alert').count(), 1);
});

for (const scheme of ['light', 'dark'] as const) {
  test(`every page at 390 px in the ${scheme} scheme: no horizontal scrolling, no serious axe violation`, async (t) => {
    const page = await phonePage(t, scheme);
    const user = await createUserIn(env, `a11y-${scheme}`);

    await page.goto(`${env.d.url}/`);
    await page.getByRole('heading', { name: 'Sign-in service' }).waitFor();
    await checkPage(t, page, 'landing');

    await signInFromAccount(t, page, user.email, async (what) => {
      await checkPage(t, page, what);
      if (what === 'login, email step') await shoot(page, 'login', scheme);
      if (what === 'login, code step') await shoot(page, 'code', scheme);
    });
    // A third party's consent page, for the session this browser now has; Allow, so that the
    // account page lists an app.
    const { challenge } = pkce();
    await page.goto(
      authorizeUrl(env.d.url, {
        response_type: 'code',
        client_id: env.app.thirdParty.clientId,
        redirect_uri: REDIRECT,
        scope: 'openid email profile',
        state: 's',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
    );
    await page.getByRole('heading', { name: 'Allow Partner to access your account?' }).waitFor();
    await checkPage(t, page, 'consent');
    await shoot(page, 'consent', scheme);
    // Allow, so that the account page lists an app. Posted by fetch without following the
    // redirect: the client's redirect URI does not resolve, and this page stays put.
    const allowed = await page.evaluate(async () => {
      const form = document.querySelector<HTMLFormElement>('form[action="/authorize/consent"]')!;
      const body = new URLSearchParams();
      for (const [k, v] of new FormData(form)) if (typeof v === 'string') body.set(k, v);
      body.set('decision', 'allow');
      return (await fetch(form.action, { method: 'POST', body, redirect: 'manual' })).type;
    });
    t.is(allowed, 'opaqueredirect', 'Allow redirects to the client');

    await page.goto(`${env.d.url}/account`);
    await page.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
    t.is(await page.getByRole('button', { name: 'Remove access for Partner' }).count(), 1, 'the app is listed');
    await checkPage(t, page, 'account, signed in');
    await shoot(page, 'account', scheme);

    await page.goto(`${env.d.url}/logout`);
    await page.getByRole('heading', { name: /sign out/i }).waitFor();
    await checkPage(t, page, 'logout confirmation');

    const error = await page.goto(`${env.d.url}/authorize?client_id=no-such-client&response_type=code`);
    t.true((error?.status() ?? 0) >= 400, 'an error page');
    await checkPage(t, page, 'error page');
  });
}
