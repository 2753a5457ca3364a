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
import type { ExecutionContext } from 'ava';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import type { ConsoleHarness } from '../helpers/console.js';
import { codeFrom } from '../helpers/oauth.js';
import { DESKTOP, newPage } from './helpers.js';

/** The page pieces of every browser test (helpers.ts), for the console's tests too. */
export { addAuthenticator, checkPage, DESKTOP, PHONE, shoot } from './helpers.js';

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
  return newPage(t, browser, {
    viewport: opts.viewport ?? DESKTOP,
    colorScheme: 'light',
    bypassCSP: opts.bypassCSP ?? false,
  });
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

/**
 * An operator's passkey sign-in, as a person makes it: signed out, /console leads to the login
 * page; an emailed code signs them in; on the account page they add a passkey (Chromium's
 * virtual authenticator, `authenticator`); the cookies are cleared (a new browser session) and
 * /console signs them in with the passkey alone. Resolves on the Overview, with how many mails
 * the passkey sign-in sent (none is expected) and how many credentials the authenticator holds.
 */
export async function passkeyOperator(
  h: ConsoleHarness,
  context: BrowserContext,
  page: Page,
  authenticator: { cdp: CDPSession; id: string },
  email: string,
): Promise<{ mailsDuringPasskeySignIn: number; credentials: number; onLogin: string[] }> {
  const origin = originOf(h);
  const onLogin: string[] = [];
  await page.goto(`${origin}/console`);
  onLogin.push(new URL(page.url()).pathname);
  await emailCodeSignIn(h, page, email, `${origin}/console`);
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await page.goto(`${origin}/account`);
  await page.getByLabel('Name of the new passkey').fill('Console key');
  await Promise.all([
    page.waitForURL(`${origin}/account?done=passkey_added#passkeys`),
    page.getByRole('button', { name: 'Add a passkey' }).click(),
  ]);
  const { credentials } = await authenticator.cdp.send('WebAuthn.getCredentials', {
    authenticatorId: authenticator.id,
  });
  await context.clearCookies();
  const mails = h.sink.messages.length;
  await page.goto(`${origin}/console`);
  onLogin.push(new URL(page.url()).pathname);
  await passkeySignIn(page, `${origin}/console`);
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  return { mailsDuringPasskeySignIn: h.sink.messages.length - mails, credentials: credentials.length, onLogin };
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
