/**
 * Stand-ins for the OpenID Foundation's FAPI 2.0 conformance-suite modules that
 * test/oauth/fapi.test.ts does not cover (docs/fapi.md, "The conformance suite's modules, one by
 * one"), against one daemon and one signed-in user: a private_key_jwt client under
 * `fapi2-security` pushes (PAR), sends the browser to /authorize with only client_id and
 * request_uri, and redeems with DPoP. Each value is what the suite's module sends, and each
 * expectation what it checks.
 */
import test from 'ava';
import { calculateJwkThumbprint, decodeJwt } from 'jose';
import { randomBytes } from 'node:crypto';
import { ath, proof, proofKey, type ProofKey } from '../helpers/dpop.js';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { fapiKeys, fapiKit, now, type FapiKeys, type PostOptions } from '../helpers/fapi.js';
import { loginKit } from '../helpers/login.js';
import { CookieJar, get, pkce, REDIRECT } from '../helpers/oauth.js';
import { openServices } from '../helpers/seed.js';

let env: LoginEnv;
let keys: FapiKeys;
/** Under the profile by its own fapi_profile, registered with `keys`. */
let rp: string;
/** Under the profile too, registered with keys of its own (not `keys`). */
let rp2: string;
/** The signed-in user's session. */
let jar: CookieJar;

test.before(async () => {
  env = await startLoginEnv();
  const mine = await fapiKeys();
  const theirs = await fapiKeys();
  keys = mine.keys;
  const { ds, directory } = await openServices(env.db.url, env.db.dir);
  const client = async (name: string, jwks: typeof mine.jwks) =>
    (
      await directory.createClient(
        env.app.tenantId,
        {
          name,
          redirect_uris: [REDIRECT],
          first_party: true,
          scopes: ['openid', 'email'],
          grant_types: ['authorization_code'],
          token_endpoint_auth_method: 'private_key_jwt',
          jwks: { keys: jwks },
          fapi_profile: 'fapi2-security',
        },
        { type: 'system', id: 'test' },
      )
    ).client.client_id;
  rp = await client('FAPI suite RP', mine.jwks);
  rp2 = await client('FAPI suite second RP', theirs.jwks);
  await ds.destroy();
  const user = await createUserIn(env, 'suite');
  jar = await loginKit(url, () => env.sink).signIn(rp, user.email);
});
test.after.always(() => stopLoginEnv(env));

const url = () => env.d.url;
const { assertion, requestObject, authParams, post } = fapiKit(url, () => keys);

/**
 * Pushes `form` for `rp`, then sends the signed-in browser to /authorize with only client_id
 * and request_uri (RFC 9126 §4: module par-without-duplicate-parameters); the redirect's query.
 */
async function authorize(form: Record<string, string>, o: PostOptions = {}) {
  const pushed = await post('/par', form, { clientId: rp, ...o });
  if (pushed.status !== 201) throw new Error(`push ${pushed.status} ${JSON.stringify(pushed.body)}`);
  const res = await get(
    `${url()}/authorize?${new URLSearchParams({ client_id: rp, request_uri: pushed.body.request_uri })}`,
    jar,
  );
  const location = res.headers.get('location');
  if (res.status !== 302 || !location) throw new Error(`authorize ${res.status} ${await res.text()}`);
  return new URL(location).searchParams;
}

/**
 * A code for `extra` on top of the usual parameters (less `drop`), pushed with the DPoP proof
 * `dpop` if given, and the PKCE verifier to redeem it with.
 */
async function code(extra: Record<string, string> = {}, drop: string[] = [], dpop?: string) {
  const p = pkce();
  const form = authParams(rp, { code_challenge: p.challenge, ...extra });
  for (const name of drop) delete form[name];
  const back = await authorize(form, dpop ? { dpop } : {});
  return { back, code: back.get('code')!, verifier: p.verifier };
}

/** Redeems a code with a DPoP proof of `key` whose claims `claims` replace. */
async function redeem(c: { code: string; verifier: string }, key: ProofKey, claims: Record<string, unknown> = {}) {
  const grant = { grant_type: 'authorization_code', code: c.code, redirect_uri: REDIRECT, code_verifier: c.verifier };
  return post('/token', grant, { clientId: rp, dpop: await proof(key, 'POST', `${url()}/token`, { claims }) });
}

/** GET /userinfo with `token` under `scheme` and a proof of `key` whose claims `claims` replace. */
async function userinfo(token: string, key: ProofKey, scheme: string, claims: Record<string, unknown> = {}) {
  const dpop = await proof(key, 'GET', `${url()}/userinfo`, { claims: { ath: ath(token), ...claims } });
  const res = await fetch(`${url()}/userinfo`, { headers: { authorization: `${scheme} ${token}`, dpop } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const randomText = (length: number) => randomBytes(length).toString('base64url').slice(0, length);

test('authorization requests the suite expects to succeed: no state, 64- and 384-character nonces and a 1000-character state come back intact, a request object with an aud array holding the issuer or an nbf 8 s ahead', async (t) => {
  const key = await proofKey();
  // ensure-authorization-request-without-state-success: a code, and no state in the answer.
  const stateless = await code({}, ['state']);
  t.truthy(stateless.code);
  t.false(stateless.back.has('state'));
  t.is(stateless.back.get('iss'), url());
  t.is((await redeem(stateless, key)).status, 200);

  // ensure-authorization-request-with-64-char-nonce-success (FAPI 2.0 §5.3.2.2 item 14) and
  // ensure-authorization-request-with-long-nonce (384 characters): the ID token carries it unchanged.
  for (const length of [64, 384]) {
    const nonce = randomText(length);
    const tokens = await redeem(await code({ nonce }), key);
    t.is(tokens.status, 200, JSON.stringify(tokens.body));
    t.is(decodeJwt(tokens.body.id_token).nonce, nonce, `${length}-character nonce`);
  }

  // ensure-authorization-request-with-long-state: 1000 characters, ending in the unreserved
  // punctuation the suite appends, returned exactly (under the 2048 bound of authorize-params.ts).
  const state = randomText(996) + '-._~';
  const long = await code({ state });
  t.is(long.back.get('state'), state);
  t.truthy(long.code);

  // ensure-request-object-with-multiple-aud-succeeds: aud lists the issuer among others (RFC 7519 §4.1.3).
  const p = pkce();
  const multiAud = await authorize({
    request: await requestObject(rp, {
      ...authParams(rp, { code_challenge: p.challenge }),
      aud: [url(), 'https://other1.example.com', 'invalid'],
    }),
  });
  t.truthy(multiAud.get('code'));
  // ensure-request-object-with-nbf-8-seconds-in-the-future-is-accepted: within the 30 s skew (docs/par.md).
  const early = await post(
    '/par',
    { request: await requestObject(rp, { ...authParams(rp), nbf: now() + 8, exp: now() + 68 }) },
    { clientId: rp },
  );
  t.is(early.status, 201, JSON.stringify(early.body));
});

test("client authentication: an assertion whose iat and nbf are 8 s ahead is accepted at /par, 62 s ahead refused, an aud array holding the issuer refused (§5.3.2.1); at /token a second client's client_id with an assertion signed with the first one's key is invalid_client", async (t) => {
  // par-ensure-jwt-client-assertions-nbf-8-seconds-in-the-future-is-accepted.
  const soon = await assertion(rp, 'ES256', { iat: now() + 8, nbf: now() + 8 });
  const accepted = await post('/par', authParams(rp), { clientId: rp, assertion: soon });
  t.is(accepted.status, 201, JSON.stringify(accepted.body));

  // par-ensure-jwt-client-assertions-nbf-over-60-seconds-in-the-future-fails: iat, nbf, exp all 62 s ahead.
  const later = await assertion(rp, 'ES256', { iat: now() + 62, nbf: now() + 62, exp: now() + 122 });
  const refused = await post('/par', authParams(rp), { clientId: rp, assertion: later });
  t.is(refused.status, 401);
  t.is(refused.body.error, 'invalid_client');

  // par-test-array-as-audience-fails: FAPI 2.0 §5.3.2.1 item 8, the issuer "as a string" only.
  const array = await assertion(rp, 'ES256', { aud: [url(), `${url()}/token`] });
  const arrayAud = await post('/par', authParams(rp), { clientId: rp, assertion: array });
  t.is(arrayAud.status, 401);
  t.is(arrayAud.body.error, 'invalid_client');
  t.regex(arrayAud.body.error_description, /aud/);

  // ensure-client-id-in-token-endpoint: rp's code, rp2's client_id with an assertion naming rp2
  // but signed with rp's key. The code is then still rp's to redeem.
  const c = await code();
  const grant = { grant_type: 'authorization_code', code: c.code, redirect_uri: REDIRECT, code_verifier: c.verifier };
  const key = await proofKey();
  const dpop = () => proof(key, 'POST', `${url()}/token`);
  const swapped = await post('/token', grant, { clientId: rp2, assertion: await assertion(rp2), dpop: await dpop() });
  t.is(swapped.status, 401);
  t.is(swapped.body.error, 'invalid_client');
  t.is((await post('/token', grant, { clientId: rp, dpop: await dpop() })).status, 200);
});

test('DPoP: a proof at /par binds the code (RFC 9449 §10.1); proofs with iat 10 s before or after, or with nbf and exp, pass at /par, /token and /userinfo; the DPoP scheme in inverted case at /userinfo', async (t) => {
  const key = await proofKey();
  const parProof = (claims: Record<string, unknown> = {}) => proof(key, 'POST', `${url()}/par`, { claims });
  // ensure-dpopproof-at-par-endpoint-binding-success: the push's proof binds the code as
  // dpop_jkt would; another key's proof at /token is refused and spends nothing.
  const bound = await code({}, [], await parProof());
  const otherKey = await redeem(bound, await proofKey());
  t.is(otherKey.status, 400);
  t.is(otherKey.body.error, 'invalid_grant');
  t.is((await redeem(bound, key)).status, 200);
  // Both ways at once must name the same key (§10.1).
  const elsewhere = await calculateJwkThumbprint((await proofKey()).jwk);
  const both = await post('/par', authParams(rp, { dpop_jkt: elsewhere }), { clientId: rp, dpop: await parProof() });
  t.is(both.status, 400);
  t.is(both.body.error, 'invalid_request');

  // ensure-dpopproof-with-iat-10seconds-before-succeeds, …-after-succeeds (the suite sends 8 s
  // after), check-dpop-proof-nbf-exp (nbf now, exp 5 minutes ahead): all inside the 60 s window.
  const variants: Record<string, () => Record<string, unknown>> = {
    'iat 10 s before': () => ({ iat: now() - 10 }),
    'iat 10 s after': () => ({ iat: now() + 10 }),
    'nbf and exp': () => ({ nbf: now(), exp: now() + 300 }),
  };
  for (const [name, claims] of Object.entries(variants)) {
    const tokens = await redeem(await code({}, [], await parProof(claims())), key, claims());
    t.is(tokens.status, 200, `${name}: ${JSON.stringify(tokens.body)}`);
    t.is(tokens.body.token_type, 'DPoP');
    t.is((await userinfo(tokens.body.access_token, key, 'DPoP', claims())).status, 200, name);
  }

  // access-token-type-header-case-sensitivity: the token_type inverted, "dpOp" (RFC 9110 §11.1:
  // the scheme is case-insensitive).
  const tokens = await redeem(await code(), key);
  const inverted = await userinfo(tokens.body.access_token, key, 'dpOp');
  t.is(inverted.status, 200, JSON.stringify(inverted.body));
  t.truthy(inverted.body.sub);
});

test('the pushed authorization endpoint: PUT and GET are 405 (RFC 9126 §2.3), a request object carrying request_uri is invalid_request_object, a repeated parameter is invalid_request', async (t) => {
  // par-attempt-invalid-http-method (the suite sends PUT).
  for (const method of ['PUT', 'GET']) {
    const res = await fetch(`${url()}/par`, { method });
    t.is(res.status, 405, method);
    t.regex(res.headers.get('allow') ?? '', /POST/);
  }
  // par-authorization-request-containing-request_uri: inside the request object (RFC 9101 §4).
  const nested = await post(
    '/par',
    { request: await requestObject(rp, { ...authParams(rp), request_uri: 'urn:example:bwc4JK-ESC0w8acc191e-Y1LTC2' }) },
    { clientId: rp },
  );
  t.is(nested.status, 400);
  t.is(nested.body.error, 'invalid_request_object');
  // RFC 9126 §2.1 and RFC 6749 §3.1: a parameter sent twice.
  const twice = await post('/par', [...Object.entries(authParams(rp)), ['scope', 'openid']], { clientId: rp });
  t.is(twice.status, 400);
  t.is(twice.body.error, 'invalid_request');
});
