/**
 * An operator's day in the console, end to end in a real headless Chromium (docs/console.md,
 * "Browser lane"), written against the console's visible texts (its labels, links and buttons)
 * so that it reads as what a person does:
 *
 * create a tenant; in it an application (confidential, one redirect URI, its secret shown once)
 * and a user; the user gets an access token from the application (email-code sign-in, code and
 * PKCE, the secret); disable the user: introspection by the application at once answers
 * `active: false` (RFC 7662 §2.2); rotate the application's secret (the new one shown once, and
 * it authenticates); resolve an operational notification state opened in the new tenant; the
 * audit log filtered by the operator's user id lists each move under its own action.
 *
 * It starts with the operator's passkey sign-in (the virtual authenticator); step-up is
 * console.test.ts's. Runs only in the browser lane.
 */
import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import { OPERATORS, startConsole, type ConsoleHarness } from '../helpers/console.js';
import { loginKit } from '../helpers/login.js';
import { authorizeUrl, challengeFrom, csrfFrom, get, pkce, REDIRECT } from '../helpers/oauth.js';
import { until } from '../helpers/poll.js';
import { introspectAs } from '../helpers/seed.js';
import { NotificationStates } from '../../shared/services/notification-states.js';
import { launchBrowser } from './helpers.js';
import { addAuthenticator, consoleContext, originOf, passkeyOperator } from './console-helpers.js';

let h: ConsoleHarness;
let browser: Browser;
let origin = '';

test.before(async () => {
  h = await startConsole();
  origin = originOf(h);
  browser = await launchBrowser();
});

test.after.always(async () => {
  await browser?.close();
  await h?.close();
});

/** The path's last segment, decoded (an id the console put in a URL). */
const lastSegment = (url: string) => decodeURIComponent(new URL(url, origin).pathname.split('/').pop() ?? '');

/**
 * A confirmation form: a reason where it asks for one, then the button. Resolves with the
 * status of the form's answer (303 for a move done) once the page it leads to has loaded.
 */
async function confirm(page: Page, button: string): Promise<number> {
  const reason = page.getByLabel(/^Reason/);
  if (await reason.count()) await reason.fill('console scenario');
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.getByRole('button', { name: button, exact: true }).click(),
  ]);
  await page.waitForLoadState();
  return res.status();
}

/**
 * The user's access token from the application: an email-code sign-in with the application's
 * client_id, /authorize (the consent page allowed if the application is a third party's), the
 * code redeemed with PKCE and the application's secret (RFC 6749 §4.1).
 */
async function accessToken(client: { clientId: string; secret: string }, email: string): Promise<string> {
  const kit = loginKit(
    () => h.d.url,
    () => h.sink,
  );
  const jar = await kit.signIn(client.clientId, email);
  const p = pkce();
  const r = await get(authorizeUrl(h.d.url, kit.authParams(client.clientId, p.challenge)), jar);
  let location = r.headers.get('location');
  if (r.status === 200) {
    const html = await r.text();
    const allowed = await fetch(`${h.d.url}/authorize/consent`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
      body: new URLSearchParams({ challenge: challengeFrom(html), csrf: csrfFrom(html), decision: 'allow' }),
    });
    location = allowed.headers.get('location');
  }
  const code = new URL(location ?? '').searchParams.get('code');
  if (!code) throw new Error(`no code: ${r.status} ${location}`);
  const t = await kit.redeem(code, p.verifier, client);
  if (t.status !== 200) throw new Error(`token ${t.status} ${JSON.stringify(t.body)}`);
  return t.body.access_token;
}

test('a platform operator signs in with a passkey, creates a tenant, an application and a user; disables the user (introspection: inactive at once), rotates the secret, resolves a notification state; the audit log lists each move by the operator', async (t) => {
  const { context, page, errors } = await consoleContext(t, browser);
  // 0. The platform operator signs in with a passkey (Chromium's virtual authenticator): an
  //    emailed code once, a passkey added on the account page, then the passkey alone.
  const signIn = await passkeyOperator(h, context, page, await addAuthenticator(context, page), OPERATORS.ada);
  t.is(signIn.mailsDuringPasskeySignIn, 0, 'the passkey alone signed in');
  const [ada] = await h.ds.query<{ id: string }[]>('SELECT id FROM users WHERE email = ?', [OPERATORS.ada]);

  // 1. A tenant, from the tenants list.
  await page.goto(`${origin}/console/tenants`);
  await Promise.all([
    page.waitForURL(`${origin}/console/tenants/new`),
    page.getByRole('link', { name: 'Create tenant' }).click(),
  ]);
  await page.getByLabel('Name', { exact: true }).fill('Scenario');
  await Promise.all([
    page.waitForURL((u) => /^\/console\/tenants\/[^/]+$/.test(u.pathname) && !u.pathname.endsWith('/new')),
    page.getByRole('button', { name: 'Create tenant' }).click(),
  ]);
  const tenantId = lastSegment(page.url());
  const base = `${origin}/console/tenants/${encodeURIComponent(tenantId)}`;
  await page.getByRole('heading', { name: 'Scenario', exact: true }).waitFor();
  // Provisioning runs on (docs/tenant-lifecycle.md): its users sign in once it is active.
  await until(async () => (await h.services.directory.requireTenant(tenantId)).lifecycle_state === 'active', {
    timeoutMs: 60_000,
    what: `tenant ${tenantId} active`,
  });

  // 2. A confidential application with one redirect URI: its secret shown once.
  await page.goto(`${base}/applications`);
  await page.getByRole('link', { name: 'Create application' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Scenario app');
  await page.getByLabel('Redirect URIs').fill(REDIRECT);
  await page.getByLabel('Type', { exact: true }).selectOption('confidential');
  t.is(await confirm(page, 'Create application'), 200);
  const secret = (await page.locator('code#secret').innerText()).trim();
  t.true(secret.length >= 32, 'the secret is shown');
  t.regex(await page.locator('body').innerText(), /once/i, 'the page says it is shown once');
  await Promise.all([
    page.waitForURL((u) => u.pathname.startsWith('/console/tenants/') && u.pathname.includes('/applications/')),
    page.getByRole('link', { name: 'Open the application' }).click(),
  ]);
  const app = { clientId: lastSegment(page.url()), secret };

  // 3. A user (no invitation: the checkbox "Send a sign-in link by email" is left alone).
  await page.goto(`${base}/users`);
  await page.getByRole('link', { name: 'Create user' }).click();
  await page.getByLabel('Email', { exact: true }).fill('scenario@example.com');
  await page.getByLabel('Name', { exact: true }).fill('Scenario User');
  t.is(await confirm(page, 'Create user'), 303);
  t.regex(new URL(page.url()).pathname, /\/users\/[^/]+$/);
  const userUrl = page.url();

  // 4. The user's access token from the application; introspection by it: active.
  const token = await accessToken(app, 'scenario@example.com');
  const before = await introspectAs(h.d.url, app, token);
  t.is(before.status, 200);
  t.is(before.body.active, true, 'the token is live before the user is disabled');

  // 5. Disable the user: the token is inactive right after (RFC 7662 §2.2).
  await page.goto(userUrl);
  await page.getByRole('link', { name: 'Disable user…' }).click();
  t.is(await confirm(page, 'Disable user'), 303);
  t.is(page.url(), userUrl, 'back on the user');
  t.deepEqual((await introspectAs(h.d.url, app, token)).body, { active: false });

  // 6. Rotate the application's secret: the new one shown once, and it authenticates.
  await page.goto(`${base}/applications/${encodeURIComponent(app.clientId)}`);
  await page.getByRole('link', { name: 'Rotate secret…' }).click();
  t.is(await confirm(page, 'Rotate secret'), 200);
  const rotated = (await page.locator('code#secret').innerText()).trim();
  t.not(rotated, secret, 'a new secret');
  t.is((await introspectAs(h.d.url, { clientId: app.clientId, secret: rotated }, token)).status, 200);

  // 7. An operational notification state opened in the new tenant (as the metadata poller
  //    opens one), resolved from the tenant's notifications page.
  const states = new NotificationStates(h.ds);
  const raised = await states.raise(tenantId, 'metadata_expiring', {
    type: 'federation_trust_source',
    id: 'fts_scenario',
  });
  t.is(raised.outcome, 'opened');
  await page.goto(`${base}/notifications`);
  await page.getByRole('link', { name: 'Resolve…' }).click();
  t.is(await confirm(page, 'Resolve'), 303);
  t.is((await states.get(tenantId, raised.id!)).state, 'resolved');

  // 8. The audit log, filtered by the operator: each move under its own action, in the tenant.
  await page.goto(`${origin}/console/audit`);
  await page.getByLabel('Actor id').fill(ada.id);
  await Promise.all([
    page.waitForURL((u) => u.searchParams.get('actor') === ada.id),
    page.getByRole('button', { name: 'Filter' }).click(),
  ]);
  const rows = await page.locator('table tbody tr').allInnerTexts();
  for (const action of [
    'tenant.create',
    'client.create',
    'user.create',
    'user.disable',
    'client.secret.add',
    'notification_state.resolve',
  ])
    t.true(
      rows.some((r) => r.includes(action)),
      `the audit log lists ${action}`,
    );
  t.true(
    rows.every((r) => r.includes(ada.id)),
    "only the operator's events",
  );
  // The browser's own /favicon.ico request is a 404 (the service serves none); anything else,
  // a CSP violation or a script error, is the page's.
  t.deepEqual(
    errors.filter((e) => !/Failed to load resource: .* 404/.test(e)),
    [],
    'no page errors',
  );
});
