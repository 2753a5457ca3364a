/**
 * CORS in a real headless Chromium (docs/oauth.md, "CORS"). A single-page application served
 * on a second loopback origin (another port on 127.0.0.1) runs the authorization code flow with
 * PKCE as a public client: its script makes the PKCE pair with WebCrypto, the user signs in on
 * the login page, and on the callback the page's own fetch() calls redeem the code at /token
 * and read /userinfo. A page on a third origin, not registered for the client, is refused:
 * the browser withholds the answers and fetch() rejects with a TypeError. Discovery stays
 * readable from there. Runs only in the browser lane (`npm run test:browser`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import type { TestDb } from '../helpers/db.js';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { codeFrom, type App } from '../helpers/oauth.js';
import { openServices } from '../helpers/seed.js';
import { launchBrowser, newPage, screenshot } from './helpers.js';

let env: LoginEnv;
let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let browser: Browser;
let spa: Server;
let third: Server;
let spaOrigin: string;
let thirdOrigin: string;
let clientId: string;

/** A static page: what an SPA's host serves. Its script is what each test runs in it. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><head><title>SPA</title></head><body><main>app</main></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

test.before(async () => {
  env = await startLoginEnv();
  ({ db, d, app, sink } = env);
  ({ server: spa, origin: spaOrigin } = await pageServer());
  ({ server: third, origin: thirdOrigin } = await pageServer());
  const { ds, directory } = await openServices(db.url, db.dir);
  const c = await directory.createClient(
    app.tenantId,
    {
      name: 'Browser app',
      public: true,
      first_party: true,
      redirect_uris: [`${spaOrigin}/callback`],
      allowed_origins: [spaOrigin],
    },
    { type: 'system', id: 'test' },
  );
  await ds.destroy();
  clientId = c.client.client_id;
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await new Promise((r) => spa?.close(r));
  await new Promise((r) => third?.close(r));
  await stopLoginEnv({ db, d, sink });
});

/** The page's own fetch() of an endpoint: its status and JSON, or the error it rejected with. */
type FetchOutcome = { ok: true; status: number; body: Record<string, unknown> } | { ok: false; error: string };

function pageFetch(
  page: Page,
  url: string,
  init: { method?: string; headers?: Record<string, string>; form?: Record<string, string> },
): Promise<FetchOutcome> {
  return page.evaluate(
    async ({ url, init }) => {
      try {
        const r = await fetch(url, {
          method: init.method ?? 'GET',
          headers: init.headers,
          body: init.form ? new URLSearchParams(init.form) : undefined,
        });
        return { ok: true as const, status: r.status, body: (await r.json()) as Record<string, unknown> };
      } catch (e) {
        return { ok: false as const, error: `${(e as Error).name}: ${(e as Error).message}` };
      }
    },
    { url, init },
  );
}

test.serial('an SPA on its registered origin runs PKCE and reads /token and /userinfo with fetch()', async (t) => {
  const user = await createUserIn(env, 'spa');
  const { page, errors } = await newPage(t, browser);

  // The app's page makes the PKCE pair (RFC 7636 §4.1, §4.2, S256) and state, keeps the
  // verifier in sessionStorage, and sends the browser to /authorize.
  await page.goto(`${spaOrigin}/`);
  const authorize = await page.evaluate(
    async ({ issuer, clientId, redirectUri }) => {
      const b64url = (bytes: Uint8Array) =>
        btoa(String.fromCharCode(...bytes))
          .replace(/\+/g, '-')
          .replace(/\//g, '_')
          .replace(/=+$/, '');
      const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
      const challenge = b64url(
        new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))),
      );
      const state = b64url(crypto.getRandomValues(new Uint8Array(16)));
      sessionStorage.setItem('pkce', JSON.stringify({ verifier, state }));
      const u = new URL(`${issuer}/authorize`);
      for (const [k, v] of Object.entries({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: redirectUri,
        scope: 'openid email profile',
        state,
        nonce: b64url(crypto.getRandomValues(new Uint8Array(16))),
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }))
        u.searchParams.set(k, v);
      return u.toString();
    },
    { issuer: d.url, clientId, redirectUri: `${spaOrigin}/callback` },
  );
  await page.goto(authorize);

  // The user signs in on the login page.
  const earlier = new Set(sink.messages);
  await page.getByLabel('Email address').fill(user.email);
  await Promise.all([page.waitForURL(`${d.url}/login/email-code`), page.keyboard.press('Enter')]);
  const mail = await sink.waitFor((m) => !earlier.has(m) && m.to.includes(user.email), 15_000);
  await page.getByLabel('Sign-in code').fill(codeFrom(mail.text));
  await Promise.all([page.waitForURL(`${spaOrigin}/callback?**`), page.keyboard.press('Enter')]);

  // Back on the app's origin: its script redeems the code and reads the user's claims.
  const cb = new URL(page.url());
  const stored = JSON.parse((await page.evaluate(() => sessionStorage.getItem('pkce'))) ?? '{}') as {
    verifier: string;
    state: string;
  };
  t.is(cb.searchParams.get('state'), stored.state, 'state comes back');
  const token = await pageFetch(page, `${d.url}/token`, {
    method: 'POST',
    form: {
      grant_type: 'authorization_code',
      client_id: clientId,
      code: cb.searchParams.get('code') ?? '',
      redirect_uri: `${spaOrigin}/callback`,
      code_verifier: stored.verifier,
    },
  });
  t.true(token.ok, `fetch(/token) resolved: ${JSON.stringify(token)}`);
  if (!token.ok) return;
  t.is(token.status, 200, JSON.stringify(token.body));
  const accessToken = String(token.body.access_token);
  t.is(typeof token.body.id_token, 'string');

  // A bearer token makes this a non-simple request: the browser sends a preflight first.
  const info = await pageFetch(page, `${d.url}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
  t.true(info.ok, `fetch(/userinfo) resolved: ${JSON.stringify(info)}`);
  if (info.ok) {
    t.is(info.status, 200);
    t.is(info.body.email, user.email);
  }
  t.log(`screenshot: ${await screenshot(page, 'cors-spa-callback')}`);

  // A page on a third origin, not registered for the client, with the same token and a code.
  const other = await browser.newContext();
  t.teardown(() => other.close());
  const otherPage = await other.newPage();
  await otherPage.goto(`${thirdOrigin}/`);
  const stolen = await pageFetch(otherPage, `${d.url}/userinfo`, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  t.false(stolen.ok, `fetch(/userinfo) from ${thirdOrigin} must reject: ${JSON.stringify(stolen)}`);
  if (!stolen.ok) t.regex(stolen.error, /^TypeError/);
  const tokenFromThird = await pageFetch(otherPage, `${d.url}/token`, {
    method: 'POST',
    form: { grant_type: 'authorization_code', client_id: clientId, code: 'x', redirect_uri: `${spaOrigin}/callback` },
  });
  t.false(tokenFromThird.ok, `fetch(/token) from ${thirdOrigin} must reject: ${JSON.stringify(tokenFromThird)}`);
  if (!tokenFromThird.ok) t.regex(tokenFromThird.error, /^TypeError/);

  // Discovery and the keys are public: readable from any origin.
  const discovery = await pageFetch(otherPage, `${d.url}/.well-known/openid-configuration`, {});
  t.true(discovery.ok && discovery.body.issuer === d.url, JSON.stringify(discovery));
  const jwks = await pageFetch(otherPage, `${d.url}/jwks`, {});
  t.true(jwks.ok && Array.isArray(jwks.body.keys), JSON.stringify(jwks));

  // No CORS refusal on the app's own page (Chromium logs one as a console error).
  t.deepEqual(
    errors.filter((e) => /CORS|Access-Control/i.test(e)),
    [],
    'no CORS errors on the app page',
  );
});
