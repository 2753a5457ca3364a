/**
 * Compact JWS signing (RFC 7515 §7.1) with node:crypto directly, for the hot path: the token
 * endpoint signs two JWTs per login. jose signs through WebCrypto, whose async job costs more
 * than the signature itself; OpenSSL's one-shot sign is synchronous and a few times cheaper.
 * Verification stays with jose.
 */
import { sign, type KeyObject } from 'node:crypto';

const b64u = (s: string | Buffer) => Buffer.from(s).toString('base64url');

/** The digest and signature encoding of each JWA algorithm (RFC 7518 §3.1, RFC 8037 §3.1) a signing key may have. */
function signer(alg: string): { digest: string | null; dsaEncoding?: 'ieee-p1363' } {
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
    default:
      throw new Error(`unsupported signing algorithm ${alg}`);
  }
}

export function signCompact(header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject): string {
  const alg = String(header.alg);
  const { digest, dsaEncoding } = signer(alg);
  const input = `${b64u(JSON.stringify(header))}.${b64u(JSON.stringify(payload))}`;
  const sig = sign(digest, Buffer.from(input), dsaEncoding ? { key, dsaEncoding } : key);
  return `${input}.${sig.toString('base64url')}`;
}
