/**
 * Signed request objects (RFC 9101; docs/par.md) against one daemon: openid-client (a real
 * relying party) signs in with JAR inside PAR and private_key_jwt; a request object by value at
 * /authorize is the whole request (parameters beside it are not read, §6.3); and each refusal
 * of a request object, at /authorize (a page) and at the push (JSON): alg none, HS256, an
 * unknown key, exp and nbf too far apart, a replayed jti, a wrong aud or iss.
 */
import test from 'ava';
import * as oidc from 'openid-client';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { randomUUID } from 'node:crypto';
import type { TestDb } from '../helpers/db.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { loginKit } from '../helpers/login.js';
import { challengeFrom, codeFrom, CookieJar, get, pkce, postJson, REDIRECT, type App } from '../helpers/oauth.js';
import { openServices } from '../helpers/seed.js';

let env: LoginEnv;
let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let key: CryptoKey;
let jwk: JWK;
/** A first-party private_key_jwt client (ES256 key), registered with require_signed_request_object. */
let clientId: string;
const kit = loginKit(
  () => d.url,
  () => sink,
);

test.before(async () => {
  env = await startLoginEnv();
  ({ db, d, app, sink } = env);
  const pair = await generateKeyPair('ES256', { extractable: true });
  key = pair.privateKey;
  jwk = { ...(await exportJWK(pair.publicKey)), kid: 'rp-1', alg: 'ES256', use: 'sig' };
  const { ds, directory } = await openServices(db.url, db.dir);
  const c = await directory.createClient(
    app.tenantId,
    {
      name: 'JAR RP',
      redirect_uris: [REDIRECT],
      first_party: true,
      scopes: ['openid', 'email', 'profile'],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [jwk] },
      require_signed_request_object: true,
    },
    { type: 'system', id: 'test' },
  );
  await ds.destroy();
  clientId = c.client.client_id;
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

const now = () => Math.floor(Date.now() / 1000);

/** A request object of the client: `claims` over sound defaults, signed with `signer`. */
async function requestObject(
  claims: Record<string, unknown> = {},
  signer: { alg: string; key: CryptoKey | Uint8Array; kid?: string } = { alg: 'ES256', key, kid: 'rp-1' },
) {
  const body = {
    iss: clientId,
    aud: d.url,
    client_id: clientId,
    jti: randomUUID(),
    nbf: now(),
    exp: now() + 60,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid email',
    state: 'st-jar',
    nonce: 'n-jar',
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
    prompt: 'none',
    ...claims,
  };
  return new SignJWT(body)
    .setProtectedHeader({ alg: signer.alg, typ: 'oauth-authz-req+jwt', ...(signer.kid ? { kid: signer.kid } : {}) })
    .sign(signer.key);
}

const authorize = (jar: CookieJar | undefined, params: Record<string, string>) =>
  get(`${d.url}/authorize?${new URLSearchParams(params)}`, jar);

test('openid-client signs in with JAR inside PAR and private_key_jwt, through the login page', async (t) => {
  const user = await createUserIn(env, 'jar');
  const config = await oidc.discovery(
    new URL(d.url),
    clientId,
    { redirect_uris: [REDIRECT] },
    oidc.PrivateKeyJwt({ key, kid: 'rp-1' }),
    { execute: [oidc.allowInsecureRequests] },
  );
  t.true(config.serverMetadata().request_object_signing_alg_values_supported!.includes('ES256'));
  const verifier = oidc.randomPKCECodeVerifier();
  const checks = { nonce: oidc.randomNonce(), state: oidc.randomState() };
  const jarred = await oidc.buildAuthorizationUrlWithJAR(
    config,
    {
      redirect_uri: REDIRECT,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...checks,
    },
    { key, kid: 'rp-1' },
  );
  const url = await oidc.buildAuthorizationUrlWithPAR(config, jarred.searchParams);
  t.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request_uri']);

  const jar = new CookieJar();
  const page = await get(url.toString(), jar);
  t.is(page.status, 200);
  const challenge = challengeFrom(await page.text());
  const earlier = new Set(sink.messages);
  const body = { client_id: clientId, email: user.email, authorization_challenge_id: challenge };
  t.is((await postJson(`${d.url}/api/v1/auth/direct/email-code/send`, body, jar)).status, 200);
  const mail = await sink.waitFor((m) => !earlier.has(m) && m.to.includes(user.email), 15_000);
  const verify = await postJson(
    `${d.url}/api/v1/auth/direct/email-code/verify`,
    { ...body, code: codeFrom(mail.text) },
    jar,
  );
  t.is(verify.status, 200);
  const back = await get(((await verify.json()) as { redirect_url: string }).redirect_url, jar);
  t.is(back.status, 302, await back.text());
  const tokens = await oidc.authorizationCodeGrant(config, new URL(back.headers.get('location')!), {
    pkceCodeVerifier: verifier,
    expectedNonce: checks.nonce,
    expectedState: checks.state,
    idTokenExpected: true,
  });
  t.is(tokens.claims()!.sub, user.id);
});

test('a request object by value is the whole request: parameters beside it are not read; a plain request is refused for this client', async (t) => {
  const jar = await kit.signIn(app.web.clientId, (await createUserIn(env, 'jar')).email);
  const r = await authorize(jar, {
    client_id: clientId,
    request: await requestObject(),
    // Outside the object, so ignored (RFC 9101 §6.3): another state, a scope the client lacks.
    state: 'outer',
    scope: 'openid iam.admin',
    redirect_uri: 'https://evil.example.test/cb',
  });
  t.is(r.status, 302);
  const loc = new URL(r.headers.get('location')!);
  t.is(`${loc.origin}${loc.pathname}`, REDIRECT);
  t.is(loc.searchParams.get('state'), 'st-jar');
  t.truthy(loc.searchParams.get('code'));

  // require_signed_request_object (RFC 9101 §10.5): the same request without an object.
  const plain = await authorize(jar, {
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid',
    state: 'st-plain',
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
    prompt: 'none',
  });
  const refused = new URL(plain.headers.get('location')!);
  t.is(refused.searchParams.get('error'), 'invalid_request');
  t.regex(refused.searchParams.get('error_description')!, /RFC 9101/);
});

test('refused request objects: none, HS256, an unknown key, exp-nbf over 60 min, a replayed jti, wrong aud, wrong iss', async (t) => {
  const jar = await kit.signIn(app.web.clientId, (await createUserIn(env, 'jar')).email);
  const other = await generateKeyPair('ES256');
  const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(
    JSON.stringify({ iss: clientId, aud: d.url, client_id: clientId }),
  ).toString('base64url')}.`;
  const replayed = await requestObject();
  t.is((await authorize(jar, { client_id: clientId, request: replayed })).status, 302, 'its first use');
  const cases: [string, string, RegExp][] = [
    ['alg none', unsigned, /must be signed with/],
    [
      'HS256',
      await requestObject({}, { alg: 'HS256', key: new TextEncoder().encode('x'.repeat(32)) }),
      /must be signed/,
    ],
    ['unknown key', await requestObject({}, { alg: 'ES256', key: other.privateKey, kid: 'rp-1' }), /signature/],
    ['exp - nbf > 60 min', await requestObject({ nbf: now() - 3600, exp: now() + 60 }), /60 minutes/],
    ['replayed jti', replayed, /already used/],
    ['wrong aud', await requestObject({ aud: `${d.url}/token` }), /aud/],
    ['wrong iss', await requestObject({ iss: app.web.clientId }), /iss/],
  ];
  for (const [name, request, message] of cases) {
    // Without a registered redirect_uri beside it, the refusal is a page, never a redirect.
    const r = await authorize(jar, { client_id: clientId, request });
    t.is(r.status, 400, name);
    t.is(r.headers.get('location'), null, name);
    const html = await r.text();
    t.regex(html, /invalid_request_object/, name);
    t.regex(html, message, name);
  }

  // At the push, the refusal is the JSON error of RFC 9126 §2.3.
  const assertion = await new SignJWT({ jti: randomUUID() })
    .setProtectedHeader({ alg: 'ES256', kid: 'rp-1' })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(d.url)
    .setIssuedAt()
    .setExpirationTime('60s')
    .sign(key);
  const res = await fetch(`${d.url}/par`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_id: clientId,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
      request: unsigned,
    }),
  });
  t.is(res.status, 400);
  t.is(((await res.json()) as { error: string }).error, 'invalid_request_object');
});
