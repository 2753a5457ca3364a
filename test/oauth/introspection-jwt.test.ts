/**
 * Signed introspection responses (RFC 9701; docs/jarm.md): a caller that asks for
 * `application/token-introspection+jwt`, or is registered with
 * `introspection_signed_response_alg`, gets the JSON answer inside a JWT signed with the
 * service's key (verified here with /jwks by jose); the cache in front of verification and the
 * revocation check on every request (docs/introspection.md) hold for it as for JSON.
 */
import test from 'ava';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { ClientCreds } from '../helpers/login.js';
import { clientCredentialsToken } from '../helpers/seed.js';
import { startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { api } from '../helpers/api.js';

const JWT_TYPE = 'application/token-introspection+jwt';
let env: LoginEnv;
let adminToken: string;

test.before(async () => {
  env = await startLoginEnv();
  adminToken = await clientCredentialsToken(env.d.url, env.app.admin.clientId, env.app.admin.secret);
});
test.after.always(() => stopLoginEnv(env));

const basic = (c: ClientCreds) => 'Basic ' + Buffer.from(`${c.clientId}:${c.secret}`).toString('base64');

async function introspect(caller: ClientCreds, token: string, accept?: string) {
  const res = await fetch(`${env.d.url}/introspect`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basic(caller),
      ...(accept ? { accept } : {}),
    },
    body: new URLSearchParams({ token }),
  });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** RFC 9701 §5: verified with the published keys, `typ` token-introspection+jwt, iss, aud (the caller), iat. */
async function verified(
  jwt: string,
  caller: ClientCreds,
): Promise<JWTPayload & { token_introspection: Record<string, unknown> }> {
  const { payload } = await jwtVerify(jwt, createRemoteJWKSet(new URL(`${env.d.url}/jwks`)), {
    issuer: env.d.url,
    audience: caller.clientId,
    typ: 'token-introspection+jwt',
    requiredClaims: ['iat', 'token_introspection'],
  });
  return payload as JWTPayload & { token_introspection: Record<string, unknown> };
}

test('Accept: application/token-introspection+jwt answers a signed JWT of the answer; cache hits and revocation hold', async (t) => {
  const token = await clientCredentialsToken(env.d.url, env.app.admin.clientId, env.app.admin.secret);
  const first = await introspect(env.api, token, JWT_TYPE);
  t.is(first.status, 200);
  t.is(first.type, JWT_TYPE);
  t.is(decodeProtectedHeader(first.text).alg, 'ES256', 'the default algorithm');
  const claims = await verified(first.text, env.api);
  t.is(claims.token_introspection.active, true);
  t.is(claims.token_introspection.client_id, env.app.admin.clientId);
  t.is(claims.exp, undefined, 'no exp (nor sub) at the top: the answer is no access token (RFC 9701 §5)');
  t.is(claims.sub, undefined);
  // The second call is a cache hit: the same answer, signed afresh.
  const second = await introspect(env.api, token, JWT_TYPE);
  t.deepEqual((await verified(second.text, env.api)).token_introspection, claims.token_introspection);
  // The revocation check runs on every request, cache hits included: the JWT says inactive at once.
  const revoke = await fetch(`${env.d.url}/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(env.app.admin) },
    body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
  });
  t.is(revoke.status, 200);
  const after = await introspect(env.api, token, JWT_TYPE);
  t.deepEqual((await verified(after.text, env.api)).token_introspection, { active: false });
});

test('without the Accept (or preferring JSON) the answer stays JSON; an unknown token is active false inside the JWT', async (t) => {
  const token = await clientCredentialsToken(env.d.url, env.app.admin.clientId, env.app.admin.secret);
  for (const accept of [undefined, 'application/json', '*/*', `${JWT_TYPE};q=0.1, application/json`]) {
    const r = await introspect(env.api, token, accept);
    t.regex(r.type, /^application\/json/, String(accept));
    t.is((JSON.parse(r.text) as { active: boolean }).active, true);
  }
  const unknown = await introspect(env.api, 'not-a-token', JWT_TYPE);
  t.is(unknown.type, JWT_TYPE);
  t.deepEqual((await verified(unknown.text, env.api)).token_introspection, { active: false });
});

test('introspection_signed_response_alg: a caller registered with it gets a JWT without asking; null returns to JSON', async (t) => {
  const path = `/api/admin/tenants/${env.app.tenantId}/clients`;
  const refused = await api(env.d.url, 'POST', path, {
    body: { name: 'Bad RS', grant_types: ['client_credentials'], introspection_signed_response_alg: 'none' },
    token: adminToken,
  });
  t.is(refused.status, 400);
  t.regex(JSON.stringify(refused.body), /introspection_signed_response_alg/);
  const created = await api(env.d.url, 'POST', path, {
    body: {
      name: 'Signed RS',
      grant_types: ['client_credentials'],
      scopes: ['api'],
      resource_identifiers: ['https://signed.example.test'],
      introspection_signed_response_alg: 'PS256',
    },
    token: adminToken,
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  t.is(created.body.introspection_signed_response_alg, 'PS256');
  const rs = { clientId: String(created.body.client_id), secret: String(created.body.client_secret) };
  const token = await clientCredentialsToken(env.d.url, env.app.admin.clientId, env.app.admin.secret);
  const signed = await introspect(rs, token);
  t.is(signed.type, JWT_TYPE);
  t.is(decodeProtectedHeader(signed.text).alg, 'PS256');
  t.is((await verified(signed.text, rs)).token_introspection.active, true);

  const cleared = await api(env.d.url, 'PATCH', `${path}/${rs.clientId}`, {
    body: { introspection_signed_response_alg: null },
    token: adminToken,
  });
  t.is(cleared.status, 200);
  // The caller's cached registration is checked against its stamp on every request.
  const plain = await introspect(rs, token);
  t.regex(plain.type, /^application\/json/);
});
