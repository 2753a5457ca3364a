/**
 * The behaviours the OpenID Foundation's Basic OP and Config OP certification plans check, one
 * test per module (or group of modules), titled by the module's name so that
 * docs/conformance.md can point at it. The suite itself cannot run here (no network), so each
 * test makes the requests the suite's module makes, as the suite makes them: with a client
 * registered the way a certification run registers it (confidential, client_secret_basic or
 * client_secret_post, RS256 ID tokens, `require_pkce: false`), no PKCE, `response_type=code`.
 */
import test from 'ava';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import type { TestDb } from '../helpers/db.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import type { ClientCreds } from '../helpers/login.js';
import { clientCredentialsToken } from '../helpers/seed.js';
import { loginKit } from '../helpers/login.js';
import { authorizeUrl, CookieJar, get, REDIRECT, sql, type App } from '../helpers/oauth.js';
import { startLoginEnv, stopLoginEnv } from '../helpers/env.js';
import { api } from '../helpers/api.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let adminToken: string;
/** The client a certification run registers: client_secret_basic, RS256, no PKCE. */
let suite: ClientCreds;
/** The same for oidcc-server-client-secret-post: client_secret_post. */
let suitePost: ClientCreds;
let n = 0;

/** Registers a client through the admin API, as an operator preparing a certification run would. */
async function register(extra: Record<string, unknown>): Promise<ClientCreds> {
  const res = await api<{ client_id: string; client_secret: string }>(
    d.url,
    'POST',
    `/api/admin/tenants/${app.tenantId}/clients`,
    {
      token: adminToken,
      body: {
        name: 'OpenID conformance suite',
        redirect_uris: [REDIRECT],
        first_party: true,
        scopes: ['openid', 'profile', 'email', 'offline_access'],
        id_token_signed_response_alg: 'RS256',
        require_pkce: false,
        ...extra,
      },
    },
  );
  const body = res.body;
  if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(body)}`);
  return { clientId: body.client_id, secret: body.client_secret };
}

test.before(async () => {
  ({ db, d, app, sink } = await startLoginEnv());
  adminToken = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);
  suite = await register({});
  suitePost = await register({ token_endpoint_auth_method: 'client_secret_post' });
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

const kit = loginKit(
  () => d.url,
  () => sink,
);

/** A fresh user per test, signed in through the direct API: parallel tests never share codes. */
async function signedIn(): Promise<{ jar: CookieJar; userId: string; email: string }> {
  const email = `conf${++n}-${Date.now()}@example.com`;
  const res = await fetch(`${d.url}/api/admin/tenants/${app.tenantId}/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify({ email, name: `Conformance ${n}` }),
  });
  if (res.status !== 201) throw new Error(`create user: ${res.status}`);
  const { id } = (await res.json()) as { id: string };
  return { jar: await kit.signIn(suite.clientId, email), userId: id, email };
}

/**
 * GET /authorize for the suite's client as the suite sends it: no PKCE. `extra` overrides or
 * adds parameters (undefined drops one).
 */
async function authorize(
  jar: CookieJar | undefined,
  extra: Record<string, string | undefined> = {},
  client: ClientCreds = suite,
) {
  const r = await get(
    authorizeUrl(d.url, {
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: REDIRECT,
      scope: 'openid email',
      state: 's1',
      nonce: 'n1',
      ...extra,
    }),
    jar,
  );
  const location = r.headers.get('location');
  return { r, loc: location ? new URL(location) : undefined };
}

/** POST /token with client_secret_basic and no code_verifier, as the suite redeems a code. */
async function redeem(code: string, client: ClientCreds = suite) {
  const res = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: kit.basic(client) },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

async function redeemIdToken(code: string) {
  const t = await redeem(code);
  if (t.status !== 200) throw new Error(`token ${t.status} ${JSON.stringify(t.body)}`);
  const { access_token, id_token, refresh_token } = t.body;
  return { access_token, id_token, refresh_token, idClaims: decodeJwt(id_token) };
}

const isLoginPage = async (r: Response) => r.status === 200 && /name="email"/.test(await r.text());

test(
  'oidcc-server, oidcc-idtoken-rs256, oidcc-idtoken-signature, oidcc-userinfo-get, oidcc-prompt-none-logged-in, ' +
    'oidcc-refresh-token: the code flow with openid-client, RS256, no PKCE',
  async (t) => {
    const { jar, userId, email } = await signedIn();
    const config = await oidc.discovery(
      new URL(d.url),
      suite.clientId,
      { redirect_uris: [REDIRECT], id_token_signed_response_alg: 'RS256' },
      oidc.ClientSecretBasic(suite.secret),
      { execute: [oidc.allowInsecureRequests] },
    );
    const checks = { nonce: oidc.randomNonce(), state: oidc.randomState() };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid email profile offline_access',
      ...checks,
    });
    t.is(url.searchParams.get('code_challenge'), null, 'no PKCE, as the suite sends none');
    // oidcc-server: the browser already signed in; oidcc-prompt-none-logged-in: the same with prompt=none.
    for (const prompt of [undefined, 'none']) {
      if (prompt) url.searchParams.set('prompt', prompt);
      const r = await get(url.toString(), jar);
      t.is(r.status, 302, `prompt=${prompt}`);
      const callback = new URL(r.headers.get('location')!);
      t.is(callback.searchParams.get('iss'), d.url);
      const tokens = await oidc.authorizationCodeGrant(config, callback, {
        expectedNonce: checks.nonce,
        expectedState: checks.state,
        idTokenExpected: true,
      });
      const claims = tokens.claims()!;
      t.is(claims.sub, userId);
      t.is(claims.aud, suite.clientId);
      t.is(typeof claims.auth_time, 'number');
      // oidcc-idtoken-rs256 and -signature: RS256, by the key jwks_uri publishes under the header's kid.
      const { protectedHeader } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${d.url}/jwks`)), {
        issuer: d.url,
        audience: suite.clientId,
        algorithms: ['RS256'],
      });
      t.is(protectedHeader.alg, 'RS256');
      t.truthy(protectedHeader.kid);
      // oidcc-userinfo-get.
      const info = await oidc.fetchUserInfo(config, tokens.access_token, userId);
      t.is(info.email, email);
      t.truthy(info.name);
      // oidcc-refresh-token: the refresh token rotates, and the new access token works.
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      t.not(refreshed.refresh_token, tokens.refresh_token);
      t.is((await oidc.fetchUserInfo(config, refreshed.access_token, userId)).sub, userId);
    }
  },
);

test('oidcc-codereuse, oidcc-codereuse-30seconds: a code redeemed twice is refused and its tokens revoked', async (t) => {
  const { jar } = await signedIn();
  const { loc } = await authorize(jar, { prompt: 'none' });
  const code = loc!.searchParams.get('code')!;
  const first = await redeemIdToken(code);
  t.is((await kit.userinfo(first.access_token)).status, 200);
  const again = await redeem(code);
  t.is(again.status, 400);
  t.is(again.body.error, 'invalid_grant');
  t.is((await kit.userinfo(first.access_token)).status, 401, 'the first access token is revoked');
  t.is((await kit.refresh(first.refresh_token, suite)).body.error, 'invalid_grant', 'and its refresh token');
});

test('oidcc-prompt-none-not-logged-in: prompt=none without a session is login_required, with state and iss', async (t) => {
  const { r, loc } = await authorize(undefined, { prompt: 'none', state: 'st-none' });
  t.is(r.status, 302);
  t.is(`${loc!.origin}${loc!.pathname}`, REDIRECT);
  t.is(loc!.searchParams.get('error'), 'login_required');
  t.is(loc!.searchParams.get('state'), 'st-none');
  t.is(loc!.searchParams.get('iss'), d.url);
});

test('oidcc-ensure-registered-redirect-uri: an unregistered redirect_uri is an error page, never a redirect', async (t) => {
  const { jar } = await signedIn();
  const { r, loc } = await authorize(jar, { prompt: 'none', redirect_uri: 'https://attacker.example.test/cb' });
  t.is(r.status, 400);
  t.is(loc, undefined);
  t.regex(await r.text(), /No redirect was made/);
});

test('oidcc-ensure-request-with-valid-pkce-succeeds: PKCE the suite sends is verified although the client need not send it', async (t) => {
  const { jar } = await signedIn();
  const verifier = oidc.randomPKCECodeVerifier();
  const challenge = await oidc.calculatePKCECodeChallenge(verifier);
  const { loc } = await authorize(jar, { prompt: 'none', code_challenge: challenge, code_challenge_method: 'S256' });
  const code = loc!.searchParams.get('code')!;
  const res = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: kit.basic(suite) },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    }),
  });
  t.is(res.status, 200);
  t.is(typeof ((await res.json()) as { id_token?: string }).id_token, 'string');
});

test('oidcc-response-type-missing: no response_type is an invalid_request redirect with state and iss', async (t) => {
  const { r, loc } = await authorize(undefined, { response_type: undefined, state: 'st-missing' });
  t.is(r.status, 302);
  t.is(`${loc!.origin}${loc!.pathname}`, REDIRECT);
  t.is(loc!.searchParams.get('error'), 'invalid_request');
  t.is(loc!.searchParams.get('state'), 'st-missing');
  t.is(loc!.searchParams.get('iss'), d.url);
  t.is(loc!.searchParams.get('code'), null);
});

test('oidcc-ensure-request-without-nonce-succeeds-for-code-flow: a code, and an ID token without nonce', async (t) => {
  const { jar } = await signedIn();
  const { loc } = await authorize(jar, { prompt: 'none', nonce: undefined });
  const code = loc!.searchParams.get('code');
  t.truthy(code, String(loc));
  const { idClaims } = await redeemIdToken(code!);
  t.is(idClaims.nonce, undefined);
});

test('oidcc-ensure-other-scope-order-succeeds: the order of scope values does not matter', async (t) => {
  const { jar } = await signedIn();
  const { loc } = await authorize(jar, { prompt: 'none', scope: 'email profile openid' });
  const code = loc!.searchParams.get('code');
  t.truthy(code, String(loc));
  const tokens = await redeemIdToken(code!);
  const info = (await (await kit.userinfo(tokens.access_token)).json()) as Record<string, unknown>;
  t.truthy(info.email);
  t.truthy(info.name);
});

test(
  'oidcc-ensure-request-with-unknown-parameter-succeeds, -display-page, -display-popup, -ui-locales, ' +
    '-claims-locales, -acr-values, -id-token-hint, -login-hint: accepted, and a code is issued',
  async (t) => {
    const { jar } = await signedIn();
    // An ID token of this session, for id_token_hint (OIDC Core §3.1.2.1: a hint, not a requirement).
    const first = await authorize(jar, { prompt: 'none' });
    const { id_token } = await redeemIdToken(first.loc!.searchParams.get('code')!);
    for (const extra of [
      { unknown_parameter: 'x', extra_param: 'y' },
      { display: 'page' },
      { display: 'popup' },
      { ui_locales: 'se fr-CA en' },
      { claims_locales: 'se fr-CA en' },
      { acr_values: '1 2' },
      { id_token_hint: id_token },
      { login_hint: 'someone@example.com' },
    ]) {
      const { loc } = await authorize(jar, { prompt: 'none', ...extra });
      const code = loc?.searchParams.get('code');
      t.truthy(code, `${JSON.stringify(extra)}: ${String(loc)}`);
      const { idClaims } = await redeemIdToken(code!);
      t.is(typeof idClaims.sub, 'string');
    }
  },
);

test('oidcc-prompt-login: prompt=login shows the login page although the browser has a session', async (t) => {
  const { jar } = await signedIn();
  const { r } = await authorize(jar, { prompt: 'login' });
  t.true(await isLoginPage(r));
});

test('oidcc-max-age-1 and oidcc-max-age-10000: an older sign-in is asked again; auth_time in the ID token', async (t) => {
  const { jar, userId } = await signedIn();
  // The session signed in a minute ago (instead of waiting in the test).
  await sql(db.url, db.dir, 'UPDATE sessions SET auth_time = auth_time - 60000 WHERE user_id = ?', [userId]);

  const again = await authorize(jar, { max_age: '1' });
  t.true(await isLoginPage(again.r), 'max_age=1: the login page');
  const none = await authorize(jar, { max_age: '1', prompt: 'none' });
  t.is(none.loc!.searchParams.get('error'), 'login_required', 'max_age=1 with prompt=none: login_required');

  const ok = await authorize(jar, { max_age: '10000', prompt: 'none' });
  const code = ok.loc!.searchParams.get('code');
  t.truthy(code, String(ok.loc));
  const { idClaims } = await redeemIdToken(code!);
  t.is(typeof idClaims.auth_time, 'number');
  t.true(Date.now() / 1000 - Number(idClaims.auth_time) >= 59, 'auth_time is the sign-in, not this request');
});

test('oidcc-userinfo-post-header: POST /userinfo with the bearer header; oidcc-userinfo-post-body: refused', async (t) => {
  const { jar } = await signedIn();
  const { loc } = await authorize(jar, { prompt: 'none' });
  const { access_token } = await redeemIdToken(loc!.searchParams.get('code')!);

  const header = await fetch(`${d.url}/userinfo`, {
    method: 'POST',
    headers: { authorization: `Bearer ${access_token}` },
  });
  t.is(header.status, 200);
  t.is(typeof ((await header.json()) as { sub?: unknown }).sub, 'string');

  // RFC 6750 §2.2 (the token in a form body) is not offered: 401 with a Bearer challenge.
  const body = await fetch(`${d.url}/userinfo`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ access_token }),
  });
  t.is(body.status, 401);
  t.is(((await body.json()) as { error: string }).error, 'invalid_token');
  t.regex(body.headers.get('www-authenticate') ?? '', /^Bearer/);
});

test('oidcc-server-client-secret-post: the code redeems with client_secret_post', async (t) => {
  // The suite's module registers its client for client_secret_post and sends the secret in the body.
  const { jar } = await signedIn();
  const { loc } = await authorize(jar, { prompt: 'none' }, suitePost);
  const form = (secret: string) =>
    fetch(`${d.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: loc!.searchParams.get('code')!,
        redirect_uri: REDIRECT,
        client_id: suitePost.clientId,
        client_secret: secret,
      }),
    });
  const res = await form(suitePost.secret);
  t.is(res.status, 200);
  const body = (await res.json()) as { id_token?: string; access_token?: string };
  t.is(typeof body.id_token, 'string');
  t.is(decodeJwt(body.id_token!).aud, suitePost.clientId);
  t.is(decodeProtectedHeader(body.id_token!).alg, 'RS256');
});

test('address and phone at a client not registered for them: invalid_scope (the offered case: standard-claims.test.ts)', async (t) => {
  const { jar } = await signedIn();
  for (const scope of ['openid address', 'openid phone', 'openid profile email address phone']) {
    const { loc } = await authorize(jar, { prompt: 'none', scope });
    t.is(loc!.searchParams.get('error'), 'invalid_scope', scope);
    t.is(loc!.searchParams.get('code'), null, scope);
  }
});

test('oidcc-discovery-endpoint-verification: the metadata the Config OP plan reads', async (t) => {
  const r = await fetch(`${d.url}/.well-known/openid-configuration`);
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type') ?? '', /^application\/json/);
  const m = (await r.json()) as Record<string, unknown>;
  t.is(m.issuer, d.url);
  t.is(m.authorization_endpoint, `${d.url}/authorize`);
  t.is(m.token_endpoint, `${d.url}/token`);
  t.is(m.userinfo_endpoint, `${d.url}/userinfo`);
  t.is(m.jwks_uri, `${d.url}/jwks`);
  t.true((m.scopes_supported as string[]).includes('openid'));
  t.true((m.response_types_supported as string[]).includes('code'));
  t.true((m.subject_types_supported as string[]).length > 0);
  // OIDC Discovery §3: RS256 MUST be listed (OIDCCCheckDiscEndpointIdTokenSigningAlgValuesSupported).
  t.true((m.id_token_signing_alg_values_supported as string[]).includes('RS256'));
  t.true(Array.isArray(m.claims_supported));
  t.true((m.grant_types_supported as string[]).includes('authorization_code'));
  t.true((m.token_endpoint_auth_methods_supported as string[]).includes('client_secret_basic'));
  const jwks = (await (await fetch(String(m.jwks_uri))).json()) as {
    keys: { kid?: string; d?: string; alg?: string; use?: string }[];
  };
  t.true(
    jwks.keys.some((k) => k.alg === 'RS256'),
    'an RS256 key',
  );
  for (const k of jwks.keys) {
    t.truthy(k.kid);
    t.is(k.use, 'sig');
    t.is(k.d, undefined, 'no private part');
  }
});

test('oidcc-ensure-redirect-uri-in-authorization-request: no redirect_uri is an error page, never a redirect', async (t) => {
  const { jar } = await signedIn();
  const { r, loc } = await authorize(jar, { prompt: 'none', redirect_uri: undefined });
  t.is(r.status, 400);
  t.is(loc, undefined);
  t.regex(await r.text(), /No redirect was made/);
});

test('oidcc-ensure-post-request-succeeds: the authorization request as a form POST gives a code', async (t) => {
  const { jar } = await signedIn();
  const params = {
    response_type: 'code',
    client_id: suite.clientId,
    redirect_uri: REDIRECT,
    scope: 'openid email',
    nonce: 'n1',
  };
  const form = new URLSearchParams({ ...params, prompt: 'none', state: 'st-post' });
  const r = await fetch(`${d.url}/authorize`, {
    method: 'POST',
    // A relying party's page posts the form across origins (OIDC Core §3.1.2.1).
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: 'https://rp.example.test',
      cookie: jar.header(),
    },
    body: form,
    redirect: 'manual',
  });
  t.is(r.status, 302);
  const loc = new URL(r.headers.get('location')!);
  t.is(`${loc.origin}${loc.pathname}`, REDIRECT);
  t.is(loc.searchParams.get('state'), 'st-post');
  t.is(loc.searchParams.get('iss'), d.url);
  const code = loc.searchParams.get('code');
  t.truthy(code, String(loc));
  const { idClaims } = await redeemIdToken(code!);
  t.is(idClaims.aud, suite.clientId);
  // Without a session the POST shows the login page, as the GET does.
  const anonymous = await fetch(`${d.url}/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
    redirect: 'manual',
  });
  t.true(await isLoginPage(anonymous));
});

test('oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported and oidcc-request-uri-unsigned-…: refused (unsigned object, request_uri URL)', async (t) => {
  const { jar } = await signedIn();
  const requestObject = 'eyJhbGciOiJub25lIn0.eyJzY29wZSI6Im9wZW5pZCJ9.';
  const withRequest = await authorize(jar, { prompt: 'none', request: requestObject, state: 'st-req' });
  // Request objects are offered (RFC 9101, docs/par.md), signed ones only: alg none is refused.
  t.is(withRequest.loc!.searchParams.get('error'), 'invalid_request_object', 'RFC 9101 §6.2');
  t.is(withRequest.loc!.searchParams.get('state'), 'st-req');
  t.is(withRequest.loc!.searchParams.get('code'), null);
  const withUri = await authorize(jar, { prompt: 'none', request_uri: 'https://rp.example.test/req.jwt' });
  t.is(withUri.loc!.searchParams.get('error'), 'request_uri_not_supported', 'OIDC Core §6.2, §3.1.2.6');
  t.is(withUri.loc!.searchParams.get('code'), null);
  const m = (await (await fetch(`${d.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  t.is(m.request_parameter_supported, true);
  t.false((m.request_object_signing_alg_values_supported as string[]).includes('none'));
  t.is(m.request_uri_parameter_supported, false);
});
