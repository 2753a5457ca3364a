/**
 * What the FAPI 2.0 profiles refuse (docs/fapi.md), as pure functions of the profile that
 * applies to a client and what the request presents. Each throws the error the profile (or the
 * RFC it points to) names for the refusal; the service (index.ts) finds the profile.
 */
import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { Client, TokenEndpointAuthMethod } from '../../db/entities.js';
import { InvalidClient, InvalidRequest, OAuthError } from '../../errors.js';
import type { FapiProfile } from '../../schemas/fapi.js';
import type { AuthParams } from '../auth/oauth.js';
import { InvalidRequestObject } from '../par/errors.js';

/** FAPI 2.0 Security Profile §5.4.1 (cryptography): PS256, ES256, EdDSA (Ed25519) only. */
export const FAPI_ALGORITHMS: readonly string[] = ['PS256', 'ES256', 'EdDSA'];

const algOf = (jwt: string | undefined): string | undefined => {
  try {
    const alg = decodeProtectedHeader(jwt ?? '').alg;
    return typeof alg === 'string' ? alg : undefined;
  } catch {
    return undefined;
  }
};

/** The `aud` claim of a JWT already verified by the caller; undefined when it cannot be read. */
const audOf = (jwt: string | undefined): unknown => {
  try {
    return decodeJwt(jwt ?? '').aud;
  } catch {
    return undefined;
  }
};

/** The registration's choices of the algorithms this service signs with for the client. */
const SIGNED_RESPONSE_ALGS = [
  'id_token_signed_response_alg',
  'userinfo_signed_response_alg',
  'access_token_signed_response_alg',
  'authorization_signed_response_alg',
  'introspection_signed_response_alg',
] as const;

/**
 * §5.3.2.1 (client authentication): confidential clients only, with private_key_jwt (mTLS is
 * not built, docs/fapi.md), and an assertion signed with a §5.4.1 algorithm. §5.4.1 also binds
 * what this service signs for the client: a registration that chose RS256 for any of its
 * responses is refused here, where every flow starts (/par, /token, /revoke, /introspect), as
 * node-oidc-provider refuses such a client under the profile. The assertion's `aud` is the
 * issuer as a string, not an array holding it (§5.3.2.1 item 8). invalid_client (RFC 6749 §5.2),
 * 401, as every other failed client authentication.
 */
export function checkClientAuthentication(
  profile: FapiProfile,
  client: Client,
  method: TokenEndpointAuthMethod,
  assertion: string | undefined,
): void {
  if (profile === 'off') return;
  if (method !== 'private_key_jwt')
    throw new InvalidClient(`The FAPI 2.0 profile accepts only private_key_jwt client authentication, not ${method}.`);
  for (const field of SIGNED_RESPONSE_ALGS) {
    const chosen = client[field];
    if (chosen && !FAPI_ALGORITHMS.includes(chosen))
      throw new InvalidClient(
        `Under the FAPI 2.0 profile the client's ${field} must be one of ${FAPI_ALGORITHMS.join(', ')}, not ${chosen}.`,
      );
  }
  const alg = algOf(assertion);
  if (!alg || !FAPI_ALGORITHMS.includes(alg))
    throw new InvalidClient(
      `Under the FAPI 2.0 profile the client_assertion must be signed with ${FAPI_ALGORITHMS.join(', ')}.`,
    );
  // §5.3.2.1 item 8: the issuer identifier "as a string" in the assertion's aud. Outside the
  // profile an array holding it is accepted (docs/oauth.md); the assertion was verified, so a
  // string here is the issuer.
  if (typeof audOf(assertion) !== 'string')
    throw new InvalidClient(
      'Under the FAPI 2.0 profile the client_assertion aud must be the issuer identifier as a string, not an array.',
    );
}

/**
 * A pushed request's parameters, once /authorize's own validation accepted them:
 * §5.3.2.2 PKCE with S256 (even for a confidential client registered without PKCE); under
 * Message Signing a signed request object (JAR, §5.3.1 of the Message Signing profile) with a
 * §5.4.1 algorithm, and a JWT authorization response (JARM, §5.4.1 there).
 */
export function checkPushedRequest(profile: FapiProfile, request: string | undefined, p: AuthParams): void {
  if (profile === 'off') return;
  if (request !== undefined) {
    const alg = algOf(request);
    if (!alg || !FAPI_ALGORITHMS.includes(alg))
      throw new InvalidRequestObject(
        `Under the FAPI 2.0 profile the request object must be signed with ${FAPI_ALGORITHMS.join(', ')}.`,
      );
  }
  if (!p.code_challenge || p.code_challenge_method !== 'S256')
    throw new InvalidRequest('The FAPI 2.0 profile requires PKCE with code_challenge_method S256.');
  if (profile !== 'fapi2-message-signing') return;
  if (request === undefined)
    throw new InvalidRequest('The FAPI 2.0 Message Signing profile requires a signed request object (request).');
  if (p.response_mode !== 'query.jwt' && p.response_mode !== 'form_post.jwt')
    throw new InvalidRequest(
      'The FAPI 2.0 Message Signing profile requires a JWT authorization response ' +
        '(response_mode jwt, query.jwt or form_post.jwt).',
    );
}

/**
 * §5.3.2.1 (sender-constrained tokens): every token request carries a DPoP proof (mTLS is not
 * built), signed with a §5.4.1 algorithm. invalid_dpop_proof, the code RFC 9449 §5 and this
 * service's DPoP policy use for a missing or unacceptable proof (docs/dpop.md).
 */
export function checkTokenRequest(profile: FapiProfile, proof: string | string[] | undefined): void {
  if (profile === 'off') return;
  if (proof === undefined)
    throw new OAuthError(
      'invalid_dpop_proof',
      'The FAPI 2.0 profile requires sender-constrained tokens: send a DPoP proof (RFC 9449 §5).',
    );
  const alg = algOf(typeof proof === 'string' ? proof : undefined);
  if (alg && !FAPI_ALGORITHMS.includes(alg))
    throw new OAuthError(
      'invalid_dpop_proof',
      `Under the FAPI 2.0 profile the DPoP proof must be signed with ${FAPI_ALGORITHMS.join(', ')}.`,
    );
}
