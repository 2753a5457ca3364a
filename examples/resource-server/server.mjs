// An API (an OAuth 2.0 resource server) that accepts this identity provider's access tokens,
// checked two ways, one route each:
//
//   GET /jwks/hello        verifies the JWT locally against the provider's published keys
//                          (jose createRemoteJWKSet): signature, typ at+jwt, iss, aud, exp.
//   GET /introspect/hello  asks the provider (RFC 7662 introspection) with the API's own client
//                          credentials: also sees revocation, at the cost of a request.
//
//   ISSUER=http://localhost:8080 AUDIENCE=http://localhost:4000 CLIENT_ID=… CLIENT_SECRET=… \
//     node examples/resource-server/server.mjs
//
// Register it first (examples/resource-server/README.md). Plain JavaScript, no build.
import Koa from 'koa';
import Router from '@koa/router';
import { createRemoteJWKSet, jwtVerify } from 'jose';

const env = (name, fallback) => {
  const v = process.env[name] ?? fallback;
  if (v === undefined || v === '') {
    console.error(`${name} is not set (see examples/resource-server/README.md)`);
    process.exit(2);
  }
  return v;
};

const ISSUER = env('ISSUER', 'http://localhost:8080');
const PORT = Number(env('PORT', '4000'));
// The API's resource identifier: tokens must name it in `aud` (RFC 9068 §4).
const AUDIENCE = env('AUDIENCE', `http://localhost:${PORT}`);
const CLIENT_ID = env('CLIENT_ID');
const CLIENT_SECRET = env('CLIENT_SECRET');

// Discovery (RFC 8414 / OIDC Discovery): the endpoints and the issuer identifier to expect.
const discovery = await (await fetch(new URL('/.well-known/openid-configuration', ISSUER))).json();
if (discovery.issuer !== ISSUER) throw new Error(`discovery names issuer ${discovery.issuer}, expected ${ISSUER}`);
// Fetched on first use, cached, and fetched again when a token names an unknown key (rotation).
const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri));

/** The bearer token of the request (RFC 6750 §2.1), or undefined. */
const bearer = (ctx) => /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/.exec(ctx.get('authorization') ?? '')?.[1];

/** Refuses the request as RFC 6750 §3 says: 401 with a WWW-Authenticate challenge. */
function refuse(ctx, description) {
  ctx.status = 401;
  ctx.set('WWW-Authenticate', `Bearer error="invalid_token", error_description="${description}"`);
  ctx.body = { error: 'invalid_token', error_description: description };
}

const checkedByJwks = async (token) => {
  const { payload } = await jwtVerify(token, jwks, {
    issuer: ISSUER,
    audience: AUDIENCE,
    typ: 'at+jwt', // RFC 9068 §4: an ID token or another JWT is not an access token
    requiredClaims: ['exp', 'sub', 'client_id'],
  });
  return payload;
};

const checkedByIntrospection = async (token) => {
  const res = await fetch(discovery.introspection_endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      // RFC 6749 §2.3.1: client id and secret form-encoded, then Basic.
      authorization: `Basic ${Buffer.from(
        `${encodeURIComponent(CLIENT_ID)}:${encodeURIComponent(CLIENT_SECRET)}`,
      ).toString('base64')}`,
      accept: 'application/json',
    },
    body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
  });
  if (!res.ok) throw new Error(`introspection answered ${res.status}`);
  const info = await res.json();
  if (info.active !== true) throw new Error('token is not active');
  const aud = [].concat(info.aud ?? []);
  if (!aud.includes(AUDIENCE)) throw new Error('token is not for this API');
  return info;
};

const router = new Router();
for (const [method, check] of [
  ['jwks', checkedByJwks],
  ['introspect', checkedByIntrospection],
]) {
  router.get(`/${method}/hello`, async (ctx) => {
    const token = bearer(ctx);
    if (!token) return refuse(ctx, 'a bearer token is required');
    let claims;
    try {
      claims = await check(token);
    } catch (e) {
      return refuse(ctx, `the token was refused (${String(e.code ?? e.message).replace(/["\\]/g, '')})`);
    }
    ctx.body = { hello: claims.sub, client_id: claims.client_id, scope: claims.scope, checked_by: method };
  });
}

const app = new Koa();
app.use(router.routes()).use(router.allowedMethods());
app.listen(PORT, () => console.log(`Example API on port ${PORT} (issuer ${ISSUER}, audience ${AUDIENCE})`));
