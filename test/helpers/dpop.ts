/**
 * DPoP proofs made by hand (RFC 9449 §4.2), for the tests of each refusal: every part of the
 * proof can be set wrong on purpose.
 */
import { createHash, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export interface ProofKey {
  privateKey: CryptoKey;
  jwk: JWK;
}

export async function proofKey(): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, jwk: await exportJWK(publicKey) };
}

export const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

/** A proof for `htm` `htu`; `over` replaces claims or header members (undefined removes one). */
export async function proof(
  key: ProofKey,
  htm: string,
  htu: string,
  over: { claims?: Record<string, unknown>; header?: Record<string, unknown>; signWith?: CryptoKey | Uint8Array } = {},
): Promise<string> {
  const claims: Record<string, unknown> = {
    jti: randomUUID(),
    htm,
    htu,
    iat: Math.floor(Date.now() / 1000),
    ...over.claims,
  };
  for (const k of Object.keys(claims)) if (claims[k] === undefined) delete claims[k];
  const header = { typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk, ...over.header } as { alg: string };
  return new SignJWT(claims).setProtectedHeader(header).sign(over.signWith ?? key.privateKey);
}
