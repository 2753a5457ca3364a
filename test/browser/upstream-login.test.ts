/**
 * "Continue with <upstream>" in a real headless Chromium: our login page → the upstream's own
 * login page (a real node-oidc-provider on loopback HTTPS, test/helpers/upstream-op.ts; the
 * browser completes its form) → our callback → /authorize → the client's redirect URI with a
 * code, which the test redeems at our /token for tokens naming the brokered user.
 * The upstream's certificate is self-signed, so this context accepts it (ignoreHTTPSErrors);
 * the daemon trusts it through IAM_OUTBOUND_CA_FILE. Runs only in the browser lane.
 */
import test from 'ava';
import { decodeJwt } from 'jose';
import { rmSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { makeCert, type TestCert } from '../helpers/https-issuer.js';
import { authorizeUrl, pkce, REDIRECT } from '../helpers/oauth.js';
import { activeTenant, clientCredentialsToken, openServices } from '../helpers/seed.js';
import { startUpstreamOp, type UpstreamOp } from '../helpers/upstream-op.js';
import { interceptCallback, launchBrowser, screenshot, withTimeout } from './helpers.js';

let db: TestDb;
let cert: TestCert;
let d: Daemon;
let op: UpstreamOp;
let browser: Browser;
let tenantId: string;
let web: { clientId: string; secret: string };

test.before(async () => {
  cert = makeCert();
  db = await createTestDatabase();
  const actor = { type: 'system' as const, id: 'test' };
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  tenantId = (await activeTenant(provisioning, { name: 'Brokered', allow_signup: true }, actor)).id;
  const w = await directory.createClient(
    tenantId,
    { name: 'Web', redirect_uris: [REDIRECT], first_party: true, scopes: ['openid', 'profile', 'email'] },
    actor,
  );
  web = { clientId: w.client.client_id, secret: w.client_secret! };
  const adm = await directory.createClient(
    tenantId,
    { name: 'admin', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN] },
    actor,
  );
  await ds.destroy();
  d = await startDaemon(db.url, db.dir, { IAM_OUTBOUND_ALLOW_LOOPBACK: 'true', IAM_OUTBOUND_CA_FILE: cert.certFile });
  op = await startUpstreamOp({
    redirectUri: `${d.url}/login/upstream/callback`,
    cert,
    autoLogin: false,
    accounts: { erin: { email: 'erin@upstream.example', email_verified: true, name: 'Erin Upstream' } },
  });
  const admin = await clientCredentialsToken(d.url, adm.client.client_id, adm.client_secret!);
  const r = await fetch(`${d.url}/api/admin/tenants/${tenantId}/identity-providers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      issuer: op.issuer,
      client_id: op.clientId,
      client_secret: op.clientSecret,
      scopes: ['openid', 'email', 'profile', 'offline_access'],
      display_name: 'Upstream',
    }),
  });
  if (r.status !== 201) throw new Error(`register: ${r.status} ${await r.text()}`);
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await op?.close();
  await d?.stop();
  await db?.drop();
  if (cert) rmSync(cert.dir, { recursive: true, force: true });
});

test('sign in with "Continue with Upstream" at a real upstream, then a code and tokens from us', async (t) => {
  const context = await browser.newContext({ locale: 'en-US', ignoreHTTPSErrors: true });
  t.teardown(() => context.close());
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  const { verifier, challenge } = pkce();
  const callback = interceptCallback(page);
  const res = await page.goto(
    authorizeUrl(d.url, {
      response_type: 'code',
      client_id: web.clientId,
      redirect_uri: REDIRECT,
      scope: 'openid email profile',
      state: 'browser-state',
      nonce: 'browser-nonce',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }),
  );
  t.is(res?.status(), 200);
  const button = page.getByRole('button', { name: 'Continue with Upstream' });
  t.is(await button.count(), 1, 'one "Continue with Upstream" button');
  // Our page → the upstream's login page, where the browser signs in.
  await Promise.all([page.waitForURL(`${op.issuer}/interaction/**`), button.click()]);
  t.is(await page.title(), 'Upstream sign-in');
  await screenshot(page, 'upstream-login-upstream-page');
  await page.getByRole('button', { name: 'Sign in' }).click();
  const back = await withTimeout(callback, 20_000, 'the redirect to the client');
  t.is(back.searchParams.get('state'), 'browser-state');
  t.is(back.searchParams.get('iss'), d.url);
  const code = back.searchParams.get('code');
  t.truthy(code);
  const tokenRes = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic ' + Buffer.from(`${web.clientId}:${web.secret}`).toString('base64'),
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    }),
  });
  t.is(tokenRes.status, 200);
  const tokens = (await tokenRes.json()) as { access_token: string; id_token: string };
  t.truthy(tokens.access_token);
  const id = decodeJwt(tokens.id_token);
  t.is(id.nonce, 'browser-nonce');
  t.deepEqual(id.amr, ['fed']);
  // Our userinfo names the local user the upstream sign-in created.
  const me = await fetch(`${d.url}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  t.is(me.status, 200);
  t.is(((await me.json()) as { email: string }).email, 'erin@upstream.example');
  t.is(op.tokenGrants.filter((g) => g === 'authorization_code').length, 1);
});
