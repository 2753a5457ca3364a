// A server-side web application that signs its users in with this identity provider:
// OpenID Connect authorization code flow with PKCE (RFC 7636), via openid-client v6.
//
//   ISSUER=http://localhost:8080 CLIENT_ID=… CLIENT_SECRET=… node examples/web-app/server.mjs
//
// Register it first (examples/web-app/README.md). Plain JavaScript, no build: copy it and go.
import { randomBytes } from 'node:crypto';
import Koa from 'koa';
import Router from '@koa/router';
import * as oidc from 'openid-client';

const env = (name, fallback) => {
  const v = process.env[name] ?? fallback;
  if (v === undefined || v === '') {
    console.error(`${name} is not set (see examples/web-app/README.md)`);
    process.exit(2);
  }
  return v;
};

const ISSUER = env('ISSUER', 'http://localhost:8080');
const CLIENT_ID = env('CLIENT_ID');
const CLIENT_SECRET = env('CLIENT_SECRET');
const PORT = Number(env('PORT', '3000'));
// The address users reach this app at; the redirect URIs below are registered from it.
const BASE_URL = env('BASE_URL', `http://localhost:${PORT}`);
const REDIRECT_URI = `${BASE_URL}/callback`;
const AFTER_LOGOUT_URI = `${BASE_URL}/`;
const SCOPE = env('SCOPE', 'openid profile email');

// Discovery (OIDC Discovery 1.0). openid-client refuses plain http unless told otherwise: allow
// it only for a development issuer on http://localhost, never in production.
const config = await oidc.discovery(
  new URL(ISSUER),
  CLIENT_ID,
  undefined,
  oidc.ClientSecretBasic(CLIENT_SECRET),
  new URL(ISSUER).protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined,
);

// Sessions live in this process's memory, keyed by a random id in an HttpOnly cookie. A real
// app would use a store shared by its instances; the cookie stays the same.
const sessions = new Map();
const COOKIE = 'webapp_session';
const secure = new URL(BASE_URL).protocol === 'https:';
const cookieOptions = { httpOnly: true, sameSite: 'lax', secure, path: '/', overwrite: true };

function session(ctx, create = false) {
  let id = ctx.cookies.get(COOKIE);
  if (id && sessions.has(id)) return sessions.get(id);
  if (!create) return undefined;
  id = randomBytes(32).toString('base64url');
  const s = {};
  sessions.set(id, s);
  ctx.cookies.set(COOKIE, id, cookieOptions);
  return s;
}

const escape = (s) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

const page = (body) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Example web app</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}
pre{background:#f4f4f4;padding:1rem;overflow:auto}</style></head>
<body><h1>Example web app</h1>${body}</body></html>`;

const router = new Router();

router.get('/', (ctx) => {
  const s = session(ctx);
  ctx.type = 'html';
  ctx.body = s?.user
    ? page(`<p>Signed in as <strong>${escape(s.user.claims.email ?? s.user.claims.sub)}</strong>.</p>
<p><a href="/me">Your claims</a> · <a href="/logout">Sign out</a></p>`)
    : page('<p>You are not signed in.</p><p><a href="/login">Sign in</a></p>');
});

// 1. Send the browser to the authorization endpoint, with PKCE (S256), state and nonce kept
//    in the session for the callback to check.
router.get('/login', async (ctx) => {
  const s = session(ctx, true);
  const verifier = oidc.randomPKCECodeVerifier();
  s.pending = { verifier, state: oidc.randomState(), nonce: oidc.randomNonce() };
  ctx.redirect(
    oidc
      .buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: SCOPE,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: s.pending.state,
        nonce: s.pending.nonce,
      })
      .toString(),
  );
});

// 2. The provider sends the browser back with a code: exchange it (checking state, iss, the
//    ID token and its nonce), then read the user's claims from the ID token and /userinfo.
router.get('/callback', async (ctx) => {
  const s = session(ctx);
  if (!s?.pending) {
    ctx.status = 400;
    ctx.type = 'html';
    ctx.body = page('<p>No sign-in in progress here (was the cookie lost?). <a href="/login">Try again</a>.</p>');
    return;
  }
  const { verifier, state, nonce } = s.pending;
  delete s.pending;
  const current = new URL(ctx.originalUrl, BASE_URL);
  let tokens;
  try {
    tokens = await oidc.authorizationCodeGrant(config, current, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
  } catch (e) {
    ctx.status = 400;
    ctx.type = 'html';
    ctx.body = page(`<p>Sign-in failed: ${escape(e.error_description ?? e.message)}</p><p><a href="/">Home</a></p>`);
    return;
  }
  const idClaims = tokens.claims();
  const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
  s.user = { claims: { ...idClaims, ...userinfo }, idToken: tokens.id_token };
  ctx.redirect('/me');
});

router.get('/me', (ctx) => {
  const s = session(ctx);
  if (!s?.user) return ctx.redirect('/login');
  ctx.type = 'html';
  ctx.body = page(`<p>Signed in. These are your claims (ID token and UserInfo):</p>
<pre id="claims">${escape(JSON.stringify(s.user.claims, null, 2))}</pre>
<p><a href="/logout">Sign out</a></p>`);
});

// 3. Sign out here, then at the provider (RP-Initiated Logout 1.0): with the ID token as hint it
//    ends the provider's session at once and sends the browser back to AFTER_LOGOUT_URI, which
//    must be one of the client's registered redirect URIs.
router.get('/logout', (ctx) => {
  const id = ctx.cookies.get(COOKIE);
  const idToken = id && sessions.get(id)?.user?.idToken;
  if (id) sessions.delete(id);
  ctx.cookies.set(COOKIE, '', { ...cookieOptions, maxAge: 0 });
  if (!idToken) return ctx.redirect('/');
  ctx.redirect(
    oidc.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: AFTER_LOGOUT_URI }).toString(),
  );
});

const app = new Koa();
app.use(router.routes()).use(router.allowedMethods());
app.listen(PORT, () => console.log(`Example web app on ${BASE_URL} (issuer ${ISSUER})`));
