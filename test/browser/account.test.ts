/**
 * The account page in a real headless Chromium: it lists the user's devices (the current one
 * marked) and signs another device out. Runs only in the browser lane.
 */
import test from 'ava';
import type { Browser } from 'playwright-core';
import type { TestDb } from '../helpers/db.js';
import { startLoginEnv, stopLoginEnv } from '../helpers/env.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { loginKit } from '../helpers/login.js';
import { sql, type App } from '../helpers/oauth.js';
import { launchBrowser, newPage, screenshot } from './helpers.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let browser: Browser;
const kit = loginKit(
  () => d.url,
  () => sink,
);

test.before(async () => {
  ({ db, d, app, sink } = await startLoginEnv());
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await stopLoginEnv({ db, d, sink });
});

test('the account page lists devices, marks the current one, and signs another one out', async (t) => {
  // Another device of the same user: a session signed in from Firefox on Linux.
  const other = await kit.tokensFor(app.web, app.user.email);
  const now = Date.now();
  await sql(
    db.url,
    db.dir,
    "UPDATE sessions SET user_agent = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' " +
      'WHERE tenant_id = ? AND created_at <= ?',
    [app.tenantId, now],
  );
  // This browser's own session.
  const mine = await kit.tokensFor(app.web, app.user.email);
  const { page, context } = await newPage(t, browser);
  await context.addCookies([
    {
      name: 'service_session',
      value: mine.jar.cookies.get('service_session')!,
      url: d.url,
      httpOnly: true,
      sameSite: 'Lax',
    },
  ]);

  const res = await page.goto(`${d.url}/account`);
  t.is(res!.status(), 200);
  t.regex(res!.headers()['content-security-policy'] ?? '', /frame-ancestors 'none'/);
  await page.getByRole('heading', { name: 'Devices' }).waitFor();
  const rows = page.locator('table[aria-labelledby="devices"] tbody tr');
  t.is(await rows.count(), 2);
  t.is(await page.getByText('(this device)').count(), 1);
  await screenshot(page, 'account-page');

  const signOut = page.getByRole('button', { name: /^Sign out Firefox on Linux$/ });
  t.is(await signOut.count(), 1);
  await signOut.click();
  await page.getByRole('status').waitFor();
  t.regex(await page.getByRole('status').innerText(), /signed out/);
  t.is(await rows.count(), 1);
  t.is(await page.getByText('(this device)').count(), 1);
  await screenshot(page, 'account-page-after-sign-out');

  // The signed-out device's tokens are dead; this browser's still work.
  t.is((await kit.userinfo(other.access_token)).status, 401);
  t.is((await kit.userinfo(mine.access_token)).status, 200);
});
