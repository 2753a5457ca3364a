/**
 * The account page's self-delete in a real headless Chromium (docs/directory.md): a stale
 * sign-in is sent to the step-up first; after it, the user types their address and the account
 * is erased, the session cookie cleared and the user's tokens dead. Runs only in the browser lane.
 */
import test from 'ava';
import type { Browser } from 'playwright-core';
import { STEP_UP_MAX_AGE_MS } from '../../shared/services/auth/passkeys.js';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { loginKit } from '../helpers/login.js';
import { codeFrom, sql } from '../helpers/oauth.js';
import { launchBrowser, newPage, screenshot } from './helpers.js';

let e: LoginEnv;
let browser: Browser;
const kit = loginKit(
  () => e.d.url,
  () => e.sink,
);

test.before(async () => {
  e = await startLoginEnv();
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await stopLoginEnv(e);
});

test('a user deletes their own account after a fresh sign-in; the cookie is cleared and the tokens die', async (t) => {
  const user = await createUserIn(e, 'selfdel');
  const tokens = await kit.tokensFor(e.app.web, user.email);
  // The sign-in is older than the step-up window.
  await sql(e.db.url, e.db.dir, 'UPDATE sessions SET auth_time = ? WHERE user_id = ?', [
    Date.now() - STEP_UP_MAX_AGE_MS - 60_000,
    user.id,
  ]);
  const { page, context } = await newPage(t, browser);
  await context.addCookies([
    {
      name: 'service_session',
      value: tokens.jar.cookies.get('service_session')!,
      url: e.d.url,
      httpOnly: true,
      sameSite: 'Lax',
    },
  ]);

  await page.goto(`${e.d.url}/account`);
  await page.getByRole('link', { name: 'Delete your account' }).click();
  t.false(await page.getByRole('button', { name: 'Delete my account' }).isVisible(), 'no delete form while stale');
  await page.getByRole('link', { name: 'Confirm it is you' }).click();
  const earlier = new Set(e.sink.messages);
  await page.getByRole('button', { name: 'Email me a code' }).click();
  const mail = await e.sink.waitFor((m) => !earlier.has(m) && m.to.includes(user.email), 15_000);
  await page.getByLabel('Confirmation code').fill(codeFrom(mail.text));
  await Promise.all([page.waitForURL(/\/account\?done=reauth/), page.getByRole('button', { name: 'Confirm' }).click()]);

  await page.getByRole('link', { name: 'Delete your account' }).click();
  await page.getByLabel('Type your email address to confirm').fill('someone-else@example.com');
  await page.getByRole('button', { name: 'Delete my account' }).click();
  await page.getByRole('alert').waitFor();
  t.is(((await sql(e.db.url, e.db.dir, 'SELECT id FROM users WHERE id = ?', [user.id])) as unknown[]).length, 1);

  await page.getByLabel('Type your email address to confirm').fill(user.email);
  await page.getByRole('button', { name: 'Delete my account' }).click();
  await page.getByRole('heading', { name: 'Your account was deleted' }).waitFor();
  await screenshot(page, 'account-deleted');

  t.false(
    (await context.cookies(e.d.url)).some((c) => c.name === 'service_session'),
    'the session cookie is cleared',
  );
  t.is(((await sql(e.db.url, e.db.dir, 'SELECT id FROM users WHERE id = ?', [user.id])) as unknown[]).length, 0);
  const events = (await sql(
    e.db.url,
    e.db.dir,
    "SELECT actor_type, actor_id FROM audit_events WHERE target_id = ? AND action = 'user.delete'",
    [user.id],
  )) as { actor_type: string; actor_id: string }[];
  t.deepEqual(events, [{ actor_type: 'user', actor_id: user.id }]);
  t.is((await kit.refresh(tokens.refresh_token, e.app.web)).status, 400);
  t.is((await kit.userinfo(tokens.access_token)).status, 401);
  const account = await page.goto(`${e.d.url}/account`);
  t.not(account!.status(), 200);
});
