/**
 * The behaviours the OpenID Foundation's Basic OP and Config OP certification plans check that
 * no other test covers, one test per module (or group of modules), titled by the module's name
 * so that docs/conformance.md can point at it. The suite itself cannot run here (no network);
 * every authorization request below carries PKCE S256, which this service requires of every
 * client (docs/conformance.md explains what that means for a certification run).
 */
import test from 'ava';
import { decodeJwt } from 'jose';
import type { TestDb } from '../helpers/db.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { clientCredentialsToken } from '../helpers/seed.js';
import { loginKit } from '../helpers/login.js';
import { authorizeUrl, CookieJar, get, pkce, REDIRECT, sql, type App } from '../helpers/oauth.js';
import { startLoginEnv, stopLoginEnv } from '../helpers/env.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let adminToken: string;
let n = 0;

test.before(async () => {
  ({ db, d, app, sink } = await startLoginEnv());
  adminToken = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

const kit = loginKit(
  () => d.url,
  () => sink,
);

/** A fresh user per test, signed in through the direct API: parallel tests never share codes. */
async function signedIn(): Promise<{ jar: CookieJar; userId: string }> {
  const email = `conf${++n}-${Date.now()}@example.com`;
  const res = await fetch(`${d.url}/api/admin/tenants/${app.tenantId}/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify({ email, name: `Conformance ${n}` }),
  });
  if (res.status !== 201) throw new Error(`create user: ${res.status}`);
  const { id } = (await res.json()) as { id: string };
  return { jar: await kit.signIn(app.web.clientId, email), userId: id };
}

/** GET /authorize for the web client with PKCE; `extra` overrides or adds parameters (undefined drops one). */
async function authorize(jar: CookieJar | undefined, extra: Record<string, string | undefined> = {}) {
  const p = pkce();
  const r = await get(authorizeUrl(d.url, kit.authParams(app.web.clientId, p.challenge, extra)), jar);
  const location = r.headers.get('location');
  return { r, verifier: p.verifier, loc: location ? new URL(location) : undefined };
}

async function redeemIdToken(code: string, verifier: string) {
  const t = await kit.redeem(code, verifier, app.web);
  if (t.status !== 200) throw new Error(`token ${t.status} ${JSON.stringify(t.body)}`);
  const { access_token, id_token } = t.body as { access_token: string; id_token: string };
  return { access_token, id_token, idClaims: decodeJwt(id_token) };
}

const isLoginPage = async (r: Response) => r.status === 200 && /name="email"/.test(await r.text());

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
  const { loc, verifier } = await authorize(jar, { prompt: 'none', nonce: undefined });
  const code = loc!.searchParams.get('code');
  t.truthy(code, String(loc));
  const { idClaims } = await redeemIdToken(code!, verifier);
  t.is(idClaims.nonce, undefined);
});

test('oidcc-ensure-other-scope-order-succeeds: the order of scope values does not matter', async (t) => {
  const { jar } = await signedIn();
  const { loc, verifier } = await authorize(jar, { prompt: 'none', scope: 'email profile openid' });
  const code = loc!.searchParams.get('code');
  t.truthy(code, String(loc));
  const tokens = await redeemIdToken(code!, verifier);
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
    const { id_token } = await redeemIdToken(first.loc!.searchParams.get('code')!, first.verifier);
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
      const { loc, verifier } = await authorize(jar, { prompt: 'none', ...extra });
      const code = loc?.searchParams.get('code');
      t.truthy(code, `${JSON.stringify(extra)}: ${String(loc)}`);
      const { idClaims } = await redeemIdToken(code!, verifier);
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
  const { idClaims } = await redeemIdToken(code!, ok.verifier);
  t.is(typeof idClaims.auth_time, 'number');
  t.true(Date.now() / 1000 - Number(idClaims.auth_time) >= 59, 'auth_time is the sign-in, not this request');
});

test('oidcc-userinfo-post-header: POST /userinfo with the bearer header; oidcc-userinfo-post-body: refused', async (t) => {
  const { jar } = await signedIn();
  const { loc, verifier } = await authorize(jar, { prompt: 'none' });
  const { access_token } = await redeemIdToken(loc!.searchParams.get('code')!, verifier);

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
  const { jar } = await signedIn();
  const { loc, verifier } = await authorize(jar, { prompt: 'none' });
  const res = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: loc!.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      client_id: app.web.clientId,
      client_secret: app.web.secret,
    }),
  });
  t.is(res.status, 200);
  const body = (await res.json()) as { id_token?: string; access_token?: string };
  t.is(typeof body.id_token, 'string');
  t.is(decodeJwt(body.id_token!).aud, app.web.clientId);
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
  t.true((m.id_token_signing_alg_values_supported as string[]).length > 0);
  t.true(Array.isArray(m.claims_supported));
  t.true((m.grant_types_supported as string[]).includes('authorization_code'));
  const jwks = (await (await fetch(String(m.jwks_uri))).json()) as { keys: { kid?: string; d?: string }[] };
  t.true(jwks.keys.length > 0);
  for (const k of jwks.keys) {
    t.truthy(k.kid);
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
  const p = pkce();
  const form = new URLSearchParams(kit.authParams(app.web.clientId, p.challenge, { prompt: 'none', state: 'st-post' }));
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
  const { idClaims } = await redeemIdToken(code!, p.verifier);
  t.is(idClaims.aud, app.web.clientId);
  // Without a session the POST shows the login page, as the GET does.
  const anonymous = await fetch(`${d.url}/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(kit.authParams(app.web.clientId, pkce().challenge)),
    redirect: 'manual',
  });
  t.true(await isLoginPage(anonymous));
});

test('oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported and oidcc-request-uri-unsigned-…: refused as unsupported', async (t) => {
  const { jar } = await signedIn();
  const requestObject = 'eyJhbGciOiJub25lIn0.eyJzY29wZSI6Im9wZW5pZCJ9.';
  const withRequest = await authorize(jar, { prompt: 'none', request: requestObject, state: 'st-req' });
  t.is(withRequest.loc!.searchParams.get('error'), 'request_not_supported', 'OIDC Core §6.1, §3.1.2.6');
  t.is(withRequest.loc!.searchParams.get('state'), 'st-req');
  t.is(withRequest.loc!.searchParams.get('code'), null);
  const withUri = await authorize(jar, { prompt: 'none', request_uri: 'https://rp.example.test/req.jwt' });
  t.is(withUri.loc!.searchParams.get('error'), 'request_uri_not_supported', 'OIDC Core §6.2, §3.1.2.6');
  t.is(withUri.loc!.searchParams.get('code'), null);
  const m = (await (await fetch(`${d.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  t.is(m.request_parameter_supported, false);
  t.is(m.request_uri_parameter_supported, false);
});
