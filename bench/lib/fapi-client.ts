/**
 * The FAPI 2.0 client both login benches' FAPI flows share (bench/login-fapi.ts): one ES256 key
 * pair for private_key_jwt (its public half registered with the server as the client's `jwks`),
 * one DPoP key per virtual user, and the two JWTs a login signs: the client assertion (RFC 7523
 * §3, sent at the push and at the token request) and the DPoP proof of the token request
 * (RFC 9449 §4.2). Both servers get the same JWTs, made the same way, so the load generator's
 * signing costs the same on either side.
 */
import { createHash, randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { BenchHttpClient } from './http-client.js';

export interface FapiClientKey {
  privateKey: CryptoKey;
  /** The public key, as registered with the server (`jwks: { keys: [publicJwk] }`). */
  publicJwk: JWK;
}

export async function fapiClientKey(): Promise<FapiClientKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid: 'bench-fapi', alg: 'ES256', use: 'sig' } };
}

/** A client assertion for `clientId`, audience the issuer (FAPI 2.0 §5.3.2.1 item 8). */
export function clientAssertion(key: FapiClientKey, clientId: string, issuer: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: 'bench-fapi' })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(issuer)
    .setJti(randomBytes(12).toString('base64url'))
    .setIssuedAt(now)
    .setExpirationTime(now + 60)
    .sign(key.privateKey);
}

/** The form fields of private_key_jwt (RFC 7523 §2.2). */
export const assertionFields = (assertion: string) => ({
  client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
  client_assertion: assertion,
});

export interface DpopKey {
  privateKey: CryptoKey;
  jwk: JWK;
}

export async function dpopKey(): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, jwk: await exportJWK(publicKey) };
}

/** A DPoP proof for `htm` `htu` (RFC 9449 §4.2), no nonce: neither server is set to require one. */
export function dpopProof(key: DpopKey, htm: string, htu: string): Promise<string> {
  return new SignJWT({ jti: randomBytes(12).toString('base64url'), htm, htu, iat: Math.floor(Date.now() / 1000) })
    .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk })
    .sign(key.privateKey);
}

/** The PKCE pair of a login (RFC 7636 §4.1, §4.2: S256). */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * The push (RFC 9126 §2.1) with private_key_jwt: `params` are the authorization request's.
 * Returns the `request_uri`; throws unless the answer is 201 with one.
 */
export async function push(
  http: BenchHttpClient,
  path: string,
  assertion: string,
  params: Record<string, string>,
): Promise<string> {
  const res = await http.request(
    'POST',
    path,
    { 'content-type': 'application/x-www-form-urlencoded' },
    new URLSearchParams({ ...params, ...assertionFields(assertion) }).toString(),
  );
  if (res.status !== 201) throw new Error(`par ${res.status}`);
  const uri = (JSON.parse(res.body) as { request_uri?: string }).request_uri;
  if (!uri) throw new Error('par without request_uri');
  return uri;
}

/**
 * The code at the token endpoint with private_key_jwt and a DPoP proof (RFC 9449 §5). Throws
 * unless the answer is 200 with an ID token and a DPoP-bound access token (`token_type` DPoP).
 */
export async function redeemCodeWithDpop(
  http: BenchHttpClient,
  o: { path: string; assertion: string; proof: string; form: Record<string, string> },
): Promise<void> {
  const token = await http.request(
    'POST',
    o.path,
    { 'content-type': 'application/x-www-form-urlencoded', dpop: o.proof },
    new URLSearchParams({ grant_type: 'authorization_code', ...o.form, ...assertionFields(o.assertion) }).toString(),
  );
  if (token.status !== 200) throw new Error(`token ${token.status}`);
  const body = JSON.parse(token.body) as { id_token?: string; token_type?: string };
  if (!body.id_token || body.token_type?.toLowerCase() !== 'dpop') throw new Error('token not DPoP-bound');
}
