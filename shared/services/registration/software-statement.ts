/**
 * Software statements (RFC 7591 §2.3): a JWT about the client software, signed by an issuer the
 * tenant trusts (`softwareStatementIssuers`, each with an inline JWK Set). A statement from an
 * issuer the tenant does not list is `unapproved_software_statement`; one that does not verify
 * (signature, algorithm, expiry, shape) is `invalid_software_statement` (§3.2.2). Its claims
 * then override the request's own metadata (§2.3: "the values in the software statement MUST
 * take precedence").
 */
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import { OAuthError } from '../../errors.js';
import type { RegistrationPolicy } from './policy.js';

/** Asymmetric algorithms only: a symmetric "signature" would need a secret the tenant shares with a vendor. */
const STATEMENT_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA'];

/** JWT claims about the token itself, never client metadata. */
const JWT_CLAIMS = ['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti'];

export const invalidStatement = (d: string) => new OAuthError('invalid_software_statement', d);
export const unapprovedStatement = (d: string) => new OAuthError('unapproved_software_statement', d);

/** The statement's metadata claims once verified; throws the §3.2.2 error otherwise. */
export async function verifySoftwareStatement(
  jwt: string,
  policy: RegistrationPolicy,
): Promise<Record<string, unknown>> {
  let iss: unknown;
  try {
    iss = decodeJwt(jwt).iss;
  } catch {
    throw invalidStatement('The software statement is not a JWT (RFC 7591 §2.3).');
  }
  if (typeof iss !== 'string' || !iss) throw invalidStatement('The software statement has no iss (RFC 7591 §2.3).');
  const issuer = (policy.softwareStatementIssuers ?? []).find((i) => i.iss === iss);
  if (!issuer) throw unapprovedStatement(`The software statement's issuer ${JSON.stringify(iss)} is not trusted here.`);
  let payload: Record<string, unknown>;
  try {
    const keys = createLocalJWKSet(issuer.jwks);
    ({ payload } = await jwtVerify(jwt, keys, { issuer: iss, algorithms: STATEMENT_ALGORITHMS }));
  } catch {
    throw invalidStatement("The software statement's signature, algorithm or lifetime does not verify.");
  }
  return Object.fromEntries(Object.entries(payload).filter(([k]) => !JWT_CLAIMS.includes(k)));
}
