/**
 * examples/web-app run for real, as its README says, against a real daemon: a user signs in
 * through the app's own routes (the email-code login in between), sees the claims page, and
 * signs out at the app and at the provider (RP-Initiated Logout).
 */
import test from 'ava';
import { freePort } from '../helpers/daemon.js';
import { startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { openServices } from '../helpers/seed.js';
import { challengeFrom, codeFrom, csrfFrom } from '../helpers/oauth.js';
import { Browser, startExample, type Example } from '../helpers/examples.js';

let env: LoginEnv;
let app: Example;
let appUrl: string;

test.before(async () => {
  env = await startLoginEnv();
  // Registered as the README says: a confidential, first-party client whose redirect URIs are
  // on http://localhost (the loopback name, docs/oauth.md "Loopback redirect URIs").
  const port = await freePort();
  appUrl = `http://localhost:${port}`;
  const { ds, directory } = await openServices(env.db.url, env.db.dir);
  const c = await directory.createClient(
    env.app.tenantId,
    { name: 'Example web app', redirect_uris: [`${appUrl}/callback`, `${appUrl}/`], first_party: true },
    { type: 'system', id: 'test' },
  );
  await ds.destroy();
  app = await startExample(
    'web-app',
    { ISSUER: env.d.url, CLIENT_ID: c.client.client_id, CLIENT_SECRET: c.client_secret!, PORT: String(port) },
    /Example web app on/,
  );
});
test.after.always(async () => {
  await app?.stop();
  await stopLoginEnv(env ?? {});
});

test('a user signs in through the web app (code flow, PKCE, email code), sees their claims, and signs out', async (t) => {
  const browser = new Browser();
  const email = env.app.user.email;

  // The app sends the browser to /authorize; with no session there the login page is shown.
  const login = await browser.follow(`${appUrl}/login`);
  t.is(login.res.status, 200);
  t.true(login.url.startsWith(`${env.d.url}/authorize?`), login.url);
  const authorize = new URL(login.url).searchParams;
  t.is(authorize.get('code_challenge_method'), 'S256');
  t.is(authorize.get('redirect_uri'), `${appUrl}/callback`);
  const appCookie = browser.jar(appUrl).raw.find((l) => l.startsWith('webapp_session='));
  t.regex(appCookie ?? '', /HttpOnly/i);
  t.regex(appCookie ?? '', /SameSite=Lax/i);

  const html = await login.res.text();
  const form = { challenge: challengeFrom(html), csrf: csrfFrom(html) };
  const post = (path: string, body: Record<string, string>, hops: string[] = []) =>
    browser.follow(
      `${env.d.url}${path}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body),
      },
      hops,
    );
  const earlier = new Set(env.sink.messages);
  t.is((await post('/login/email-code', { ...form, email })).res.status, 200);
  const mail = await env.sink.waitFor((m) => !earlier.has(m) && m.to.includes(email), 15_000);

  // The code completes the sign-in; the redirects lead back through the app's callback to /me.
  const hops: string[] = [];
  const done = await post('/login/verify', { ...form, email, code: codeFrom(mail.text) }, hops);
  t.true(
    hops.some((h) => h.startsWith(`${appUrl}/callback?code=`)),
    hops.join('\n'),
  );
  t.is(done.url, `${appUrl}/me`);
  t.is(done.res.status, 200);
  const page = await done.res.text();
  const shown = /<pre id="claims">([\s\S]*?)<\/pre>/.exec(page)![1].replace(/&quot;/g, '"');
  const claims = JSON.parse(shown) as Record<string, unknown>;
  t.is(claims.email, email);
  t.is(claims.sub, env.app.user.id);
  t.is(claims.iss, env.d.url);

  // Sign out: the app forgets the session, the provider ends its own and sends the browser home.
  const out = await browser.follow(`${appUrl}/logout`);
  t.is(out.url, `${appUrl}/`);
  t.regex(await out.res.text(), /not signed in/);
  const again = await browser.follow(`${appUrl}/login`);
  t.true(again.url.startsWith(`${env.d.url}/authorize?`), 'the provider asks to sign in again');
  t.regex(await again.res.text(), /name="challenge"/);
});
