/**
 * FAPI 2.0 end to end in a real headless Chromium (docs/fapi.md): the tenant's profile is
 * switched on through the admin API; openid-client (a relying party no one here wrote) pushes a
 * signed request object (PAR + JAR) with private_key_jwt and a DPoP key, the user signs in on
 * the login page, the code is redeemed with DPoP, refreshed with DPoP, UserInfo is called with
 * DPoP, and a resource server checks `cnf.jkt` through introspection (with private_key_jwt; one
 * with a client secret is refused). The same browser's plain
 * /authorize is refused back to the client, and the tenant's client_secret_basic client is
 * refused at /token. The other refused variants are HTTP-level, in test/oauth/fapi.test.ts.
 * Runs only in the browser lane (`npm run test:browser`).
 */
import test from 'ava';
import * as oidc from 'openid-client';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { randomUUID } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { api } from '../helpers/api.js';
import { pushedAuthorization } from '../helpers/fapi.js';
import { startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { authorizeUrl, codeFrom, pkce, REDIRECT } from '../helpers/oauth.js';
import { introspectAs as introspectWithSecret, openServices, TEST_API } from '../helpers/seed.js';
import { interceptCallback, launchBrowser, newPage, withTimeout } from './helpers.js';

let env: LoginEnv;
let browser: Browser;
let key: CryptoKey;
/** A private_key_jwt client with no fapi_profile of its own: the tenant's applies. */
let clientId: string;
/** A resource server that introspects with private_key_jwt, as the tenant's profile requires. */
let resourceServer: string;

test.before(async () => {
  env = await startLoginEnv();
  const pair = await generateKeyPair('ES256', { extractable: true });
  key = pair.privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'rp', alg: 'ES256', use: 'sig' };
  const { ds, directory } = await openServices(env.db.url, env.db.dir);
  const c = await directory.createClient(
    env.app.tenantId,
    {
      name: 'Bank RP',
      redirect_uris: [REDIRECT],
      first_party: true,
      scopes: ['openid', 'email', 'offline_access'],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [jwk] },
    },
    { type: 'system', id: 'test' },
  );
  const rs = await directory.createClient(
    env.app.tenantId,
    {
      ...TEST_API,
      name: 'Bank API',
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [jwk] },
    },
    { type: 'system', id: 'test' },
  );
  await ds.destroy();
  clientId = c.client.client_id;
  resourceServer = rs.client.client_id;
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await stopLoginEnv(env);
});

const basic = (c: { clientId: string; secret: string }) =>
  'Basic ' + Buffer.from(`${c.clientId}:${c.secret}`).toString('base64');

test.serial(
  'openid-client signs in under the tenant FAPI 2.0 profile in Chromium; the non-conforming variants are refused',
  async (t) => {
    const url = env.d.url;
    // The tenant's profile on, through the admin API (its admin client's token, taken before).
    const admin = await fetch(`${url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(env.app.admin) },
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
    });
    const adminToken = ((await admin.json()) as { access_token: string }).access_token;
    const put = await api(url, 'PUT', `/api/admin/tenants/${env.app.tenantId}/fapi`, {
      token: adminToken,
      body: { profile: 'fapi2-security' },
    });
    t.is(put.status, 200, JSON.stringify(put.body));

    const { config, DPoP, verifier, checks, authUrl } = await pushedAuthorization(url, clientId, key, 'rp');

    const { page, errors } = await newPage(t, browser);
    const callback = interceptCallback(page);
    t.is((await page.goto(authUrl.toString()))?.status(), 200, 'the pushed request shows the login page');
    const earlier = new Set(env.sink.messages);
    await page.getByLabel('Email address').fill(env.app.user.email);
    await Promise.all([page.waitForURL(`${url}/login/email-code`), page.keyboard.press('Enter')]);
    const mail = await env.sink.waitFor((m) => !earlier.has(m) && m.to.includes(env.app.user.email), 15_000);
    await page.getByLabel('Sign-in code').fill(codeFrom(mail.text));
    await page.keyboard.press('Enter');
    const cb = await withTimeout(callback, 20_000, 'redirect to the client');
    t.is(cb.searchParams.get('iss'), url);

    const tokens = await oidc.authorizationCodeGrant(
      config,
      cb,
      { pkceCodeVerifier: verifier, expectedNonce: checks.nonce, expectedState: checks.state, idTokenExpected: true },
      undefined,
      { DPoP },
    );
    t.is(tokens.token_type, 'dpop');
    const jkt = (decodeJwt(tokens.access_token).cnf as { jkt: string }).jkt;
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
    t.is(refreshed.token_type, 'dpop');
    t.is(
      (await oidc.fetchUserInfo(config, refreshed.access_token, env.app.user.id, { DPoP })).email,
      env.app.user.email,
    );
    // The resource server's check: the token is active and bound to the key that proved it. It
    // authenticates with private_key_jwt (the profile's §5.3.2.1 holds at /introspect too).
    const introspection = await fetch(`${url}/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: refreshed.access_token,
        client_id: resourceServer,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: await new SignJWT({ iss: resourceServer, sub: resourceServer, aud: url, jti: randomUUID() })
          .setProtectedHeader({ alg: 'ES256', kid: 'rp' })
          .setExpirationTime('1m')
          .sign(key),
      }),
    });
    t.is(introspection.status, 200);
    const seen = (await introspection.json()) as { active: boolean; cnf?: unknown };
    t.is(seen.active, true);
    t.deepEqual(seen.cnf, { jkt });
    // A resource server with a client secret is refused under the tenant's profile.
    const bySecret = await introspectWithSecret(url, env.api, refreshed.access_token);
    t.is(bySecret.status, 401);
    t.is(bySecret.body.error, 'invalid_client');
    const bearer = await fetch(`${url}/userinfo`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
    t.is(bearer.status, 401, 'the bound token as Bearer');

    // Refused: a plain /authorize in the same browser goes back to the client as invalid_request.
    // The redirect's target does not resolve and a route does not see a redirect's hop, so the
    // request to the redirect URI is read as the browser makes it.
    const origin = new URL(REDIRECT).origin;
    const plainUrl = authorizeUrl(url, {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope: 'openid',
      state: 'plain',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    });
    const [toClient] = await Promise.all([
      page.waitForRequest((r) => r.url().startsWith(`${origin}/`)),
      page.goto(plainUrl).catch(() => undefined),
    ]);
    const plain = new URL(toClient.url());
    t.is(plain.searchParams.get('error'), 'invalid_request');
    t.is(plain.searchParams.get('state'), 'plain');

    // Refused: the tenant's client_secret_basic client, under the tenant's profile.
    const secret = await fetch(`${url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(env.app.web) },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT }),
    });
    t.is(secret.status, 401);
    t.is(((await secret.json()) as { error: string }).error, 'invalid_client');
    t.deepEqual(errors, [], 'no console errors');
  },
);
