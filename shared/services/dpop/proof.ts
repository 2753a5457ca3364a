/**
 * DPoP proof verification (RFC 9449 §4.3), one function and no I/O: the caller brings what the
 * request was (method, URL, the access token presented) and what this service expects (the
 * nonce check), and gets back the proof key's thumbprint and what the replay store needs. The
 * replay check itself (§11.1) is the service's (service.ts), after every other check passed.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, errors as joseErrors, jwtVerify } from 'jose';

/**
 * The proof algorithms accepted: asymmetric only (§4.3 check 5: "not none or an identifier for a
 * symmetric algorithm"). What `dpop_signing_alg_values_supported` advertises (§5.1).
 */
export const DPOP_ALGORITHMS = [
  'ES256',
  'ES384',
  'ES512',
  'PS256',
  'PS384',
  'PS512',
  'RS256',
  'RS384',
  'RS512',
  'EdDSA',
  'Ed25519',
];

/**
 * How far a proof's `iat` may be from this server's clock, seconds (§4.3 check 11, §11.1: "a
 * relatively brief period"). 60 s each way: a client's clock a minute off still works, and a
 * replay store row lives at most two minutes past the proof's iat.
 */
export const DPOP_IAT_WINDOW_S = 60;

/** A `jti` longer than this is refused: it is stored hashed, but parsing it costs the request. */
const MAX_JTI_LENGTH = 256;

/** JWK members only a private or symmetric key has (RFC 7518 §6.2.2, §6.3.2, §6.4.1). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** A refused proof: `use_dpop_nonce` when only the nonce is wrong (§8), else `invalid_dpop_proof`. */
export class DpopProofError extends Error {
  constructor(
    readonly code: 'invalid_dpop_proof' | 'use_dpop_nonce',
    message: string,
  ) {
    super(message);
  }
}

export interface VerifiedProof {
  /** The JWK SHA-256 thumbprint of the proof key (RFC 7638): `cnf.jkt`. */
  jkt: string;
  jti: string;
  /** Seconds. */
  iat: number;
}

export interface ProofCheck {
  /** The `DPoP` header as received (undefined: none). */
  header: string | string[] | undefined;
  /** The request's method (§4.3 check 8). */
  htm: string;
  /** The request's URI as this server is known by (its issuer), without query or fragment. */
  htu: string;
  /** The access token presented with the proof (§4.3 check 12: `ath`); undefined at /token. */
  accessToken?: string;
  /** Whether a nonce the server issued must be in the proof (§8), and how to check one. */
  nonce?: { required: boolean; valid: (nonce: string) => boolean };
  now?: number;
}

/** `ath`: base64url of the SHA-256 of the access token's ASCII (§4.2). */
export function accessTokenHash(token: string): string {
  return createHash('sha256').update(token, 'ascii').digest('base64url');
}

/** A JWK SHA-256 thumbprint's shape (RFC 7638 with SHA-256: 43 base64url characters), as `dpop_jkt` (§10). */
export function isJkt(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}

/** Compares the `htu` claim with the request's URI, both without query and fragment (§4.3 check 9). */
function sameUri(claim: unknown, expected: string): boolean {
  if (typeof claim !== 'string') return false;
  let a: URL;
  try {
    a = new URL(claim);
  } catch {
    return false;
  }
  const b = new URL(expected);
  // URL parsing normalises scheme and host case and the default port (RFC 3986 §6.2.2, §6.2.3).
  return a.origin === b.origin && a.pathname === b.pathname;
}

const bad = (message: string) => new DpopProofError('invalid_dpop_proof', message);

/** Checks a DPoP proof (§4.3, checks 1 to 12 but replay); throws DpopProofError. */
export async function verifyProof(p: ProofCheck): Promise<VerifiedProof> {
  const now = p.now ?? Math.floor(Date.now() / 1000);
  // Check 1: exactly one DPoP header. Node joins repeated headers with ", ", which no JWT has.
  if (Array.isArray(p.header) || (p.header ?? '').includes(',')) throw bad('Exactly one DPoP header is allowed.');
  const proof = p.header;
  if (!proof) throw bad('A DPoP proof is required.');
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(proof)) throw bad('The DPoP proof is not a signed JWT.');
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(proof);
  } catch {
    throw bad('The DPoP proof header does not parse.');
  }
  // Checks 4 to 7: typ, an asymmetric algorithm, a public key in the header.
  if (header.typ !== 'dpop+jwt') throw bad('The DPoP proof typ must be dpop+jwt.');
  if (typeof header.alg !== 'string' || !DPOP_ALGORITHMS.includes(header.alg))
    throw bad(`The DPoP proof must be signed with an asymmetric algorithm (${DPOP_ALGORITHMS.join(', ')}).`);
  const jwk = header.jwk;
  if (!jwk || typeof jwk !== 'object' || Array.isArray(jwk)) throw bad('The DPoP proof header has no jwk.');
  if (PRIVATE_MEMBERS.some((m) => m in jwk)) throw bad('The DPoP proof jwk must be a public key.');
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: DPOP_ALGORITHMS }));
  } catch (e) {
    throw bad(
      e instanceof joseErrors.JWSSignatureVerificationFailed
        ? 'The DPoP proof signature does not verify.'
        : 'The DPoP proof does not verify with the key in its header.',
    );
  }
  // Check 3: the claims this specification requires.
  const { jti, htm, htu, iat } = payload;
  if (typeof jti !== 'string' || !jti || jti.length > MAX_JTI_LENGTH) throw bad('The DPoP proof needs a jti.');
  if (htm !== p.htm) throw bad(`The DPoP proof htm does not match the request's method (${p.htm}).`);
  if (!sameUri(htu, p.htu)) throw bad(`The DPoP proof htu does not match the request's URI (${p.htu}).`);
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw bad('The DPoP proof needs an iat.');
  // Check 12: the access token the proof is presented with (compared in constant time).
  if (p.accessToken !== undefined) {
    if (typeof payload.ath !== 'string') throw bad('The DPoP proof needs ath with an access token.');
    const expected = Buffer.from(accessTokenHash(p.accessToken));
    const given = Buffer.from(payload.ath);
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw bad('The DPoP proof ath does not match the access token.');
  }
  // Check 11 (and 10, §8): iat within the window; with server nonces, the nonce instead decides
  // freshness, but the iat bound stays so the replay store's rows stay short-lived.
  if (Math.abs(now - iat) > DPOP_IAT_WINDOW_S)
    throw bad(`The DPoP proof iat is more than ${DPOP_IAT_WINDOW_S} seconds from the server's time.`);
  if (p.nonce?.required) {
    const n = payload.nonce;
    if (typeof n !== 'string') throw new DpopProofError('use_dpop_nonce', 'Use the DPoP nonce the server provided.');
    if (!p.nonce.valid(n))
      throw new DpopProofError('use_dpop_nonce', 'The DPoP nonce is stale or unknown; use the new one.');
  }
  return { jkt: await calculateJwkThumbprint(jwk, 'sha256'), jti, iat };
}
