/**
 * The account page's profile in a real headless Chromium: the name form, and the address
 * change with the code read from the SMTP sink at the new address, the old address told.
 * Runs only in the browser lane.
 */
import test from 'ava';
import type { Browser } from 'playwright-core';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { loginKit } from '../helpers/login.js';
import { codeFrom } from '../helpers/oauth.js';
import { launchBrowser, newPage, screenshot } from './helpers.js';

let env: LoginEnv;
let browser: Browser;
const kit = loginKit(
  () => env.d.url,
  () => env.sink,
);

test.before(async () => {
  env = await startLoginEnv();
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await stopLoginEnv(env ?? {});
});

test('the user renames themselves, then moves to a new address with the code sent there', async (t) => {
  const user = await createUserIn(env, 'browserprofile');
  const jar = await kit.signIn(env.app.web.clientId, user.email);
  const { page, context } = await newPage(t, browser);
  await context.addCookies([
    {
      name: 'service_session',
      value: jar.cookies.get('service_session')!,
      url: env.d.url,
      httpOnly: true,
      sameSite: 'Lax',
    },
  ]);
  await page.goto(`${env.d.url}/account`);
  await page.getByRole('heading', { name: 'Profile' }).waitFor();

  // The name.
  await page.getByLabel('Name', { exact: true }).fill('Grace Hopper');
  await page.getByRole('button', { name: 'Save name' }).click();
  await page.getByRole('status').waitFor();
  t.regex(await page.getByRole('status').innerText(), /name was saved/);
  t.is(await page.getByLabel('Name', { exact: true }).inputValue(), 'Grace Hopper');

  // The address: the code goes to the new address.
  const newEmail = `grace-${Date.now()}@example.org`;
  const earlier = new Set(env.sink.messages);
  await page.getByLabel('New address').fill(newEmail);
  await page.getByRole('button', { name: 'Send a code' }).click();
  await page.getByRole('heading', { name: 'Confirm your new address' }).waitFor();
  const mail = await env.sink.waitFor((m) => !earlier.has(m) && m.to.includes(newEmail), 15_000);
  t.false(mail.to.includes(user.email));
  await page.getByLabel('Confirmation code').fill(codeFrom(mail.subject));
  await page.getByRole('button', { name: 'Confirm' }).click();
  await page.getByRole('status').waitFor();
  t.regex(await page.getByRole('status').innerText(), /address was changed/);
  t.regex(
    await page.locator('#address + p').innerText(),
    new RegExp(`${newEmail.replace(/[.]/g, '\\.')} \\(verified\\)`),
  );
  await screenshot(page, 'account-profile-after-address-change');

  // The old address is told.
  const notice = await env.sink.waitFor((m) => !earlier.has(m) && m.to.includes(user.email), 15_000);
  t.is(notice.subject, 'Your address was changed');
  t.true(notice.text.includes(newEmail));
});
