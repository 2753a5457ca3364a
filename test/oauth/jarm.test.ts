/**
 * JARM (JWT Secured Authorization Response Mode) and form_post (docs/jarm.md): the authorization
 * response, success and redirected errors, as a JWT signed with the service's key (verified here
 * with /jwks by jose) in `query.jwt` and `form_post.jwt`, and a real client (openid-client v6,
 * `useJwtResponseMode`) signing in through the login page, whose continuation keeps the mode.
 */
import test from 'ava';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { TestDb } from '../helpers/db.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import type { ClientCreds } from '../helpers/login.js';
import { clientCredentialsToken } from '../helpers/seed.js';
import { loginKit } from '../helpers/login.js';
import {
  authorizeUrl,
  challengeFrom,
  codeFrom,
  CookieJar,
  csrfFrom,
  get,
  pkce,
  postJson,
  REDIRECT,
  type App,
} from '../helpers/oauth.js';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { api } from '../helpers/api.js';

let env: LoginEnv;
let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let adminToken: string;
let jar: CookieJar;

test.before(async () => {
  env = await startLoginEnv();
  ({ db, d, app, sink } = env);
  adminToken = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);
  jar = await kit.signIn(app.web.clientId, app.user.email);
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

const kit = loginKit(
  () => d.url,
  () => sink,
);

/** The response JWT, verified with the service's published keys: signature, iss, aud (the client) and exp. */
async function verified(response: string | null | undefined, clientId = app.web.clientId): Promise<JWTPayload> {
  if (!response) throw new Error('no response parameter');
  const { payload } = await jwtVerify(response, createRemoteJWKSet(new URL(`${d.url}/jwks`)), {
    issuer: d.url,
    audience: clientId,
    requiredClaims: ['exp'],
  });
  return payload;
}

/** An authorization request of a client of the tenant (the web client's), the user signed in, without interaction. */
const authorize = (
  extra: Record<string, string | undefined>,
  o: { signedIn?: boolean; clientId?: string; challenge?: string } = {},
) =>
  get(
    authorizeUrl(
      d.url,
      kit.authParams(o.clientId ?? app.web.clientId, o.challenge ?? pkce().challenge, { prompt: 'none', ...extra }),
    ),
    o.signedIn === false ? undefined : jar,
  );

test('response_mode=query.jwt: one parameter, response, a JWT signed with ES256 holding iss, aud, exp, code and state', async (t) => {
  const p = pkce();
  const r = await authorize({ response_mode: 'query.jwt', state: 'st-jwt' }, { challenge: p.challenge });
  t.is(r.status, 302);
  const loc = new URL(r.headers.get('location')!);
  t.is(`${loc.origin}${loc.pathname}`, REDIRECT);
  t.deepEqual([...loc.searchParams.keys()], ['response'], 'code, state and iss are inside the JWT only');
  const response = loc.searchParams.get('response')!;
  t.is(decodeProtectedHeader(response).alg, 'ES256', 'the default algorithm');
  const claims = await verified(response);
  t.is(claims.state, 'st-jwt');
  t.regex(String(claims.code), /.{20,}/);
  t.true(claims.exp! - Math.floor(Date.now() / 1000) <= 120, 'a short-lived response (JARM §2.1)');
  // The code in the JWT is the code: it redeems.
  const tokens = await kit.redeem(String(claims.code), p.verifier, app.web);
  t.is(tokens.status, 200, JSON.stringify(tokens.body));
});

test('response_mode=jwt is query.jwt for response_type=code; a redirected error is a JWT too (error, error_description, state)', async (t) => {
  const r = await authorize({ response_mode: 'jwt', state: 'st-err' }, { signedIn: false });
  const loc = new URL(r.headers.get('location')!);
  t.deepEqual([...loc.searchParams.keys()], ['response']);
  const claims = await verified(loc.searchParams.get('response'));
  t.is(claims.error, 'login_required');
  t.is(claims.state, 'st-err');
  t.truthy(claims.error_description);
  t.is(claims.code, undefined);

  // An error found while the request's parameters are read goes back in the requested mode as well.
  const bad = await authorize({ response_mode: 'query.jwt', scope: 'openid nope' });
  const badClaims = await verified(new URL(bad.headers.get('location')!).searchParams.get('response'));
  t.is(badClaims.error, 'invalid_scope');
});

test('response_mode=form_post.jwt: an auto-submitting page under the nonce CSP posts response to the redirect URI', async (t) => {
  const r = await authorize({ response_mode: 'form_post.jwt', state: 'st-form' });
  t.is(r.status, 200);
  t.is(r.headers.get('cache-control'), 'no-store');
  const csp = r.headers.get('content-security-policy')!;
  t.regex(csp, /script-src 'nonce-[^']+'/, 'only the nonce’d script runs');
  const html = await r.text();
  t.true(html.includes(`<form method="post" action="${REDIRECT}" id="form-post">`), html);
  t.regex(html, /<script src="\/assets\/form-post\.js\?v=[0-9a-f]{16}" nonce="[^"]+" defer><\/script>/);
  t.false(/name="(code|state|iss)"/.test(html), 'only the response field');
  const response = /<input type="hidden" name="response" value="([^"]+)">/.exec(html)?.[1];
  const claims = await verified(response);
  t.is(claims.state, 'st-form');
  t.truthy(claims.code);
  const script = await fetch(`${d.url}/assets/form-post.js`);
  t.regex(await script.text(), /getElementById\('form-post'\)\.submit\(\)/);
});

test('the consent form answers in the saved mode: a denial is access_denied inside the form_post.jwt response', async (t) => {
  const page = await authorize(
    { response_mode: 'form_post.jwt', prompt: undefined, state: 'st-deny' },
    { clientId: app.thirdParty.clientId },
  );
  t.is(page.status, 200);
  const consent = await page.text();
  const res = await fetch(`${d.url}/authorize/consent`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    body: new URLSearchParams({ challenge: challengeFrom(consent), csrf: csrfFrom(consent), decision: 'deny' }),
  });
  t.is(res.status, 200);
  const html = await res.text();
  t.true(html.includes(`action="${REDIRECT}"`));
  const response = /<input type="hidden" name="response" value="([^"]+)">/.exec(html)?.[1];
  const claims = await verified(response, app.thirdParty.clientId);
  t.is(claims.error, 'access_denied');
  t.is(claims.state, 'st-deny');
});

test('response_mode=form_post: the parameters themselves, iss among them (RFC 9207)', async (t) => {
  const r = await authorize({ response_mode: 'form_post', state: 'st-plain' });
  t.is(r.status, 200);
  const html = await r.text();
  const field = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]+)">`).exec(html)?.[1];
  t.truthy(field('code'));
  t.is(field('state'), 'st-plain');
  t.is(field('iss'), d.url);
  t.is(field('response'), undefined);
});

test('a response mode not offered (fragment.jwt) or repeated is invalid_request, in the default query mode', async (t) => {
  const r = await authorize({ response_mode: 'fragment.jwt', state: 'st-frag' });
  const loc = new URL(r.headers.get('location')!);
  t.is(loc.searchParams.get('error'), 'invalid_request');
  t.regex(loc.searchParams.get('error_description')!, /response_mode/);
  t.is(loc.searchParams.get('state'), 'st-frag');
  t.is(loc.searchParams.get('iss'), d.url);
  const twice = new URL(authorizeUrl(d.url, kit.authParams(app.web.clientId, pkce().challenge, { prompt: 'none' })));
  twice.searchParams.append('response_mode', 'jwt');
  twice.searchParams.append('response_mode', 'jwt');
  const r2 = await get(twice.toString(), jar);
  t.is(new URL(r2.headers.get('location')!).searchParams.get('error'), 'invalid_request');
});

test('discovery advertises the response modes and the signing algorithms of JARM and RFC 9701', async (t) => {
  const m = (await (await fetch(`${d.url}/.well-known/openid-configuration`)).json()) as Record<string, string[]>;
  t.deepEqual(m.response_modes_supported, ['query', 'form_post', 'jwt', 'query.jwt', 'form_post.jwt']);
  t.deepEqual(m.authorization_signing_alg_values_supported, ['ES256', 'RS256', 'PS256', 'EdDSA']);
  t.deepEqual(m.introspection_signing_alg_values_supported, ['ES256', 'RS256', 'PS256', 'EdDSA']);
});

test('authorization_signed_response_alg: validated like the other algorithms; set by PATCH it signs, null returns to ES256', async (t) => {
  const path = `/api/admin/tenants/${app.tenantId}/clients`;
  const refused = await api(d.url, 'POST', path, {
    body: { name: 'Bad', redirect_uris: [REDIRECT], authorization_signed_response_alg: 'HS256' },
    token: adminToken,
  });
  t.is(refused.status, 400);
  t.regex(JSON.stringify(refused.body), /authorization_signed_response_alg/);
  const c = await client({});
  const algOf = async () => {
    const r = await authorize({ response_mode: 'query.jwt' }, { clientId: c.clientId });
    const response = new URL(r.headers.get('location')!).searchParams.get('response')!;
    t.truthy((await verified(response, c.clientId)).code);
    return decodeProtectedHeader(response).alg;
  };
  const set = await api(d.url, 'PATCH', `${path}/${c.clientId}`, {
    body: { authorization_signed_response_alg: 'PS256' },
    token: adminToken,
  });
  t.is(set.status, 200, JSON.stringify(set.body));
  t.is(set.body.authorization_signed_response_alg, 'PS256');
  t.is(await algOf(), 'PS256');
  const back = await api(d.url, 'PATCH', `${path}/${c.clientId}`, {
    body: { authorization_signed_response_alg: null },
    token: adminToken,
  });
  t.is(back.body.authorization_signed_response_alg, null);
  t.is(await algOf(), 'ES256');
});

/** A first-party confidential client registered through the admin API. */
async function client(extra: Record<string, unknown>): Promise<ClientCreds> {
  const r = await api(d.url, 'POST', `/api/admin/tenants/${app.tenantId}/clients`, {
    body: { name: 'JARM RP', redirect_uris: [REDIRECT], first_party: true, ...extra },
    token: adminToken,
  });
  if (r.status !== 201) throw new Error(`register: ${r.status} ${JSON.stringify(r.body)}`);
  return { clientId: String(r.body.client_id), secret: String(r.body.client_secret) };
}

test('openid-client with useJwtResponseMode: signs in on the login page, the continuation answers in JARM, the code redeems', async (t) => {
  const c = await client({ authorization_signed_response_alg: 'EdDSA' });
  const user = await createUserIn(env, 'jarm-');
  const config = await oidc.discovery(
    new URL(d.url),
    c.clientId,
    { redirect_uris: [REDIRECT], authorization_signed_response_alg: 'EdDSA' },
    oidc.ClientSecretBasic(c.secret),
    { execute: [oidc.allowInsecureRequests] },
  );
  oidc.useJwtResponseMode(config);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid email',
    state,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  t.is(url.searchParams.get('response_mode'), 'jwt');

  // The person on the login page: the email step, the code from the mail, the continuation.
  const browser = new CookieJar();
  const page = await get(url.toString(), browser);
  t.is(page.status, 200);
  const challenge = challengeFrom(await page.text());
  const earlier = new Set(sink.messages);
  const send = await postJson(
    `${d.url}/api/v1/auth/direct/email-code/send`,
    { client_id: c.clientId, email: user.email, authorization_challenge_id: challenge },
    browser,
  );
  t.is(send.status, 200);
  const mail = await sink.waitFor((m) => !earlier.has(m) && m.to.includes(user.email), 15_000);
  const verify = await postJson(
    `${d.url}/api/v1/auth/direct/email-code/verify`,
    { client_id: c.clientId, email: user.email, code: codeFrom(mail.text), authorization_challenge_id: challenge },
    browser,
  );
  const { redirect_url } = (await verify.json()) as { redirect_url: string };
  t.is(new URL(redirect_url).searchParams.get('response_mode'), 'query.jwt', 'the saved request keeps its mode');
  const back = await get(redirect_url, browser);
  t.is(back.status, 302);
  const callback = new URL(back.headers.get('location')!);
  t.deepEqual([...callback.searchParams.keys()], ['response']);

  const tokens = await oidc.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
  t.truthy(tokens.access_token);
  t.is(tokens.claims()?.email, user.email);
});
