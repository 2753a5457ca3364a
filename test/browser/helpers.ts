/**
 * A real headless Chromium for the browser lane (test/lanes/browser.sh, `npm run test:browser`):
 * Debian's /usr/bin/chromium driven through playwright-core. Nothing here downloads a browser
 * (never `playwright install`). These tests are excluded from `npm test`.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import type { ExecutionContext } from 'ava';
import {
  chromium,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type CDPSession,
  type Page,
} from 'playwright-core';
import { REDIRECT } from '../helpers/oauth.js';

/** The repository root (this file runs as dist/test/browser/helpers.js). */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Where screenshots go; git-ignored. */
export const ARTIFACTS = join(ROOT, 'test', 'artifacts');

/** Where the pages' screenshots go: IAM_SCREENSHOTS_DIR (docs/screenshots/ on a refresh), else ARTIFACTS. */
const SHOTS = process.env.IAM_SCREENSHOTS_DIR ? resolve(process.env.IAM_SCREENSHOTS_DIR) : ARTIFACTS;
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 800 };

export const CHROMIUM_PATH = process.env.IAM_TEST_CHROMIUM || '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/**
 * Launches headless Chromium. `chromium.launch` gives the browser a fresh temporary profile
 * (user-data dir) of its own, removed again by `browser.close()`; each test then takes its own
 * context (its own cookies) from `newContext`.
 */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    chromiumSandbox: false,
    args: CHROMIUM_ARGS,
    timeout: 60_000,
  });
}

export interface BrowserPage {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught page errors seen so far (a CSP violation shows up here). */
  errors: string[];
}

/**
 * A fresh context and page for one test, closed by the test's teardown: English, 800 x 700
 * unless `options` say otherwise.
 */
export async function newPage(
  t: ExecutionContext,
  browser: Browser,
  options: BrowserContextOptions = {},
): Promise<BrowserPage> {
  const context = await browser.newContext({ locale: 'en-US', viewport: { width: 800, height: 700 }, ...options });
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
 * A CDP virtual authenticator on `page`: a platform authenticator that verifies the user. It
 * answers an autofill (conditional) request at once, as if the user had picked the passkey:
 * unless `autofill`, the page is told conditional mediation is unavailable, so the login page
 * offers the passkey button alone, which the tests click.
 */
export async function addAuthenticator(
  context: BrowserContext,
  page: Page,
  opts: { autofill?: boolean } = {},
): Promise<{ cdp: CDPSession; id: string }> {
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
  if (!opts.autofill)
    await page.addInitScript(() => {
      if (window.PublicKeyCredential)
        PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);
    });
  return { cdp, id: authenticatorId };
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

/**
 * The page as PNGs `<name>-phone-<scheme>.png` and `<name>-desktop-<scheme>.png` in the
 * screenshots directory; the viewport is put back.
 */
export async function shoot(page: Page, name: string, scheme: 'light' | 'dark' = 'light'): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  const before = page.viewportSize() ?? PHONE;
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: join(SHOTS, `${name}-phone-${scheme}.png`), fullPage: true });
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: join(SHOTS, `${name}-desktop-${scheme}.png`), fullPage: true });
  await page.setViewportSize(before);
}

/** Saves a full-page PNG as test/artifacts/<name>.png (directory created if missing); returns the path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name.replace(/[^\w.-]+/g, '-')}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Whether the element matching `selector` has keyboard focus. */
export async function isFocused(page: Page, selector: string): Promise<boolean> {
  return page.locator(selector).evaluate((el) => el === document.activeElement);
}

/** A short description of the focused element, for assertion messages. */
export async function focusedElement(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el) return '(none)';
    const text = (el.textContent ?? '').trim().slice(0, 40);
    return `<${el.tagName.toLowerCase()}${el.id ? ` id="${el.id}"` : ''}> ${text}`;
  });
}

/**
 * Intercepts the relying party at `origin` (the test redirect URI's host does not resolve) and
 * resolves with the callback URL the browser was sent to.
 */
export function interceptCallback(page: Page, origin = new URL(REDIRECT).origin): Promise<URL> {
  return new Promise<URL>((resolve) => {
    void page.route(`${origin}/**`, async (route) => {
      resolve(new URL(route.request().url()));
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'ok' });
    });
  });
}

/** `p`, or a rejection naming `what` after `ms`: a step that hangs fails with its name. */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]);
}
