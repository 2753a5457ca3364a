/**
 * Client authentication at /token, /revoke and /introspect (docs/oauth.md, "Client
 * authentication"): openid-client's defaults (client_secret_post), one registered method per
 * client, and private_key_jwt (RFC 7523, OIDC Core §9) with inline keys and a jwks_uri served
 * over HTTPS on loopback, rotation included. The sign-in code is read from a real SMTP sink.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import { SignJWT, type CryptoKey } from 'jose';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { newKey, startIssuer, type SigningKey, type TestIssuer } from '../helpers/https-issuer.js';
import { startSmtpSink } from '../helpers/smtp-sink.js';
import { challengeFrom, codeFrom, CookieJar, get, postJson, REDIRECT, seedApp, type App } from '../helpers/oauth.js';
import { clientCredentialsToken, openServices } from '../helpers/seed.js';
import { api } from '../helpers/api.js';

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

let db: TestDb;
/** The default daemon (client-authentication budgets off: this file fails on purpose often). */
let d: Daemon;
/** Small client-authentication budget: 2 failures per client, then 429. */
let dThrottled: Daemon;
let app: App;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
let idp: TestIssuer;
let key1: SigningKey;
/** A key no client registered. */
let stranger: SigningKey;
const clients = {
  /** Registered with defaults: confidential, client_secret_basic. */
  service: { clientId: '', secret: '' },
  /** Registered client_secret_post. */
  postOnly: { clientId: '', secret: '' },
  /** private_key_jwt with its keys inline; code flow and client_credentials. */
  pkj: { clientId: '' },
  /** private_key_jwt with its keys at the test issuer's /jwks. */
  remote: { clientId: '' },
  /** private_key_jwt, inline keys, for the throttling test only (its failure counter is its own). */
  counted: { clientId: '' },
};

test.before(async () => {
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  sink = await startSmtpSink();
  idp = await startIssuer();
  key1 = await newKey('pkj-1');
  stranger = await newKey('pkj-1'); // same kid, other key: the signature cannot verify
  const { ds, directory } = await openServices(db.url, db.dir);
  try {
    const actor = { type: 'system' as const, id: 'test' };
    const cc = { grant_types: ['client_credentials'], scopes: ['api:read'] };
    const service = await directory.createClient(app.tenantId, { name: 'Service', ...cc }, actor);
    clients.service = { clientId: service.client.client_id, secret: service.client_secret! };
    const post = await directory.createClient(
      app.tenantId,
      { name: 'Post', ...cc, token_endpoint_auth_method: 'client_secret_post' },
      actor,
    );
    clients.postOnly = { clientId: post.client.client_id, secret: post.client_secret! };
    const pkj = await directory.createClient(
      app.tenantId,
      {
        name: 'Keys inline',
        redirect_uris: [REDIRECT],
        first_party: true,
        grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
        scopes: ['openid', 'email', 'offline_access', 'api:read'],
        jwks: { keys: [key1.publicJwk] },
      },
      actor,
    );
    if (pkj.client_secret || pkj.client.token_endpoint_auth_method !== 'private_key_jwt')
      throw new Error('a client with keys is a private_key_jwt client without a secret');
    clients.pkj = { clientId: pkj.client.client_id };
    const remote = await directory.createClient(
      app.tenantId,
      { name: 'Keys at a URL', ...cc, jwks_uri: `${idp.issuer}/jwks` },
      actor,
    );
    clients.remote = { clientId: remote.client.client_id };
    const counted = await directory.createClient(
      app.tenantId,
      { name: 'Counted', ...cc, jwks: { keys: [key1.publicJwk] } },
      actor,
    );
    clients.counted = { clientId: counted.client.client_id };
  } finally {
    await ds.destroy();
  }
  const common = {
    IAM_SMTP_URL: sink.url,
    IAM_EMAIL_CODE_RESEND_SECONDS: '0',
    IAM_OUTBOUND_ALLOW_LOOPBACK: 'true',
    IAM_OUTBOUND_CA_FILE: idp.cert.certFile,
  };
  d = await startDaemon(db.url, db.dir, {
    ...common,
    IAM_CLIENT_JWKS_COOLDOWN_SECONDS: '0',
    IAM_THROTTLE_CLIENT_AUTH_FAILURES: '0',
    IAM_THROTTLE_CLIENT_AUTH_IP_FAILURES: '0',
  });
  dThrottled = await startDaemon(db.url, db.dir, {
    ...common,
    IAM_ISSUER: d.url, // two daemons of one service: one issuer identifier
    IAM_THROTTLE_CLIENT_AUTH_FAILURES: '2',
    IAM_THROTTLE_CLIENT_AUTH_IP_FAILURES: '0',
  });
});
test.after.always(async () => {
  await d?.stop();
  await dThrottled?.stop();
  await sink?.close();
  await idp?.close();
  await db?.drop();
});

const insecure = { execute: [oidc.allowInsecureRequests] };

/** A client assertion (RFC 7523 §3); every claim overridable, `null` leaves it out. */
async function assertion(
  clientId: string,
  o: {
    key?: { privateKey: CryptoKey; kid: string };
    alg?: string;
    aud?: string | null;
    jti?: string;
    exp?: number;
    iat?: number;
    sub?: string;
  } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const key = o.key ?? key1;
  const jwt = new SignJWT({})
    .setProtectedHeader({ alg: o.alg ?? 'ES256', kid: key.kid })
    .setIssuer(clientId)
    .setSubject(o.sub ?? clientId)
    .setJti(o.jti ?? randomBytes(12).toString('base64url'))
    .setIssuedAt(o.iat ?? now)
    .setExpirationTime(o.exp ?? now + 60);
  if (o.aud !== null) jwt.setAudience(o.aud ?? d.url);
  return jwt.sign(key.privateKey);
}

/** POST a form to one of the daemon's endpoints (token requests are form-encoded, RFC 6749 section 4.1.3). */
const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}, base = d.url) =>
  api(base, 'POST', path, {
    raw: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });

const ccWithAssertion = async (clientId: string, jwt: string, base = d.url) =>
  post(
    '/token',
    {
      grant_type: 'client_credentials',
      scope: 'api:read',
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: jwt,
    },
    {},
    base,
  );

const basic = (id: string, secret: string) => ({
  authorization: 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64'),
});

test('discovery lists the client authentication methods and signing algorithms of each endpoint', async (t) => {
  const meta = (await (await fetch(`${d.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  t.deepEqual(meta.token_endpoint_auth_methods_supported, [
    'client_secret_basic',
    'client_secret_post',
    'private_key_jwt',
    'none',
  ]);
  t.deepEqual(meta.revocation_endpoint_auth_methods_supported, meta.token_endpoint_auth_methods_supported);
  t.deepEqual(meta.introspection_endpoint_auth_methods_supported, [
    'client_secret_basic',
    'client_secret_post',
    'private_key_jwt',
  ]);
  for (const ep of ['token', 'revocation', 'introspection'])
    t.deepEqual(meta[`${ep}_endpoint_auth_signing_alg_values_supported`], ['ES256', 'PS256', 'EdDSA'], ep);
});

test('openid-client with its defaults (client_secret_post) gets a token, introspects it and revokes it', async (t) => {
  // A client secret and no authentication method: openid-client sends client_secret_post.
  const config = await oidc.discovery(
    new URL(d.url),
    clients.service.clientId,
    clients.service.secret,
    undefined,
    insecure,
  );
  const tokens = await oidc.clientCredentialsGrant(config, { scope: 'api:read' });
  const active = await oidc.tokenIntrospection(config, tokens.access_token);
  t.true(active.active);
  t.is(active.client_id, clients.service.clientId);
  await oidc.tokenRevocation(config, tokens.access_token);
  const after = await oidc.tokenIntrospection(config, tokens.access_token);
  t.false(after.active);
});

test('one method per client: a client_secret_post client is refused HTTP Basic; the default client takes both', async (t) => {
  const cc = { grant_type: 'client_credentials', scope: 'api:read' };
  const p = clients.postOnly;
  t.is((await post('/token', { ...cc, client_id: p.clientId, client_secret: p.secret })).status, 200);
  const viaBasic = await post('/token', cc, basic(p.clientId, p.secret));
  t.is(viaBasic.status, 401);
  t.is(viaBasic.body.error, 'invalid_client');
  t.is((await post('/introspect', { token: 'x' }, basic(p.clientId, p.secret))).status, 401);
  t.deepEqual((await post('/introspect', { token: 'x', client_id: p.clientId, client_secret: p.secret })).body, {
    active: false,
  });
  const s = clients.service;
  t.is((await post('/token', cc, basic(s.clientId, s.secret))).status, 200);
  t.is((await post('/token', { ...cc, client_id: s.clientId, client_secret: s.secret })).status, 200);
  // Two methods at once (RFC 6749 §2.3).
  const both = await post('/token', { ...cc, client_secret: s.secret }, basic(s.clientId, s.secret));
  t.is(both.status, 400);
  t.is(both.body.error, 'invalid_request');
});

/** Requests 1–4 of the login flow (test/oauth/flow.test.ts): the callback URL. */
async function login(config: oidc.Configuration, checks: { verifier: string; nonce: string; state: string }) {
  const jar = new CookieJar();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid email offline_access',
    nonce: checks.nonce,
    state: checks.state,
    code_challenge: await oidc.calculatePKCECodeChallenge(checks.verifier),
    code_challenge_method: 'S256',
  });
  const page = await get(url.toString(), jar);
  if (page.status !== 200) throw new Error(`authorize: ${page.status}`);
  const challenge = challengeFrom(await page.text());
  const earlier = new Set(sink.messages);
  const clientId = config.clientMetadata().client_id;
  const email = app.user.email;
  const send = await postJson(
    `${d.url}/api/v1/auth/direct/email-code/send`,
    { client_id: clientId, email, authorization_challenge_id: challenge },
    jar,
  );
  if (send.status !== 200) throw new Error(`send: ${send.status} ${await send.text()}`);
  const mail = await sink.waitFor((m) => !earlier.has(m) && m.to.includes(email), 15_000);
  const verify = await postJson(
    `${d.url}/api/v1/auth/direct/email-code/verify`,
    { client_id: clientId, email, code: codeFrom(mail.text), authorization_challenge_id: challenge },
    jar,
  );
  const session = (await verify.json()) as { redirect_url: string };
  if (verify.status !== 200) throw new Error(`verify: ${verify.status} ${JSON.stringify(session)}`);
  const back = await get(session.redirect_url, jar);
  if (back.status !== 302) throw new Error(`continue: ${back.status} ${await back.text()}`);
  return new URL(back.headers.get('location')!);
}

test('private_key_jwt with openid-client: code flow, refresh, introspection, revocation, client_credentials', async (t) => {
  const config = await oidc.discovery(
    new URL(d.url),
    clients.pkj.clientId,
    { redirect_uris: [REDIRECT] },
    oidc.PrivateKeyJwt({ key: key1.privateKey, kid: key1.kid }),
    insecure,
  );
  const checks = { verifier: oidc.randomPKCECodeVerifier(), nonce: oidc.randomNonce(), state: oidc.randomState() };
  const callback = await login(config, checks);
  const tokens = await oidc.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: checks.verifier,
    expectedNonce: checks.nonce,
    expectedState: checks.state,
    idTokenExpected: true,
  });
  t.is(tokens.claims()!.sub, app.user.id);
  const rotated = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
  t.truthy(rotated.access_token);
  // /introspect and /revoke take the same method.
  t.true((await oidc.tokenIntrospection(config, rotated.access_token)).active);
  await oidc.tokenRevocation(config, rotated.access_token);
  t.false((await oidc.tokenIntrospection(config, rotated.access_token)).active);

  const cc = await oidc.clientCredentialsGrant(config, { scope: 'api:read' });
  t.is(cc.token_type.toLowerCase(), 'bearer');
  t.is(cc.scope, 'api:read');
});

test('private_key_jwt refusals: aud, replay, expiry, lifetime, kid, algorithm, iss/sub', async (t) => {
  const id = clients.pkj.clientId;
  const refused = async (jwt: string, why: RegExp, title: string) => {
    const r = await ccWithAssertion(id, jwt);
    t.is(r.status, 401, title);
    t.is(r.body.error, 'invalid_client', title);
    t.regex(String(r.body.error_description), why, title);
  };
  await refused(await assertion(id, { aud: 'https://other.example.com' }), /aud/, 'another server');
  // The token endpoint URL is not accepted either: only the issuer identifier (docs/oauth.md).
  await refused(await assertion(id, { aud: `${d.url}/token` }), /aud/, 'endpoint URL');
  await refused(await assertion(id, { aud: null }), /aud/, 'no aud');

  const once = await assertion(id);
  t.is((await ccWithAssertion(id, once)).status, 200);
  await refused(once, /already used/, 'replayed jti');
  // Replayed on another daemon of the same database: the jti store is shared.
  const r2 = await ccWithAssertion(id, once, dThrottled.url);
  t.is(r2.status, 401);
  t.regex(String(r2.body.error_description), /already used/);

  const now = Math.floor(Date.now() / 1000);
  await refused(await assertion(id, { exp: now - 120, iat: now - 180 }), /expired/, 'expired');
  await refused(await assertion(id, { exp: now + 3600 }), /at most 300 s/, 'exp too far ahead');
  await refused(await assertion(id, { iat: now + 600, exp: now + 120 }), /future/, 'iat in the future');
  await refused(await assertion(id, { key: { privateKey: stranger.privateKey, kid: 'pkj-unknown' } }), /key/, 'kid');
  await refused(await assertion(id, { key: stranger }), /signature/, 'signature');
  // iss = sub = client_id (RFC 7523 §3): a sub naming another client, the request naming this one.
  const otherSub = await post('/token', {
    grant_type: 'client_credentials',
    client_id: id,
    client_assertion_type: ASSERTION_TYPE,
    client_assertion: await assertion(id, { sub: clients.remote.clientId }),
  });
  t.is(otherSub.status, 401);
  t.regex(String(otherSub.body.error_description), /iss and sub/);
  const hs = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(id)
    .setSubject(id)
    .setAudience(d.url)
    .setJti('hs')
    .setExpirationTime('1m')
    .sign(new TextEncoder().encode('a shared secret that is long enough'));
  await refused(hs, /ES256, PS256, EdDSA/, 'HS256');
  const wrongType = await post('/token', {
    grant_type: 'client_credentials',
    client_id: id,
    client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer',
    client_assertion: await assertion(id),
  });
  t.is(wrongType.status, 401);
});

test('a private_key_jwt client is refused the secret methods, and a secret client the assertion', async (t) => {
  const id = clients.pkj.clientId;
  const cc = { grant_type: 'client_credentials', scope: 'api:read' };
  for (const r of [
    await post('/token', cc, basic(id, 'anything')),
    await post('/token', { ...cc, client_id: id, client_secret: 'anything' }),
    await post('/token', { ...cc, client_id: id }),
    await post('/introspect', { token: 'x' }, basic(id, 'anything')),
    await post('/revoke', { token: 'x', client_id: id, client_secret: 'anything' }),
  ]) {
    t.is(r.status, 401);
    t.is(r.body.error, 'invalid_client');
  }
  // The default client (client_secret_basic) with a well-formed assertion signed by a key it never registered.
  const s = clients.service.clientId;
  t.is((await ccWithAssertion(s, await assertion(s))).status, 401);
});

test('private_key_jwt failures count against the client budget like secret failures (429 once spent)', async (t) => {
  const id = clients.counted.clientId;
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await ccWithAssertion(id, await assertion(id, { aud: 'https://other.example.com' }), dThrottled.url);
    statuses.push(r.status);
  }
  t.deepEqual(statuses, [401, 401, 429]);
});

test.serial(
  'jwks_uri: keys fetched over HTTPS, a rotation picked up on an unknown kid, an unknown kid refused after a refetch',
  async (t) => {
    const id = clients.remote.clientId;
    const hits = () => idp.hits['/jwks'] ?? 0;
    const first = idp.published[0];
    const ok = await ccWithAssertion(id, await assertion(id, { key: first }));
    t.is(ok.status, 200, JSON.stringify(ok.body));
    const afterFirst = hits();
    t.true(afterFirst >= 1);
    t.is((await ccWithAssertion(id, await assertion(id, { key: first }))).status, 200);
    t.is(hits(), afterFirst, 'a known kid is served from the cache');

    // Rotation: the client publishes a new key and signs with it; the daemon refetches once.
    const next = await newKey('rotated-1');
    idp.published.splice(0, idp.published.length, next);
    const rotated = await ccWithAssertion(id, await assertion(id, { key: next }));
    t.is(rotated.status, 200, JSON.stringify(rotated.body));
    t.is(hits(), afterFirst + 1);

    // A kid the client never published: refetched, still unknown, refused.
    const ghost = await newKey('never-published');
    const r = await ccWithAssertion(id, await assertion(id, { key: ghost }));
    t.is(r.status, 401);
    t.regex(String(r.body.error_description), /No key with kid "never-published"/);
    t.is(hits(), afterFirst + 2);
  },
);

test('the admin API registers a private_key_jwt client with the same schema, and refuses a private key', async (t) => {
  const token = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);
  const create = (body: unknown) => api(d.url, 'POST', `/api/admin/tenants/${app.tenantId}/clients`, { body, token });
  const cc = { name: 'Admin-made', grant_types: ['client_credentials'], scopes: ['api:read'] };
  const made = await create({ ...cc, jwks_uri: `${idp.issuer}/jwks` });
  t.is(made.status, 201, JSON.stringify(made.body));
  t.is(made.body.token_endpoint_auth_method, 'private_key_jwt');
  t.is(made.body.jwks_uri, `${idp.issuer}/jwks`);
  t.false('client_secret' in made.body);
  const withSecret = await create({ ...cc, token_endpoint_auth_method: 'client_secret_post' });
  t.is(withSecret.status, 201);
  t.is(withSecret.body.token_endpoint_auth_method, 'client_secret_post');
  t.truthy(withSecret.body.client_secret);
  const leaked = await create({ ...cc, jwks: { keys: [{ ...key1.publicJwk, d: 'private' }] } });
  t.is(leaked.status, 400);
  t.is((await create({ ...cc, token_endpoint_auth_method: 'private_key_jwt' })).status, 400, 'no keys');
  t.is((await create({ ...cc, jwks_uri: 'http://keys.example.com/jwks' })).status, 400, 'not https');
});
