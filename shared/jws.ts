/**
 * Compact JWS signing (RFC 7515 §7.1) with node:crypto directly, for the hot path: the token
 * endpoint signs two JWTs per login. jose signs through WebCrypto, whose async job costs more
 * than the signature itself; OpenSSL's one-shot sign is synchronous and a few times cheaper.
 * Verification stays with jose.
 */
import { constants, sign, type KeyObject } from 'node:crypto';

/**
 * JWS algorithms (RFC 7518 §3.1, RFC 8037 §3.1) the service signs its tokens with, each with a
 * key of its own (shared/services/keys.ts): ES256 on P-256 (the default), RS256 and PS256 on
 * RSA 2048, EdDSA on Ed25519. `none` and the HMAC family are never offered: a client secret is
 * not a signing key (RFC 8725 §3.1, §3.5).
 */
export const SIGNING_ALGORITHMS = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const;
export type SigningAlg = (typeof SIGNING_ALGORITHMS)[number];

const b64u = (s: string | Buffer) => Buffer.from(s).toString('base64url');

/** The digest and signature encoding of each JWA algorithm (RFC 7518 §3.1, RFC 8037 §3.1) a signing key may have. */
function signer(alg: string): { digest: string | null; dsaEncoding?: 'ieee-p1363'; pss?: true } {
  switch (alg) {
    case 'ES256':
      return { digest: 'sha256', dsaEncoding: 'ieee-p1363' }; // RFC 7518 §3.4: R || S, not DER
    case 'ES384':
      return { digest: 'sha384', dsaEncoding: 'ieee-p1363' };
    case 'EdDSA':
    case 'Ed25519':
      return { digest: null };
    case 'RS256':
      return { digest: 'sha256' };
    case 'PS256':
      // RFC 7518 §3.5: RSASSA-PSS with SHA-256, MGF1 with SHA-256, a salt as long as the digest.
      return { digest: 'sha256', pss: true };
    default:
      throw new Error(`unsupported signing algorithm ${alg}`);
  }
}

export function signCompact(header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject): string {
  const alg = String(header.alg);
  const { digest, dsaEncoding, pss } = signer(alg);
  const input = `${b64u(JSON.stringify(header))}.${b64u(JSON.stringify(payload))}`;
  const sig = sign(
    digest,
    Buffer.from(input),
    dsaEncoding
      ? { key, dsaEncoding }
      : pss
        ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }
        : key,
  );
  return `${input}.${sig.toString('base64url')}`;
}
