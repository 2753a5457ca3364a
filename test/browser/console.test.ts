/**
 * The operator console in a real headless Chromium (docs/console.md, "Browser lane"), against
 * one harness daemon (test/helpers/console.ts) on a localhost issuer:
 *
 * - a platform administrator signs in to /console through the login page with an email code,
 *   adds a passkey on the account page, and then signs in to /console with the passkey alone;
 * - step-up: a sign-in older than five minutes makes "Suspend tenant" answer "Sign in again";
 *   following it signs in again with the passkey (prompt=login), and the move goes through; the
 *   audit log page, filtered by the operator's user id, lists the suspend and the resume;
 * - every console page reached by following the console's own links from /console: no serious
 *   or critical axe-core violation and no horizontal scrolling at 390 px; Tab reaches the first
 *   navigation link with a visible focus ring; screenshots of the main pages.
 *
 * The tests share the one operator's browser state, so they run in order (test.serial).
 * The full scenario (tenant, application, user, token, disable, introspection, rotate, resolve)
 * is console-scenario.test.ts. Runs only in the browser lane.
 */
import test from 'ava';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { OPERATORS, seedOperations, startConsole, type ConsoleHarness } from '../helpers/console.js';
import { REDIRECT } from '../helpers/oauth.js';
import { launchBrowser } from './helpers.js';
import {
  addAuthenticator,
  checkPage,
  consoleContext,
  originOf,
  passkeyOperator,
  passkeySignIn,
  PHONE,
  shapeOf,
  shoot,
  signedInAs,
  walkConsole,
  type Visited,
} from './console-helpers.js';

let h: ConsoleHarness;
let browser: Browser;
let origin = '';
let adaId = '';
/** Ada's browser with the virtual authenticator holding her passkey (made by the first test). */
let ada: { context: BrowserContext; page: Page; errors: string[] } | undefined;

test.before(async () => {
  h = await startConsole();
  origin = originOf(h);
  browser = await launchBrowser();
  const [u] = await h.ds.query<{ id: string }[]>('SELECT id FROM users WHERE email = ?', [OPERATORS.ada]);
  adaId = u.id;
  // Something to list on each tenant's user and application pages (the walk takes whichever
  // tenant it reaches first).
  const actor = { type: 'system' as const, id: 'test' };
  for (const tenant of [h.acme, h.other]) {
    await h.services.directory.createUser(tenant, { email: 'grace@example.com', name: 'Grace' }, actor);
    await h.services.directory.createClient(tenant, { name: 'Web shop', redirect_uris: [REDIRECT] }, actor);
    await seedOperations(h, tenant);
  }
});

test.after.always(async () => {
  await browser?.close();
  await h?.close();
});

const tenantState = async (id: string) =>
  (await h.ds.query<{ lifecycle_state: string }[]>('SELECT lifecycle_state FROM tenants WHERE id = ?', [id]))[0]
    .lifecycle_state;

/** The newest live session of Ada's: its amr. */
const lastAmr = async () =>
  JSON.parse(
    (
      await h.ds.query<{ amr: string }[]>(
        'SELECT amr FROM sessions WHERE user_id = ? AND revoked_at IS NULL ORDER BY auth_time DESC LIMIT 1',
        [adaId],
      )
    )[0].amr,
  ) as string[];

/** Ada's page (the passkey sign-in test leaves it), or an error saying it is missing. */
function adaPage(): Page {
  if (!ada) throw new Error('the passkey sign-in test left no browser');
  return ada.page;
}

test.serial(
  'an operator adds a passkey on the account page, then signs in to /console with the passkey alone',
  async (t) => {
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1024, height: 800 } });
    context.setDefaultTimeout(15_000);
    context.setDefaultNavigationTimeout(20_000);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    ada = { context, page, errors };

    // Signed out, /console sends to the login page (through /console/sign-in and /authorize);
    // an emailed code, a passkey added on the account page, the cookies gone, the passkey alone.
    const signIn = await passkeyOperator(h, context, page, await addAuthenticator(context, page), OPERATORS.ada);
    t.deepEqual(signIn.onLogin, ['/authorize', '/authorize']);
    t.is(signIn.credentials, 1);
    t.is(await page.locator('nav.console a', { hasText: 'Overview' }).count(), 1);
    t.regex(await page.locator('nav.console').innerText(), /ada@example\.com \(platform administrator\)/);
    t.is(signIn.mailsDuringPasskeySignIn, 0, 'no code was emailed');
    t.deepEqual(await lastAmr(), ['hwk', 'user'], 'the session is a passkey sign-in (docs/passkeys.md)');
    t.deepEqual(errors, [], 'no page errors');
  },
);

/** On the tenant's page: "<Move> tenant…", a reason, the button. Resolves with the status of the answer. */
async function move(page: Page, tenantId: string, which: 'Suspend' | 'Resume'): Promise<number> {
  await page.goto(`${origin}/console/tenants/${tenantId}`);
  await page.getByRole('link', { name: `${which} tenant…` }).click();
  await page.getByLabel('Reason (kept in the audit log)').fill('browser lane');
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.getByRole('button', { name: `${which} tenant` }).click(),
  ]);
  await page.waitForLoadState();
  return res.status();
}

test.serial(
  'step-up: a stale sign-in is asked to sign in again; the passkey renews it and the suspend goes through; ' +
    'the audit log filtered by the operator lists the suspend and the resume',
  async (t) => {
    const page = adaPage();
    await h.ageSignIn(OPERATORS.ada);
    t.is(await move(page, h.acme, 'Suspend'), 403);
    await page.getByRole('heading', { name: 'Sign in again' }).waitFor();
    t.is(await tenantState(h.acme), 'active', 'nothing moved');

    // "Sign in again" asks the login page for a new authentication (prompt=login) even though
    // the session is live; the passkey answers it and the console is back.
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/authorize'),
      page.getByRole('link', { name: 'Sign in again' }).click(),
    ]);
    t.is(new URL(page.url()).searchParams.get('prompt'), 'login');
    await passkeySignIn(page, `${origin}/console`);

    t.is(await move(page, h.acme, 'Suspend'), 303);
    t.is(new URL(page.url()).pathname, `/console/tenants/${h.acme}`);
    t.regex(await page.locator('dl').first().innerText(), /suspended/);
    t.is(await tenantState(h.acme), 'suspended');
    t.is(await move(page, h.acme, 'Resume'), 303);
    t.is(await tenantState(h.acme), 'active');

    // The audit log, filtered with its own form by the operator's user id.
    await page.goto(`${origin}/console/audit`);
    await page.getByLabel('Actor id').fill(adaId);
    await Promise.all([
      page.waitForURL((u) => u.searchParams.get('actor') === adaId),
      page.getByRole('button', { name: 'Filter' }).click(),
    ]);
    const rows = await page.locator('table tbody tr').allInnerTexts();
    for (const action of ['tenant.suspend', 'tenant.resume'])
      t.true(
        rows.some((r) => r.includes(action) && r.includes(adaId) && r.includes(h.acme)),
        `the audit log lists ${action} by the operator on the tenant`,
      );
    t.true(
      rows.every((r) => r.includes(adaId)),
      'only the operator’s events',
    );
    t.deepEqual(ada!.errors, [], 'no page errors');
  },
);

/** Pages whose screenshots docs/console.md shows, by path shape. */
const SHOTS: Record<string, string> = {
  '/console': 'console-overview',
  '/console/tenants': 'console-tenants',
  '/console/tenants/:id': 'console-tenant',
  '/console/tenants/:id/users': 'console-users',
  '/console/tenants/:id/users/:id': 'console-user',
  '/console/tenants/:id/applications': 'console-applications',
  '/console/audit': 'console-audit',
};

test.serial(
  "every console page reached from /console by the console's own links: no serious axe violation and no " +
    'horizontal scrolling at 390 px; Tab reaches the first navigation link with a visible focus ring',
  async (t) => {
    const { context, page } = await consoleContext(t, browser, { viewport: PHONE, bypassCSP: true });
    await signedInAs(h, context, OPERATORS.ada);

    // Keyboard: from the top of the page, Tab reaches the console's first navigation link
    // (after at most the skip link), and the focus ring is drawn (WCAG 2.4.7, 2.4.11).
    await page.goto(`${origin}/console`);
    const first = page.locator('nav.console a').first();
    let reached = false;
    for (let i = 0; i < 4 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await first.evaluate((el) => el === document.activeElement);
    }
    t.true(reached, 'Tab reaches the first navigation link');
    const ring = await first.evaluate((el) => {
      const s = getComputedStyle(el);
      return { style: s.outlineStyle, width: parseFloat(s.outlineWidth) };
    });
    t.true(ring.style !== 'none' && ring.width >= 2, `a visible focus ring: ${JSON.stringify(ring)}`);

    const visited = await walkConsole(page, origin, async (v: Visited) => {
      t.true(v.status < 500, `${v.path} answered ${v.status}`);
      // A section not built yet answers 404 (a path the console links to before its page
      // exists); every page that is there is checked.
      if (v.status !== 200) return;
      await checkPage(t, page, v.path);
      const name = SHOTS[v.shape];
      if (name) await shoot(page, name);
    });
    const pages = visited.filter((v) => v.status === 200).map((v) => v.shape);
    t.log(`checked ${pages.length} pages: ${pages.join(' ')}`);
    const missing = visited.filter((v) => v.status !== 200).map((v) => `${v.shape} (${v.status})`);
    if (missing.length) t.log(`not built yet: ${missing.join(' ')}`);
    // The walk found the pages built so far (a broken link or walk would leave them out).
    for (const shape of ['/console', '/console/tenants', '/console/tenants/:id', '/console/audit'])
      t.true(pages.includes(shape), `the walk reached ${shape}`);
    t.true(
      pages.includes('/console/tenants/:id/suspend') || pages.includes('/console/tenants/:id/resume'),
      "the walk reached a tenant's confirmation form",
    );
    t.true(shapeOf(`/console/tenants/${h.acme}`) === '/console/tenants/:id', 'tenant ids are ids to the walk');
  },
);
