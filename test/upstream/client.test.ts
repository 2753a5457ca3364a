/**
 * The upstream client factory against a real node-oidc-provider (test/helpers/upstream-op.ts):
 * discovery and JWKS through the SSRF-safe fetcher, an authorization code grant with PKCE,
 * state and nonce checked by openid-client, then a refresh through the same configuration.
 */
import test from 'ava';
import * as oidc from 'openid-client';
import { DEFAULT_OUTBOUND_POLICY } from '../../shared/net/outbound.js';
import { UpstreamClients, UpstreamDiscoveryError } from '../../shared/services/upstream-idp/index.js';
import { startUpstreamOp, type UpstreamOp } from '../helpers/upstream-op.js';

const REDIRECT = 'https://broker.example.test/login/upstream/callback';
let op: UpstreamOp;

test.before(async () => {
  op = await startUpstreamOp({ redirectUri: REDIRECT, accessTokenTtl: 120 });
});
test.after.always(async () => {
  await op?.close();
});

const clients = (allowLoopback = true) =>
  new UpstreamClients({ policy: { ...DEFAULT_OUTBOUND_POLICY, allowLoopback, extraCaPem: op.cert.cert } });

test('discovery of a real provider, a code grant with PKCE + state + nonce, and a refresh', async (t) => {
  const c = clients();
  const m = await c.discover(op.issuer);
  t.is(m.issuer, op.issuer);
  const config = await c.configuration({
    id: 'uip_1',
    issuer: op.issuer,
    client_id: op.clientId,
    client_secret: op.clientSecret,
    updated_at: 1,
  });
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid email offline_access',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    prompt: 'consent',
  });
  const back = await op.follow(url.toString());
  t.is(`${back.origin}${back.pathname}`, REDIRECT);
  const tokens = await oidc.authorizationCodeGrant(config, back, {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
    idTokenExpected: true,
  });
  const claims = tokens.claims()!;
  t.is(claims.sub, 'alice');
  t.is(claims.iss, op.issuer);
  t.truthy(tokens.refresh_token);
  t.true(tokens.expiresIn()! <= 120);
  const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
  t.truthy(refreshed.access_token);
  t.not(refreshed.access_token, tokens.access_token);
  t.deepEqual(op.tokenGrants, ['authorization_code', 'refresh_token']);
  // A revoked refresh token is a genuine invalid_grant from the provider.
  op.revokeRefreshTokens();
  const err = await t.throwsAsync(() => oidc.refreshTokenGrant(config, refreshed.refresh_token!));
  t.is((err as { error?: string }).error, 'invalid_grant');
});

test('discovery refuses loopback without the outbound loopback switch, and a wrong issuer', async (t) => {
  const e1 = await t.throwsAsync(() => clients(false).discover(op.issuer));
  t.true(e1 instanceof UpstreamDiscoveryError);
  t.regex(e1.message, /127\.0\.0\.1.*loopback|loopback/);
  const e2 = await t.throwsAsync(() => clients().discover(`${op.issuer}/other`));
  t.true(e2 instanceof UpstreamDiscoveryError);
});
