/**
 * Why a client's signed JWT (a client assertion, RFC 7523; a request object, RFC 9101) was
 * refused, as one sentence for `error_description`: the jose verification errors named the same
 * way for each kind, only the JWT's name and its issuer rule differing.
 */
import { errors as joseErrors } from 'jose';

export function clientJwtRefusal(
  e: unknown,
  what: string,
  issuer: string,
  iss: { claims: readonly string[]; rule: string },
): string {
  if (e instanceof joseErrors.JWTExpired) return `The ${what} has expired.`;
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) return `The ${what} signature does not verify.`;
  if (e instanceof joseErrors.JWKSNoMatchingKey || e instanceof joseErrors.JWKSMultipleMatchingKeys)
    return `No single registered key of the client matches the ${what} (kid, alg).`;
  if (e instanceof joseErrors.JOSEAlgNotAllowed) return `The ${what} algorithm is not accepted.`;
  if (e instanceof joseErrors.JWTClaimValidationFailed) {
    if (e.claim === 'aud') return `The ${what}'s aud must be this server's issuer identifier, ${issuer}.`;
    if (iss.claims.includes(e.claim)) return iss.rule;
    if (e.claim === 'nbf') return `The ${what} is not yet valid (nbf).`;
    if (e.reason === 'missing') return `The ${what} lacks the ${e.claim} claim.`;
    return `The ${what} ${e.claim} claim is invalid.`;
  }
  return `The ${what} could not be verified.`;
}
