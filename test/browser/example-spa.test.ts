/**
 * examples/spa run for real, as its README says, in headless Chromium against a real daemon:
 * the page (oauth4webapi, a public client with PKCE) sends the user to the login page, the user
 * signs in with an email code, and back on the page its cross-origin call to /userinfo (CORS,
 * the page's origin registered as an allowed origin) shows the user's claims.
 * Runs only in the browser lane (`npm run test:browser`).
 */
import test from 'ava';
import type { Browser } from 'playwright-core';
import { freePort } from '../helpers/daemon.js';
import { startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { codeFrom } from '../helpers/oauth.js';
import { openServices } from '../helpers/seed.js';
import { startExample, type Example } from '../helpers/examples.js';
import { launchBrowser, newPage, screenshot } from './helpers.js';

let env: LoginEnv;
let spa: Example;
let spaUrl: string;
let browser: Browser;

test.before(async () => {
  env = await startLoginEnv();
  const port = await freePort();
  spaUrl = `http://localhost:${port}`;
  // Registered as the README says: public, first-party, redirect URI and allowed origin on localhost.
  const { ds, directory } = await openServices(env.db.url, env.db.dir);
  const c = await directory.createClient(
    env.app.tenantId,
    { name: 'Example SPA', public: true, first_party: true, redirect_uris: [`${spaUrl}/`], allowed_origins: [spaUrl] },
    { type: 'system', id: 'test' },
  );
  await ds.destroy();
  spa = await startExample(
    'spa',
    { ISSUER: env.d.url, CLIENT_ID: c.client.client_id, PORT: String(port) },
    /Example SPA on/,
  );
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await spa?.stop();
  await stopLoginEnv(env ?? {});
});

test('the example SPA signs a user in with PKCE and shows the claims of its cross-origin /userinfo call', async (t) => {
  const { page, errors } = await newPage(t, browser);
  const email = env.app.user.email;
  const failed: string[] = [];
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
  });
  await page.goto(`${spaUrl}/`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${env.d.url}/authorize?**`);

  const earlier = new Set(env.sink.messages);
  await page.getByLabel('Email address').fill(email);
  await Promise.all([page.waitForURL(`${env.d.url}/login/email-code`), page.keyboard.press('Enter')]);
  const mail = await env.sink.waitFor((m) => !earlier.has(m) && m.to.includes(email), 15_000);
  await page.getByLabel('Sign-in code').fill(codeFrom(mail.text));
  await page.keyboard.press('Enter');

  // Back on the SPA: the code redeemed at /token and /userinfo read, both cross-origin fetch().
  await page.locator('#userinfo').waitFor({ state: 'visible' });
  await screenshot(page, 'example-spa-signed-in');
  const userinfo = JSON.parse((await page.locator('#userinfo').textContent()) ?? '{}') as Record<string, unknown>;
  t.is(userinfo.sub, env.app.user.id);
  t.is(userinfo.email, email);
  t.is(await page.locator('#status').textContent(), `Signed in as ${email}.`);
  t.is(page.url(), `${spaUrl}/`, 'the code and state are gone from the address bar');
  // Nothing the SPA asked for failed (the login page's own favicon is the provider's business),
  // and its script threw nothing.
  t.deepEqual(
    failed.filter((f) => f.includes(spaUrl) || f.includes('/token') || f.includes('/userinfo')),
    [],
  );
  t.deepEqual(
    errors.filter((e) => e.startsWith('pageerror')),
    [],
  );
});
