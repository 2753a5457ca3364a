/**
 * The FAPI 2.0 profile switch (docs/fapi.md) against one daemon: openid-client (a real relying
 * party) signs in under the profile with PAR + JAR + DPoP + private_key_jwt, refreshes and calls
 * UserInfo with DPoP, and a resource server sees `cnf.jkt` through introspection; then each
 * non-conforming variant is refused with the error the profile names; the tenant's switch (GET |
 * PUT …/fapi, audited) and a client's own `fapi_profile` overriding it; the Message Signing
 * profile's JAR and JARM requirements.
 */
import test from 'ava';
import * as oidc from 'openid-client';
import { decodeJwt, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';
import { api } from '../helpers/api.js';
import { proof, proofKey } from '../helpers/dpop.js';
import { createUserIn, introspectAs, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { fapiKeys, fapiKit, pushedAuthorization } from '../helpers/fapi.js';
import type { ClientCreds } from '../helpers/login.js';
import { challengeFrom, codeFrom, CookieJar, get, pkce, postJson, REDIRECT, sql } from '../helpers/oauth.js';
import { activeTenant, openServices } from '../helpers/seed.js';

let env: LoginEnv;
let es: CryptoKey;
let rs: CryptoKey;
/** private_key_jwt clients with keys `es` (ES256) and `rs` (RS256): FAPI 2.0 by their own fapi_profile. */
let fapiClient: string;
let signingClient: string;
/** Under the profile, but registered for RS256 ID tokens (§5.4.1 refuses it). */
let rsIdTokenClient: string;
/** A client_secret_basic client under the profile (its own fapi_profile). */
let secretClient: ClientCreds;
/** Another tenant: its admin client keeps the profile off for itself; its web client does not. */
let other: { tenantId: string; admin: ClientCreds; web: ClientCreds };

test.before(async () => {
  env = await startLoginEnv();
  const k = await fapiKeys();
  ({ es, rs } = k.keys);
  const keys = k.jwks;
  const { ds, directory, provisioning } = await openServices(env.db.url, env.db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  const jwtClient = async (
    name: string,
    fapi_profile: 'fapi2-security' | 'fapi2-message-signing',
    extra: { id_token_signed_response_alg?: 'RS256' } = {},
  ) =>
    (
      await directory.createClient(
        env.app.tenantId,
        {
          name,
          redirect_uris: [REDIRECT],
          first_party: true,
          scopes: ['openid', 'email', 'offline_access'],
          grant_types: ['authorization_code', 'refresh_token'],
          token_endpoint_auth_method: 'private_key_jwt',
          jwks: { keys },
          fapi_profile,
          ...extra,
        },
        actor,
      )
    ).client.client_id;
  fapiClient = await jwtClient('FAPI RP', 'fapi2-security');
  signingClient = await jwtClient('FAPI signing RP', 'fapi2-message-signing');
  rsIdTokenClient = await jwtClient('FAPI RP, RS256 ID tokens', 'fapi2-security', {
    id_token_signed_response_alg: 'RS256',
  });
  const s = await directory.createClient(
    env.app.tenantId,
    { name: 'Secret RP', redirect_uris: [REDIRECT], first_party: true, fapi_profile: 'fapi2-security' },
    actor,
  );
  secretClient = { clientId: s.client.client_id, secret: s.client_secret! };
  const t2 = await activeTenant(provisioning, { name: 'FAPI tenant' }, actor);
  const a2 = await directory.createClient(
    t2.id,
    { name: 'admin', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN], fapi_profile: 'off' },
    actor,
  );
  const w2 = await directory.createClient(t2.id, { name: 'web', grant_types: ['client_credentials'] }, actor);
  other = {
    tenantId: t2.id,
    admin: { clientId: a2.client.client_id, secret: a2.client_secret! },
    web: { clientId: w2.client.client_id, secret: w2.client_secret! },
  };
  await ds.destroy();
});
test.after.always(() => stopLoginEnv(env));

const url = () => env.d.url;
const { requestObject, authParams, post } = fapiKit(url, () => ({ es, rs }));

test.serial(
  'openid-client under FAPI 2.0: PAR + JAR + DPoP + private_key_jwt through the login page, refresh and UserInfo ' +
    'with DPoP; the resource server sees cnf.jkt; Bearer refused; a 61 s old code refused',
  async (t) => {
    const user = await createUserIn(env, 'fapi');
    const { config, DPoP, verifier, checks, authUrl } = await pushedAuthorization(url(), fapiClient, es, 'es');
    const jar = new CookieJar();
    const page = await get(authUrl.toString(), jar);
    t.is(page.status, 200);
    const earlier = new Set(env.sink.messages);
    const body = {
      client_id: fapiClient,
      email: user.email,
      authorization_challenge_id: challengeFrom(await page.text()),
    };
    t.is((await postJson(`${url()}/api/v1/auth/direct/email-code/send`, body, jar)).status, 200);
    const mail = await env.sink.waitFor((m) => !earlier.has(m) && m.to.includes(user.email), 15_000);
    const verify = await postJson(
      `${url()}/api/v1/auth/direct/email-code/verify`,
      { ...body, code: codeFrom(mail.text) },
      jar,
    );
    t.is(verify.status, 200);
    const back = await get(((await verify.json()) as { redirect_url: string }).redirect_url, jar);
    t.is(back.status, 302, await back.text());
    const location = new URL(back.headers.get('location')!);
    t.is(location.searchParams.get('iss'), url()); // RFC 9207, FAPI 2.0 §5.3.2.2
    const tokens = await oidc.authorizationCodeGrant(
      config,
      location,
      { pkceCodeVerifier: verifier, expectedNonce: checks.nonce, expectedState: checks.state, idTokenExpected: true },
      undefined,
      { DPoP },
    );
    t.is(tokens.token_type, 'dpop');
    const jkt = (decodeJwt(tokens.access_token).cnf as { jkt: string }).jkt;
    t.truthy(jkt);
    t.is((await oidc.fetchUserInfo(config, tokens.access_token, user.id, { DPoP })).email, user.email);
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
    t.is(refreshed.token_type, 'dpop');
    // §5.3.2.1: no rotation under the profile, so a retry with the same refresh token (its
    // response lost) succeeds rather than revoking the family as reuse.
    t.is(refreshed.refresh_token, tokens.refresh_token);
    const retried = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
    t.is(retried.refresh_token, tokens.refresh_token);
    t.not(retried.access_token, refreshed.access_token);
    // The resource server's check (docs/dpop.md): introspection names the key the token is bound to.
    const seen = { body: await introspectAs(env, refreshed.access_token) };
    t.is(seen.body.active, true);
    t.deepEqual(seen.body.cnf, { jkt });
    t.is(seen.body.token_type, 'DPoP');
    // A bearer presentation of the bound token is refused.
    const bearer = await fetch(`${url()}/userinfo`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
    t.is(bearer.status, 401);

    // A code older than 60 s (FAPI 2.0 §5.3.2.1): another pushed request on the same session,
    // its code moved 61 s into the past in the database rather than waited for.
    const p = pkce();
    const pushed = await post(
      '/par',
      { ...authParams(fapiClient, { code_challenge: p.challenge }), prompt: 'none' },
      {
        clientId: fapiClient,
      },
    );
    t.is(pushed.status, 201, JSON.stringify(pushed.body));
    const again = await get(
      `${url()}/authorize?${new URLSearchParams({ client_id: fapiClient, request_uri: pushed.body.request_uri })}`,
      jar,
    );
    const code = new URL(again.headers.get('location')!).searchParams.get('code');
    t.truthy(code, again.headers.get('location')!);
    await sql(
      env.db.url,
      env.db.dir,
      'UPDATE auth_codes SET created_at = created_at - 61000, expires_at = expires_at - 61000 ' +
        'WHERE client_id = ? AND consumed_at IS NULL',
      [fapiClient],
    );
    const k = await proofKey();
    const old = await post(
      '/token',
      { grant_type: 'authorization_code', code: code!, redirect_uri: REDIRECT, code_verifier: p.verifier },
      { clientId: fapiClient, dpop: await proof(k, 'POST', `${url()}/token`) },
    );
    t.is(old.status, 400);
    t.is(old.body.error, 'invalid_grant');
  },
);

test('the profile refuses a plain /authorize, client_secret_basic, RS256 assertions, request objects and registrations, a push without PKCE, a token request without a DPoP proof or with an RS256 one', async (t) => {
  // Plain /authorize: PAR only (§5.3.2.2), refused back to the registered redirect_uri.
  const plain = await get(`${url()}/authorize?${new URLSearchParams(authParams(fapiClient))}`);
  t.is(plain.status, 302);
  const loc = new URL(plain.headers.get('location')!);
  t.is(loc.searchParams.get('error'), 'invalid_request');
  t.regex(loc.searchParams.get('error_description')!, /Pushed authorization requests are required/);

  // client_secret_basic at /par and /token: invalid_client (§5.3.2.1).
  const secret = await post('/par', authParams(secretClient.clientId), { basic: secretClient });
  t.is(secret.status, 401);
  t.is(secret.body.error, 'invalid_client');
  t.regex(secret.body.error_description, /private_key_jwt/);
  const secretToken = await post(
    '/token',
    { grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT },
    { basic: secretClient },
  );
  t.is(secretToken.body.error, 'invalid_client');

  // RS256 (§5.4.1): a registration that chose it for what this service signs.
  const rsIdToken = await post('/par', authParams(rsIdTokenClient), { clientId: rsIdTokenClient });
  t.is(rsIdToken.status, 401);
  t.is(rsIdToken.body.error, 'invalid_client');
  t.regex(rsIdToken.body.error_description, /id_token_signed_response_alg/);

  // RS256 (§5.4.1): a client assertion, a request object.
  const rsAssertion = await post('/par', authParams(fapiClient), { clientId: fapiClient, alg: 'RS256' });
  t.is(rsAssertion.status, 401);
  t.is(rsAssertion.body.error, 'invalid_client');
  const rsObject = await post(
    '/par',
    { request: await requestObject(fapiClient, authParams(fapiClient), 'RS256') },
    { clientId: fapiClient },
  );
  t.is(rsObject.status, 400);
  t.is(rsObject.body.error, 'invalid_request_object');
  t.regex(rsObject.body.error_description, /FAPI 2\.0 profile/);

  // PKCE S256 (§5.3.2.2).
  const noPkce = authParams(fapiClient);
  delete noPkce.code_challenge;
  delete noPkce.code_challenge_method;
  const noChallenge = await post('/par', noPkce, { clientId: fapiClient });
  t.is(noChallenge.status, 400);
  t.is(noChallenge.body.error, 'invalid_request');

  // Sender-constrained tokens (§5.3.2.1): the token request's proof, required, with a FAPI algorithm.
  const grant = {
    grant_type: 'authorization_code',
    code: 'not-a-code',
    redirect_uri: REDIRECT,
    code_verifier: pkce().verifier,
  };
  const noProof = await post('/token', grant, { clientId: fapiClient });
  t.is(noProof.status, 400);
  t.is(noProof.body.error, 'invalid_dpop_proof');
  const rsa = await generateKeyPair('RS256', { extractable: true });
  const rsProof = await proof(
    { privateKey: rsa.privateKey, jwk: await exportJWK(rsa.publicKey) },
    'POST',
    `${url()}/token`,
    {
      header: { alg: 'RS256' },
    },
  );
  const rsDpop = await post('/token', grant, { clientId: fapiClient, dpop: rsProof });
  t.is(rsDpop.body.error, 'invalid_dpop_proof');
  // With a good proof the request reaches the grant (the code is made up).
  const k = await proofKey();
  const reached = await post('/token', grant, { clientId: fapiClient, dpop: await proof(k, 'POST', `${url()}/token`) });
  t.is(reached.body.error, 'invalid_grant');
});

test('Message Signing: a push needs a signed request object (JAR) and a JWT authorization response (JARM)', async (t) => {
  const unsigned = await post('/par', authParams(signingClient, { response_mode: 'jwt' }), { clientId: signingClient });
  t.is(unsigned.status, 400);
  t.regex(unsigned.body.error_description, /signed request object/);
  const queryMode = await post(
    '/par',
    { request: await requestObject(signingClient, authParams(signingClient)) },
    { clientId: signingClient },
  );
  t.is(queryMode.status, 400);
  t.regex(queryMode.body.error_description, /JWT authorization response/);
  const good = await post(
    '/par',
    { request: await requestObject(signingClient, authParams(signingClient, { response_mode: 'jwt' })) },
    { clientId: signingClient },
  );
  t.is(good.status, 201, JSON.stringify(good.body));
});

test("the tenant switch: GET and PUT …/fapi with ETag, audited; a client's own fapi_profile overrides it (at /token and /introspect); bad input is 400", async (t) => {
  const admin = await post('/token', { grant_type: 'client_credentials' }, { basic: other.admin });
  t.is(admin.status, 200, JSON.stringify(admin.body));
  const token = admin.body.access_token;
  const path = `/api/admin/tenants/${other.tenantId}/fapi`;
  const before = await api(url(), 'GET', path, { token });
  t.is(before.status, 200);
  t.deepEqual(before.body.policy, { profile: 'off' });
  t.is((await post('/token', { grant_type: 'client_credentials' }, { basic: other.web })).status, 200);

  const put = await api(url(), 'PUT', path, {
    token,
    body: { profile: 'fapi2-security' },
    headers: { 'if-match': before.headers.get('etag')! },
  });
  t.is(put.status, 200, JSON.stringify(put.body));
  t.deepEqual(put.body.policy, { profile: 'fapi2-security' });
  const stale = await api(url(), 'PUT', path, {
    token,
    body: { profile: 'off' },
    headers: { 'if-match': before.headers.get('etag')! },
  });
  t.is(stale.status, 412);
  t.is((await api(url(), 'PUT', path, { token, body: { profile: 'fapi3' } })).status, 400);

  // The tenant's secret client is now refused; the admin client, fapi_profile off, is not.
  const web = await post('/token', { grant_type: 'client_credentials' }, { basic: other.web });
  t.is(web.status, 401);
  t.is(web.body.error, 'invalid_client');
  t.is((await post('/token', { grant_type: 'client_credentials' }, { basic: other.admin })).status, 200);
  // So is the secret client as an introspection caller (§5.3.2.1); the admin client is not.
  const introspect = (c: ClientCreds) => post('/introspect', { token: token }, { basic: c });
  const refused = await introspect(other.web);
  t.is(refused.status, 401);
  t.is(refused.body.error, 'invalid_client');
  t.is((await introspect(other.admin)).status, 200);

  const audit = (await sql(
    env.db.url,
    env.db.dir,
    "SELECT actor_id FROM audit_events WHERE tenant_id = ? AND action = 'tenant.fapi.update'",
    [other.tenantId],
  )) as { actor_id: string }[];
  t.is(audit.length, 1);
  t.is(audit[0].actor_id, other.admin.clientId);
});
