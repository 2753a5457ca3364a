/**
 * Signed responses of the FAPI 2.0 Message Signing profile (docs/jarm.md): JWT authorization
 * responses (JARM, "JWT Secured Authorization Response Mode for OAuth 2.0") and JWT
 * introspection responses (RFC 9701). Both are signed with the service's active key of the
 * algorithm the client registered (`authorization_signed_response_alg`,
 * `introspection_signed_response_alg`), ES256 when it registered none, and verified by the
 * client with the keys at /jwks. Encryption (`*_encrypted_response_alg`) is not offered.
 */
import { randomToken } from '../crypto.js';
import { signCompact } from '../jws.js';
import { DEFAULT_ALG, type KeyService, type SigningAlg } from './keys.js';

/**
 * Seconds a JWT authorization response is valid (`exp`). JARM §2.1 recommends at most 10
 * minutes; the response is read by the client at once, after a redirect or an auto-submitted
 * form, so two minutes leave room for a slow browser and clock skew and little for a replay.
 */
export const JARM_TTL_SECONDS = 120;

/** RFC 9701 §5: the media type, also the JWT's `typ` (its answer to cross-JWT confusion). */
export const INTROSPECTION_JWT_TYPE = 'token-introspection+jwt';
/**
 * The response modes an authorization request may name besides the default, `query`
 * (daemon/routes/oauth/response-mode.ts). Saved with the request, so the login's continuation
 * answers in the mode the client asked for.
 */
export type ResponseMode = 'form_post' | 'query.jwt' | 'form_post.jwt';

export const INTROSPECTION_JWT_MEDIA = `application/${INTROSPECTION_JWT_TYPE}`;

export class ResponseSigner {
  constructor(
    private readonly issuer: string,
    private readonly keys: KeyService,
  ) {}

  /**
   * JARM §2.1: the authorization response's parameters (code and state, or error,
   * error_description and state) as claims beside `iss`, `aud` (the client) and `exp`. `iss`
   * is also RFC 9207's issuer identification, inside the signature (RFC 9207 §2.4).
   */
  async authorizationResponse(p: {
    clientId: string;
    alg: SigningAlg | null | undefined;
    params: Record<string, string | undefined>;
  }): Promise<string> {
    const { keyObject, kid, alg } = await this.keys.signingKey(p.alg ?? DEFAULT_ALG);
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(p.params)) if (v !== undefined) claims[k] = v;
    return signCompact(
      { alg, kid, typ: 'JWT' },
      { ...claims, iss: this.issuer, aud: p.clientId, iat: now, exp: now + JARM_TTL_SECONDS },
      keyObject,
    );
  }

  /**
   * RFC 9701 §5: `iss`, `aud` (the caller), `iat` and `token_introspection`, the very JSON answer
   * the caller would otherwise get (`{"active": false}` included). A `jti` makes each answer
   * unique. No `exp` or `sub` at the top level: the answer is no access token (§5) and, with
   * its explicit `typ`, cannot pass for one.
   */
  async introspectionResponse(p: {
    callerId: string;
    alg: SigningAlg | null | undefined;
    json: string;
  }): Promise<string> {
    const { keyObject, kid, alg } = await this.keys.signingKey(p.alg ?? DEFAULT_ALG);
    return signCompact(
      { alg, kid, typ: INTROSPECTION_JWT_TYPE },
      {
        iss: this.issuer,
        aud: p.callerId,
        iat: Math.floor(Date.now() / 1000),
        jti: randomToken(16),
        token_introspection: JSON.parse(p.json) as unknown,
      },
      keyObject,
    );
  }
}
