/**
 * The login page in a real headless Chromium in two languages other than English (German by
 * the request's ui_locales, French by the browser's own language, i.e. its Accept-Language)
 * and in its tenant's branding: the logo loads (an https logo, allowed by the page's CSP
 * img-src, served here by intercepting its origin) and the primary button has the tenant's
 * colour (docs/localisation.md, docs/branding.md). Runs only in the browser lane.
 */
import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import { startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { authorizeUrl, pkce, REDIRECT } from '../helpers/oauth.js';
import { clientCredentialsToken } from '../helpers/seed.js';
import { launchBrowser, newPage, screenshot } from './helpers.js';

const LOGO_ORIGIN = 'https://logo.brand.test';
/** A 1×1 PNG: naturalWidth 1 once it has loaded. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const COLOUR = '#0b5fff';

let env: LoginEnv;
let browser: Browser;

test.before(async () => {
  env = await startLoginEnv();
  browser = await launchBrowser();
  const admin = await clientCredentialsToken(env.d.url, env.app.admin.clientId, env.app.admin.secret);
  const res = await fetch(`${env.d.url}/api/admin/tenants/${env.app.tenantId}/branding`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      displayName: 'Acme Brand',
      logoUrl: `${LOGO_ORIGIN}/logo.png`,
      primaryColor: COLOUR,
      supportUrl: 'https://help.brand.test/',
    }),
  });
  if (res.status !== 200) throw new Error(`branding PUT: ${res.status} ${await res.text()}`);
});
test.after.always(async () => {
  await browser?.close();
  await stopLoginEnv(env);
});

const loginUrl = (extra: Record<string, string> = {}) =>
  authorizeUrl(env.d.url, {
    response_type: 'code',
    client_id: env.app.web.clientId,
    redirect_uri: REDIRECT,
    scope: 'openid email',
    state: 'st',
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
    ...extra,
  });

/** Serves the logo at its https origin (the host does not resolve; the page's CSP decides first). */
async function serveLogo(page: Page): Promise<void> {
  await page.route(`${LOGO_ORIGIN}/**`, (route) => route.fulfill({ status: 200, contentType: 'image/png', body: PNG }));
}

test('German by ui_locales=de: lang="de", the German label and button', async (t) => {
  const { page, errors } = await newPage(t, browser); // an en-US browser: ui_locales wins
  await serveLogo(page);
  t.is((await page.goto(loginUrl({ ui_locales: 'de' })))?.status(), 200);
  t.is(await page.getAttribute('html', 'lang'), 'de');
  t.is(await page.getByRole('heading', { name: 'Bei Web anmelden' }).count(), 1);
  t.is(await page.getByLabel('E-Mail-Adresse').count(), 1);
  t.true(await page.getByRole('button', { name: 'Code per E-Mail senden' }).isVisible());
  t.deepEqual(errors, []);
});

test('French by the browser’s language (Accept-Language fr-FR): lang="fr", the French label and button', async (t) => {
  const context = await browser.newContext({ locale: 'fr-FR' });
  t.teardown(() => context.close());
  const page = await context.newPage();
  await serveLogo(page);
  t.is((await page.goto(loginUrl()))?.status(), 200);
  t.is(await page.getAttribute('html', 'lang'), 'fr');
  t.is(await page.getByLabel('Adresse e-mail').count(), 1);
  t.true(await page.getByRole('button', { name: 'Recevoir un code par e-mail' }).isVisible());
  t.true(await page.getByRole('link', { name: 'Aide et assistance' }).isVisible(), 'the support link, in French');
});

test("the tenant's logo is shown and loaded, and the primary button has its colour", async (t) => {
  const { page, errors } = await newPage(t, browser);
  await serveLogo(page);
  await page.goto(loginUrl());
  const logo = page.locator('.brand img');
  await logo.waitFor({ state: 'visible' });
  await page.waitForFunction(() => document.querySelector<HTMLImageElement>('.brand img')?.complete);
  t.true(
    (await logo.evaluate((img: HTMLImageElement) => img.naturalWidth)) > 0,
    'the logo loaded (the CSP allowed its origin)',
  );
  t.true(await page.getByText('Acme Brand', { exact: true }).isVisible(), 'the display name beside it');
  const button = page.getByRole('button', { name: 'Email me a code' });
  t.is(await button.evaluate((b) => getComputedStyle(b).backgroundColor), 'rgb(11, 95, 255)');
  t.is(await button.evaluate((b) => getComputedStyle(b).color), 'rgb(255, 255, 255)', 'white is legible on it');
  t.log(`screenshot: ${await screenshot(page, 'login-branded')}`);
  t.deepEqual(errors, [], 'no CSP violation or script error');
});
