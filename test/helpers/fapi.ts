/**
 * A FAPI 2.0 client's requests made by hand (docs/fapi.md): private_key_jwt client assertions
 * (RFC 7523), signed request objects (RFC 9101), pushed authorization parameters and the form
 * POST that carries them, each part overridable so a test can set one of them wrong on purpose.
 * Shared by test/oauth/fapi.test.ts and test/oauth/fapi-suite.test.ts.
 */
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import type { ClientCreds } from './login.js';
import { pkce, REDIRECT } from './oauth.js';

export type FapiAlg = 'ES256' | 'RS256';

/** The client's private keys: `es` (ES256, kid "es") and `rs` (RS256, kid "rs"). */
export interface FapiKeys {
  es: CryptoKey;
  rs: CryptoKey;
}

/** A fresh pair of keys and the public JWKS to register them with. */
export async function fapiKeys(): Promise<{ keys: FapiKeys; jwks: JWK[] }> {
  const ec = await generateKeyPair('ES256', { extractable: true });
  const rsa = await generateKeyPair('RS256', { extractable: true });
  return {
    keys: { es: ec.privateKey, rs: rsa.privateKey },
    jwks: [
      { ...(await exportJWK(ec.publicKey)), kid: 'es', alg: 'ES256', use: 'sig' },
      { ...(await exportJWK(rsa.publicKey)), kid: 'rs', use: 'sig' },
    ],
  };
}

export const now = () => Math.floor(Date.now() / 1000);
export const basic = (c: ClientCreds) => 'Basic ' + Buffer.from(`${c.clientId}:${c.secret}`).toString('base64');

export interface PostOptions {
  /** Authenticate with a client assertion of this client (unless `assertion` is given). */
  clientId?: string;
  alg?: FapiAlg;
  /** The client assertion to send as is. */
  assertion?: string;
  basic?: ClientCreds;
  dpop?: string;
}

/** `url` is the daemon's base URL (the issuer); `keys` the keys the client signs with. */
export function fapiKit(url: () => string, keys: () => FapiKeys) {
  const sign = (claims: Record<string, unknown>, alg: FapiAlg, typ?: string) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg, kid: alg === 'ES256' ? 'es' : 'rs', ...(typ ? { typ } : {}) })
      .sign(alg === 'ES256' ? keys().es : keys().rs);

  /** A private_key_jwt client assertion (RFC 7523) of `clientId`; `claims` replace its claims. */
  const assertion = (clientId: string, alg: FapiAlg = 'ES256', claims: Record<string, unknown> = {}) =>
    sign({ iss: clientId, sub: clientId, aud: url(), jti: randomUUID(), exp: now() + 60, ...claims }, alg);

  /** A signed request object (RFC 9101) of `clientId`. */
  const requestObject = (clientId: string, claims: Record<string, unknown>, alg: FapiAlg = 'ES256') =>
    sign(
      { iss: clientId, aud: url(), client_id: clientId, jti: randomUUID(), nbf: now(), exp: now() + 60, ...claims },
      alg,
      'oauth-authz-req+jwt',
    );

  const authParams = (clientId: string, extra: Record<string, string> = {}): Record<string, string> => ({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope: 'openid email',
    state: 'st',
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
    ...extra,
  });

  /**
   * POST `path` with a form (pairs may repeat a name); client authentication is an assertion of
   * `o.clientId` (or `o.assertion`) unless Basic credentials are given.
   */
  async function post(path: string, form: Record<string, string> | [string, string][], o: PostOptions = {}) {
    const body = new URLSearchParams(form);
    if (o.clientId) {
      body.set('client_id', o.clientId);
      body.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      body.set('client_assertion', o.assertion ?? (await assertion(o.clientId, o.alg)));
    }
    const res = await fetch(`${url()}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(o.basic ? { authorization: basic(o.basic) } : {}),
        ...(o.dpop ? { dpop: o.dpop } : {}),
      },
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  }

  return { assertion, requestObject, authParams, post };
}

/**
 * openid-client as a FAPI 2.0 relying party: discovery with private_key_jwt, a DPoP key, and a
 * signed request object (JAR) pushed to /par with PKCE S256 and a nonce. Returns the URL to
 * open and what the code redemption needs (the verifier and the checks).
 */
export async function pushedAuthorization(issuer: string, clientId: string, key: CryptoKey, kid: string) {
  const config = await oidc.discovery(
    new URL(issuer),
    clientId,
    { redirect_uris: [REDIRECT] },
    oidc.PrivateKeyJwt({ key, kid }),
    { execute: [oidc.allowInsecureRequests] },
  );
  const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
  const verifier = oidc.randomPKCECodeVerifier();
  const checks = { nonce: oidc.randomNonce(), state: oidc.randomState() };
  const jarred = await oidc.buildAuthorizationUrlWithJAR(
    config,
    {
      redirect_uri: REDIRECT,
      scope: 'openid email offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...checks,
    },
    { key, kid },
  );
  const authUrl = await oidc.buildAuthorizationUrlWithPAR(config, jarred.searchParams, { DPoP });
  return { config, DPoP, verifier, checks, authUrl };
}
