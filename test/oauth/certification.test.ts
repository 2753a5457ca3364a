/**
 * What OpenID certification needs of a client's registration (docs/conformance.md, docs/oauth.md
 * "Signing algorithms" and "PKCE"): per-client signing algorithms for the ID token, the access
 * token and a signed UserInfo answer (RS256, PS256, ES256, EdDSA, each with a key of its own in
 * the JWKS), and a confidential client that may authorize without PKCE, while a public one never
 * may. openid-client is the relying party; the user signs in on the login page as a person would.
 */
import test from 'ava';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { createHmac } from 'node:crypto';
import type { TestDb } from '../helpers/db.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import type { ClientCreds } from '../helpers/login.js';
import { clientCredentialsToken } from '../helpers/seed.js';
import { loginKit } from '../helpers/login.js';
import { challengeFrom, codeFrom, CookieJar, get, pkce, postJson, REDIRECT, type App } from '../helpers/oauth.js';
import { createUserIn, introspectAs, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { api } from '../helpers/api.js';

let env: LoginEnv;
let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let adminToken: string;

test.before(async () => {
  env = await startLoginEnv();
  ({ db, d, app, sink } = env);
  adminToken = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

const kit = loginKit(
  () => d.url,
  () => sink,
);

/** POST /api/admin/tenants/{id}/clients as the tenant admin. */
const registerClient = (body: Record<string, unknown>) =>
  api(d.url, 'POST', `/api/admin/tenants/${app.tenantId}/clients`, { body, token: adminToken });

/** A first-party confidential client for the code flow, with `extra` registration metadata. */
async function client(extra: Record<string, unknown>): Promise<ClientCreds> {
  const r = await registerClient({
    name: 'Certification RP',
    redirect_uris: [REDIRECT],
    first_party: true,
    scopes: ['openid', 'profile', 'email', 'offline_access'],
    ...extra,
  });
  if (r.status !== 201) throw new Error(`register: ${r.status} ${JSON.stringify(r.body)}`);
  return { clientId: String(r.body.client_id), secret: String(r.body.client_secret) };
}

/** openid-client's configuration from discovery; `metadata` is what the RP registered. */
function rp(c: ClientCreds, metadata: Partial<oidc.ClientMetadata> = {}, auth = oidc.ClientSecretBasic(c.secret)) {
  return oidc.discovery(new URL(d.url), c.clientId, { redirect_uris: [REDIRECT], ...metadata }, auth, {
    execute: [oidc.allowInsecureRequests],
  });
}

/**
 * The authorization request openid-client builds, then the sign-in a person makes on the login
 * page (email, code from the mail, the continuation): returns where the browser lands.
 * `challenge`: a PKCE challenge to send; none by default, as the certification suite sends none.
 */
async function signIn(
  config: oidc.Configuration,
  email: string,
  checks: { nonce: string; state: string; challenge?: string },
): Promise<URL> {
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid email profile offline_access',
    nonce: checks.nonce,
    state: checks.state,
    ...(checks.challenge ? { code_challenge: checks.challenge, code_challenge_method: 'S256' } : {}),
  });
  const jar = new CookieJar();
  const page = await get(url.toString(), jar);
  if (page.status !== 200) throw new Error(`authorize: ${page.status} ${page.headers.get('location')}`);
  const challenge = challengeFrom(await page.text());
  const clientId = config.clientMetadata().client_id;
  const earlier = new Set(sink.messages);
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

const checksNow = () => ({ nonce: oidc.randomNonce(), state: oidc.randomState() });

test('openid-client, a confidential client registered for RS256 without PKCE (require_pkce false): signs in', async (t) => {
  const c = await client({ id_token_signed_response_alg: 'RS256', require_pkce: false });
  const user = await createUserIn(env, 'rs256-');
  // openid-client enforces the registered id_token_signed_response_alg on the ID token header.
  const config = await rp(c, { id_token_signed_response_alg: 'RS256' });
  const checks = checksNow();
  const callback = await signIn(config, user.email, checks);
  t.truthy(callback.searchParams.get('code'), String(callback));

  const tokens = await oidc.authorizationCodeGrant(config, callback, {
    expectedNonce: checks.nonce,
    expectedState: checks.state,
    idTokenExpected: true,
  });
  t.is(tokens.claims()!.sub, user.id);
  t.is(tokens.claims()!.nonce, checks.nonce);
  // Independently of the library: RS256, verified with the RSA key /jwks publishes under its kid.
  const jwks = createRemoteJWKSet(new URL(`${d.url}/jwks`));
  const { protectedHeader } = await jwtVerify(tokens.id_token!, jwks, {
    issuer: d.url,
    audience: c.clientId,
    algorithms: ['RS256'],
  });
  t.is(protectedHeader.alg, 'RS256');
  const published = (await (await fetch(`${d.url}/jwks`)).json()) as { keys: Record<string, string>[] };
  const key = published.keys.find((k) => k.kid === protectedHeader.kid)!;
  t.like(key, { kty: 'RSA', alg: 'RS256', use: 'sig' });
  t.true(Buffer.from(key.n, 'base64url').length >= 256, 'RSA 2048 or more');
  // The access token keeps the default algorithm: the client registered none for it.
  t.is(decodeProtectedHeader(tokens.access_token).alg, 'ES256');
  t.is((await oidc.fetchUserInfo(config, tokens.access_token, user.id)).email, user.email);
});

test('the same client registered without require_pkce false is refused at /authorize: code_challenge is required', async (t) => {
  const c = await client({ id_token_signed_response_alg: 'RS256' });
  t.is((await registerClient({ name: 'x', redirect_uris: [REDIRECT] })).body.require_pkce, true, 'the default');
  const config = await rp(c, { id_token_signed_response_alg: 'RS256' });
  const checks = checksNow();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid email',
    nonce: checks.nonce,
    state: checks.state,
  });
  const r = await get(url.toString());
  t.is(r.status, 302);
  const loc = new URL(r.headers.get('location')!);
  t.is(`${loc.origin}${loc.pathname}`, REDIRECT);
  t.is(loc.searchParams.get('error'), 'invalid_request');
  t.regex(loc.searchParams.get('error_description') ?? '', /code_challenge is required/);
  t.is(loc.searchParams.get('state'), checks.state);
  t.is(loc.searchParams.get('code'), null);
  // openid-client reads the callback as the authorization error it is.
  const e = await t.throwsAsync(() => oidc.authorizationCodeGrant(config, loc, { expectedState: checks.state }));
  t.is((e as { error?: string }).error, 'invalid_request');
});

for (const alg of ['PS256', 'EdDSA'] as const) {
  test(`openid-client verifies a ${alg} ID token and a ${alg} access token; refresh and introspection accept them`, async (t) => {
    const c = await client({ id_token_signed_response_alg: alg, access_token_signed_response_alg: alg });
    const user = await createUserIn(env, `${alg.toLowerCase()}-`);
    const config = await rp(c, { id_token_signed_response_alg: alg });
    const checks = checksNow();
    const verifier = oidc.randomPKCECodeVerifier();
    const callback = await signIn(config, user.email, {
      ...checks,
      challenge: await oidc.calculatePKCECodeChallenge(verifier),
    });
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedNonce: checks.nonce,
      expectedState: checks.state,
      idTokenExpected: true,
    });
    t.is(decodeProtectedHeader(tokens.id_token!).alg, alg);
    t.is(decodeProtectedHeader(tokens.access_token).alg, alg);
    const jwks = createRemoteJWKSet(new URL(`${d.url}/jwks`));
    await t.notThrowsAsync(() =>
      jwtVerify(tokens.access_token, jwks, { issuer: d.url, typ: 'at+jwt', algorithms: [alg] }),
    );
    // The service's own verifiers: UserInfo's bearer check, introspection, the refresh grant.
    t.is((await oidc.fetchUserInfo(config, tokens.access_token, user.id)).sub, user.id);
    t.is((await introspectAs(env, tokens.access_token)).active, true);
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    t.is(decodeProtectedHeader(refreshed.access_token).alg, alg);
    t.is((await oidc.fetchUserInfo(config, refreshed.access_token, user.id)).sub, user.id);
  });
}

test('userinfo_signed_response_alg: /userinfo answers application/jwt that openid-client verifies (OIDC Core §5.3.2)', async (t) => {
  const c = await client({ userinfo_signed_response_alg: 'RS256', require_pkce: false });
  const user = await createUserIn(env, 'uijwt-');
  const config = await rp(c, { userinfo_signed_response_alg: 'RS256' });
  const checks = checksNow();
  const tokens = await oidc.authorizationCodeGrant(config, await signIn(config, user.email, checks), {
    expectedNonce: checks.nonce,
    expectedState: checks.state,
  });
  // The ID token keeps the default: only UserInfo was registered.
  t.is(decodeProtectedHeader(tokens.id_token!).alg, 'ES256');
  const raw = await fetch(`${d.url}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  t.is(raw.status, 200);
  t.regex(raw.headers.get('content-type') ?? '', /^application\/jwt/);
  const { payload, protectedHeader } = await jwtVerify(await raw.text(), createRemoteJWKSet(new URL(`${d.url}/jwks`)), {
    issuer: d.url,
    audience: c.clientId,
    algorithms: ['RS256'],
  });
  t.is(protectedHeader.alg, 'RS256');
  t.is(payload.sub, user.id);
  t.is(payload.email, user.email);
  // openid-client checks the signature, iss and aud itself when the client registered the alg.
  const info = await oidc.fetchUserInfo(config, tokens.access_token, user.id);
  t.is(info.email, user.email);
  // A client that registered nothing still gets JSON.
  const plain = await kit.tokensFor(app.web, user.email);
  const json = await kit.userinfo(plain.access_token);
  t.regex(json.headers.get('content-type') ?? '', /^application\/json/);
});

test('registration: unknown or unsigned algorithms are refused naming the field; a public client cannot turn PKCE off', async (t) => {
  for (const [field, alg] of [
    ['id_token_signed_response_alg', 'none'],
    ['id_token_signed_response_alg', 'HS256'],
    ['userinfo_signed_response_alg', 'HS512'],
    ['access_token_signed_response_alg', 'ES512'],
  ]) {
    const r = await registerClient({ name: 'bad alg', redirect_uris: [REDIRECT], [field]: alg });
    t.is(r.status, 400, `${field}=${alg}`);
    t.regex(JSON.stringify(r.body), new RegExp(field));
  }
  const pub = await registerClient({ name: 'SPA', public: true, redirect_uris: [REDIRECT], require_pkce: false });
  t.is(pub.status, 400);
  t.regex(JSON.stringify(pub.body), /require_pkce/);
  t.regex(JSON.stringify(pub.body), /public client always requires PKCE/);
  const pubOk = await registerClient({ name: 'SPA', public: true, redirect_uris: [REDIRECT] });
  t.is(pubOk.status, 201);
  t.is(pubOk.body.require_pkce, true);
});

test('a confidential client without PKCE: a code issued with a challenge needs its verifier; one issued without refuses a verifier', async (t) => {
  const c = await client({ require_pkce: false });
  const user = await createUserIn(env, 'downgrade-');
  const jar = await kit.signIn(c.clientId, user.email);
  const code = async (challenge?: string) => {
    const r = await get(
      `${d.url}/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: c.clientId,
        redirect_uri: REDIRECT,
        scope: 'openid',
        state: 's',
        ...(challenge ? { code_challenge: challenge, code_challenge_method: 'S256' } : {}),
      })}`,
      jar,
    );
    const got = new URL(r.headers.get('location')!).searchParams.get('code');
    if (!got) throw new Error(`no code: ${r.headers.get('location')}`);
    return got;
  };
  const redeem = async (theCode: string, verifier?: string) => {
    const res = await fetch(`${d.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: kit.basic(c) },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: theCode,
        redirect_uri: REDIRECT,
        ...(verifier ? { code_verifier: verifier } : {}),
      }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  };
  const p = pkce();
  // RFC 7636 §4.6: a challenge sent binds the code, although the client need not send one.
  const bound = await redeem(await code(p.challenge));
  t.is(bound.status, 400);
  t.is(bound.body.error, 'invalid_grant');
  t.is((await redeem(await code(p.challenge), pkce().verifier)).body.error, 'invalid_grant', 'a wrong verifier');
  t.is((await redeem(await code(p.challenge), p.verifier)).status, 200, 'its own verifier');
  // OAuth 2.1 §4.1.3: a verifier for a code issued without a challenge is refused.
  const downgraded = await redeem(await code(), p.verifier);
  t.is(downgraded.status, 400);
  t.is(downgraded.body.error, 'invalid_grant');
  t.regex(downgraded.body.error_description, /no code_challenge/);
  t.is((await redeem(await code())).status, 200, 'no challenge, no verifier');
  // code_challenge_method alone, without a challenge, is still a malformed request.
  const half = await get(
    `${d.url}/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: c.clientId,
      redirect_uri: REDIRECT,
      scope: 'openid',
      code_challenge_method: 'S256',
    })}`,
    jar,
  );
  t.is(new URL(half.headers.get('location')!).searchParams.get('error'), 'invalid_request');
});

test('a public client is held to PKCE even if its row says otherwise', async (t) => {
  // Only the registration refuses it; the row is changed directly to prove /authorize checks the type too.
  const { sql } = await import('../helpers/oauth.js');
  await sql(db.url, db.dir, 'UPDATE clients SET require_pkce = 0 WHERE client_id = ?', [app.native.clientId]);
  const r = await get(
    `${d.url}/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: app.native.clientId,
      redirect_uri: 'http://127.0.0.1:7777/cb',
      scope: 'openid',
      state: 's',
    })}`,
  );
  t.is(new URL(r.headers.get('location')!).searchParams.get('error'), 'invalid_request');
});

test('the JWKS has a key for every algorithm offered, each with alg, kid and use; discovery lists them', async (t) => {
  const m = (await (await fetch(`${d.url}/.well-known/openid-configuration`)).json()) as Record<string, string[]>;
  for (const field of ['id_token_signing_alg_values_supported', 'userinfo_signing_alg_values_supported'])
    t.deepEqual([...m[field]].sort(), ['ES256', 'EdDSA', 'PS256', 'RS256'], field);
  const { keys } = (await (await fetch(`${d.url}/jwks`)).json()) as { keys: Record<string, string | undefined>[] };
  const kty = { ES256: 'EC', RS256: 'RSA', PS256: 'RSA', EdDSA: 'OKP' } as Record<string, string>;
  for (const alg of ['ES256', 'RS256', 'PS256', 'EdDSA']) {
    const k = keys.find((x) => x.alg === alg);
    t.truthy(k, alg);
    t.is(k!.kty, kty[alg]);
    t.is(k!.use, 'sig');
    t.truthy(k!.kid);
    t.is(k!.d, undefined);
  }
  t.is(keys.find((x) => x.alg === 'EdDSA')!.crv, 'Ed25519');
  t.is(keys.find((x) => x.alg === 'ES256')!.crv, 'P-256');
});

test('a token whose alg does not match its key is refused (RFC 8725 §3.1): no HS256 with the public key, no RS256 under an EC kid', async (t) => {
  const user = await createUserIn(env, 'mismatch-');
  const { access_token } = await kit.tokensFor(app.web, user.email);
  const [h, p] = access_token.split('.');
  const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as { kid: string };
  const { keys } = (await (await fetch(`${d.url}/jwks`)).json()) as { keys: Record<string, string>[] };
  const rsa = keys.find((k) => k.alg === 'RS256')!;
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  // HS256 "signed" with the RSA public key's JWK as the secret (the classic key confusion).
  const hsHeader = b64({ alg: 'HS256', kid: rsa.kid, typ: 'at+jwt' });
  const mac = createHmac('sha256', JSON.stringify(rsa)).update(`${hsHeader}.${p}`).digest('base64url');
  const hs = `${hsHeader}.${p}.${mac}`;
  // The ES256 token's own signature under a header that claims RS256 with the EC key's kid.
  const rsHeader = b64({ alg: 'RS256', kid: header.kid, typ: 'at+jwt' });
  const rs = `${rsHeader}.${p}.${access_token.split('.')[2]}`;
  // PS256 claimed for the RS256 key: the key is bound to RS256 only.
  const psHeader = b64({ alg: 'PS256', kid: rsa.kid, typ: 'at+jwt' });
  const ps = `${psHeader}.${p}.${access_token.split('.')[2]}`;
  for (const forged of [hs, rs, ps]) {
    t.is((await kit.userinfo(forged)).status, 401);
    t.is((await introspectAs(env, forged)).active, false);
  }
  t.is((await kit.userinfo(access_token)).status, 200, 'the genuine token still works');
});
