import { createHash, timingSafeEqual } from 'node:crypto';

/** RFC 7636 §4.1: 43 to 128 characters of [A-Z a-z 0-9 - . _ ~]. Same alphabet for challenges. */
export const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

/** RFC 7636 §4.6: BASE64URL(SHA256(code_verifier)) compared with the stored challenge, in constant time. */
export function verifyS256(verifier: string, challenge: string): boolean {
  if (!PKCE_VALUE.test(verifier)) return false;
  const a = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const b = Buffer.from(challenge);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Secrets handed to clients (codes, cookies, refresh tokens) are stored as SHA-256: they are
 * 256-bit random values, so a fast unkeyed hash is enough to make a database leak useless. */
export function tokenHash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url');
}
