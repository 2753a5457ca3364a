/**
 * The operator console in a real headless Chromium (docs/console.md, "Browser lane"): an
 * operator's browser context, a CDP virtual authenticator for passkeys, the 390 px and axe-core
 * check of a page, a breadth-first walk of the console's own links, and the screenshots. Shared
 * by test/browser/console.test.ts and test/browser/console-scenario.test.ts.
 *
 * The browser always talks to http://localhost:<port>, the harness daemon's issuer: WebAuthn
 * refuses an IP address as RP ID (WebAuthn §5.1.3 step 8), and cookies are per host, so the
 * console's pages, the login page and the account page must all be on that one origin.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type { ExecutionContext } from 'ava';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import type { ConsoleHarness } from '../helpers/console.js';
import { codeFrom } from '../helpers/oauth.js';
import { ARTIFACTS } from './helpers.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 800 };
const SHOTS = process.env.IAM_SCREENSHOTS_DIR ? resolve(process.env.IAM_SCREENSHOTS_DIR) : ARTIFACTS;

/** The origin the browser uses: the daemon's localhost issuer (startLocalhostDaemon). */
export const originOf = (h: ConsoleHarness) => `http://localhost:${h.d.port}`;

/**
 * A context for one test, closed by its teardown. `bypassCSP` lets axe-core be injected past
 * the pages' nonce CSP (the pages themselves run no script).
 */
export async function consoleContext(
  t: ExecutionContext,
  browser: Browser,
  opts: { viewport?: { width: number; height: number }; bypassCSP?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({
    locale: 'en-US',
    viewport: opts.viewport ?? DESKTOP,
    colorScheme: 'light',
    bypassCSP: opts.bypassCSP ?? false,
  });
  t.teardown(() => context.close());
  context.setDefaultTimeout(15_000);
  context.setDefaultNavigationTimeout(20_000);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  return { context, page, errors };
}

/**
 * Puts the session of an email-code sign-in (the harness's, as the login page leaves it) into
 * the browser: for tests about the pages rather than the sign-in, which console.test.ts drives
 * through the login page itself.
 */
export async function signedInAs(h: ConsoleHarness, context: BrowserContext, email: string): Promise<void> {
  const jar = await h.signIn(email);
  const url = originOf(h);
  await context.addCookies([...jar.cookies].map(([name, value]) => ({ name, value, url })));
}

/** A CDP virtual authenticator on `page`: a platform authenticator that verifies the user. */
export async function addAuthenticator(context: BrowserContext, page: Page): Promise<{ cdp: CDPSession; id: string }> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  // The login page then offers the passkey button alone (no autofill request answered at once),
  // which the tests click, as passkeys.test.ts does.
  await page.addInitScript(() => {
    if (window.PublicKeyCredential) PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);
  });
  return { cdp, id: authenticatorId };
}

/** On the login page: the email, the emailed code, "Sign in". Resolves once back on `landing`. */
export async function emailCodeSignIn(h: ConsoleHarness, page: Page, email: string, landing: string): Promise<void> {
  await page.getByLabel('Email address').fill(email);
  const earlier = new Set(h.sink.messages);
  await page.getByRole('button', { name: 'Email me a code' }).click();
  const mail = await h.sink.waitFor((m) => !earlier.has(m) && m.to.includes(email), 15_000);
  await page.getByLabel('Sign-in code').fill(codeFrom(mail.text));
  await Promise.all([page.waitForURL(landing), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
}

/** On the login page: "Sign in with a passkey". Resolves once back on `landing`. */
export async function passkeySignIn(page: Page, landing: string): Promise<void> {
  await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
  await Promise.all([page.waitForURL(landing), page.getByRole('button', { name: 'Sign in with a passkey' }).click()]);
}

/** No horizontal scrolling at the page's width and no serious or critical WCAG 2.2 A/AA axe violation. */
export async function checkPage(t: ExecutionContext, page: Page, what: string): Promise<void> {
  await page.waitForLoadState();
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
  t.true(scrollWidth <= innerWidth, `${what}: scrollWidth ${scrollWidth} > ${innerWidth}`);
  await page.addScriptTag({ content: AXE });
  const violations = await page.evaluate(async () => {
    interface Violation {
      id: string;
      impact: string | null;
      nodes: { target: string[] }[];
    }
    const axe = (window as unknown as { axe: { run: (o: object) => Promise<{ violations: Violation[] }> } }).axe;
    const r = await axe.run({
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] },
    });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  t.deepEqual(violations, [], `${what}: axe violations`);
}

/** The page as PNGs `<name>-phone-light.png` and `<name>-desktop-light.png`; the viewport is put back. */
export async function shoot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  const before = page.viewportSize() ?? PHONE;
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: join(SHOTS, `${name}-phone-light.png`), fullPage: true });
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: join(SHOTS, `${name}-desktop-light.png`), fullPage: true });
  await page.setViewportSize(before);
}

/**
 * A console path's shape: each segment that is an id becomes `:id`. The console's own words are
 * lowercase letters and dashes, shorter than 20; an id has another character (`ten_…`,
 * `usr_…`, `console.…`) or is longer (a client_id is 24 random base64url characters, which may
 * happen to be letters alone). Two pages of one shape are one template over other rows.
 */
export const shapeOf = (path: string) =>
  path
    .split('/')
    .map((s) => (/[^a-z-]/.test(s) || s.length >= 20 ? ':id' : s))
    .join('/');

/** Query parameters that only re-order, page or continue a list: a link differing by them alone is the same page. */
const LIST_ONLY = ['sort', 'page', 'cursor'];

/** Paths of the console that are not pages of it: the sign-in leaves for the login page. */
const NOT_PAGES = /^\/console\/(sign-in|callback)(\/|$)/;

export interface Visited {
  path: string;
  shape: string;
  status: number;
}

/**
 * Breadth-first from /console over the console's own links (same origin, under /console, GET
 * only: forms are not submitted), so that every page the console links to is visited, new pages
 * included, without a list to keep up to date. One page per shape (the first reached) and at most
 * `cap` pages. `visit` runs on each page once loaded, with its status.
 */
export async function walkConsole(
  page: Page,
  origin: string,
  visit: (v: Visited) => Promise<void>,
  cap = 60,
): Promise<Visited[]> {
  const queue = ['/console'];
  const seen = new Set([shapeOf('/console')]);
  const done: Visited[] = [];
  while (queue.length && done.length < cap) {
    const path = queue.shift()!;
    const res = await page.goto(`${origin}${path}`);
    const v = { path, shape: shapeOf(new URL(path, origin).pathname), status: res?.status() ?? 0 };
    done.push(v);
    await visit(v);
    const hrefs = await page.$$eval('a[href]', (as) => as.map((a) => (a as HTMLAnchorElement).href));
    for (const href of hrefs) {
      const u = new URL(href);
      if (u.origin !== origin || !u.pathname.startsWith('/console') || NOT_PAGES.test(u.pathname)) continue;
      for (const k of LIST_ONLY) u.searchParams.delete(k);
      u.searchParams.sort();
      const key = shapeOf(u.pathname) + (u.search ? `?${[...u.searchParams.keys()].join('&')}` : '');
      if (seen.has(key)) continue;
      seen.add(key);
      queue.push(u.pathname + u.search);
    }
  }
  return done;
}
