// The single-page app: a public OAuth client (no secret; a browser cannot keep one), signing in
// with the authorization code flow and PKCE (RFC 9700 §2.1.1, the IETF draft "OAuth 2.0 for
// Browser-Based Applications"), then calling the provider's /userinfo cross-origin. The
// provider answers that call with CORS headers because this page's origin is among the
// client's allowed origins (iam clients create --allowed-origin).
import * as oauth from '/oauth4webapi.mjs';

const cfg = await (await fetch('/config.json')).json();
const issuer = new URL(cfg.issuer);
const client = { client_id: cfg.clientId };
const redirectUri = `${location.origin}/`;
// Plain http is for a development issuer on localhost only.
const opts = issuer.protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {};

const $ = (id) => document.getElementById(id);
const show = (id, on = true) => ($(id).hidden = !on);

// Discovery: the endpoints, and a check that the document is the issuer's own.
const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, opts));

async function signIn() {
  // PKCE verifier, state and nonce survive the round trip in sessionStorage (this tab only).
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  sessionStorage.setItem('login', JSON.stringify({ verifier, state, nonce }));
  const url = new URL(as.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirectUri,
    scope: cfg.scope,
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url);
}

async function finishSignIn(current) {
  const pending = JSON.parse(sessionStorage.getItem('login') ?? 'null');
  sessionStorage.removeItem('login');
  if (!pending) throw new Error('no sign-in in progress in this tab');
  // Checks state and iss (RFC 9207), and turns an error response into an exception.
  const params = oauth.validateAuthResponse(as, client, current, pending.state);
  const res = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    params,
    redirectUri,
    pending.verifier,
    opts,
  );
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, res, {
    expectedNonce: pending.nonce,
    requireIdToken: true,
  });
  // The code and state leave the address bar (and the history) at once.
  history.replaceState(null, '', '/');
  return tokens;
}

async function main() {
  const current = new URL(location.href);
  if (!current.searchParams.has('code') && !current.searchParams.has('error')) {
    $('status').textContent = 'You are not signed in.';
    show('signin');
    return;
  }
  const tokens = await finishSignIn(current);
  const { sub } = oauth.getValidatedIdTokenClaims(tokens);
  // The access token stays in this page's memory, never in storage.
  const res = await oauth.userInfoRequest(as, client, tokens.access_token, opts);
  const userinfo = await oauth.processUserInfoResponse(as, client, sub, res);
  $('status').textContent = `Signed in as ${userinfo.email ?? sub}.`;
  $('userinfo').textContent = JSON.stringify(userinfo, null, 2);
  show('userinfo-title');
  show('userinfo');
  show('signout');
}

$('signin').addEventListener('click', () => void signIn());
// Forgetting the tokens signs out of this page; the provider's session is left as it is.
$('signout').addEventListener('click', () => location.assign('/'));

main().catch((e) => {
  $('status').textContent = `Sign-in failed: ${e.error_description ?? e.message}`;
  show('signin');
});
