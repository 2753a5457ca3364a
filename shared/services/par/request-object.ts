/**
 * Signed request objects (RFC 9101, "JAR"), by value at /authorize (`request`) and inside a
 * pushed request (RFC 9126 §3). Verified with the client's registered keys (its inline `jwks`,
 * or its `jwks_uri` through the key cache client authentication already keeps), asymmetric
 * algorithms only, and the claims FAPI 2.0 Message Signing §5.3.1 names: `iss` the client,
 * `aud` this issuer, `exp` and `nbf` both present and at most 60 minutes apart, `jti` spent
 * once in the database every daemon shares. What it yields is the authorization request's
 * parameters, read as if they had been sent one by one (RFC 9101 §6.3: only these are used).
 */
import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { Client } from '../../db/entities.js';
import { OAuthError } from '../../errors.js';
import type { ClientAuthenticator } from '../client-auth.js';
import type { JtiStore } from '../token-exchange/id-jag.js';
import { InvalidRequestObject } from './errors.js';
import { clientJwtRefusal } from '../jose-refusals.js';

/** Accepted signature algorithms (`request_object_signing_alg_values_supported`): never `none` or HS*. */
export const REQUEST_OBJECT_ALGORITHMS = ['PS256', 'ES256', 'EdDSA', 'RS256'];
/** FAPI 2.0 Message Signing §5.3.1 items 3 and 4: `exp` − `nbf` at most 60 minutes. */
export const REQUEST_OBJECT_MAX_LIFETIME_S = 3600;
const SKEW_S = 30;
/** The JWT's own claims; the rest are authorization request parameters. */
const JWT_CLAIMS = new Set(['iss', 'aud', 'exp', 'nbf', 'iat', 'jti', 'sub']);

export class RequestObjectVerifier {
  constructor(
    private readonly o: {
      issuer: string;
      clientAuth: ClientAuthenticator;
      /** Spent request object `jti`s (their own key prefix in the shared replay table). */
      jtis: JtiStore;
    },
  ) {}

  /**
   * The parameters of `jwt`, a request object of `client`, as strings (a number claim such as
   * `max_age` as its decimal text; `resource` may stay a list). Throws InvalidRequestObject.
   */
  async verify(client: Client, jwt: string): Promise<Record<string, unknown>> {
    let header: { alg?: string; kid?: string };
    try {
      header = decodeProtectedHeader(jwt);
    } catch {
      throw new InvalidRequestObject('The request object is not a JWS (RFC 9101 §4).');
    }
    // RFC 9101 §10.2 item (a) and FAPI 2.0: unsigned (none) and symmetric (HS*) objects refused.
    if (!header.alg || !REQUEST_OBJECT_ALGORITHMS.includes(header.alg))
      throw new InvalidRequestObject(`The request object must be signed with ${REQUEST_OBJECT_ALGORITHMS.join(', ')}.`);
    let keys: Awaited<ReturnType<ClientAuthenticator['keysOf']>>;
    try {
      keys = await this.o.clientAuth.keysOf(client, typeof header.kid === 'string' ? header.kid : undefined);
    } catch (e) {
      if (e instanceof OAuthError) throw new InvalidRequestObject(`No key to verify the request object: ${e.message}`);
      throw e;
    }
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(jwt, keys, {
        issuer: client.client_id,
        audience: this.o.issuer,
        algorithms: REQUEST_OBJECT_ALGORITHMS,
        clockTolerance: SKEW_S,
        requiredClaims: ['iss', 'aud', 'exp', 'nbf', 'jti'],
      }));
    } catch (e) {
      throw verifyError(e, this.o.issuer);
    }
    const exp = claims.exp!;
    if (typeof claims.nbf !== 'number' || exp - claims.nbf > REQUEST_OBJECT_MAX_LIFETIME_S)
      throw new InvalidRequestObject('The request object exp and nbf may be at most 60 minutes apart.');
    if (claims.client_id !== undefined && claims.client_id !== client.client_id)
      throw new InvalidRequestObject('The request object client_id is not the client.');
    // RFC 9101 §4: a request object does not nest another one.
    if (claims.request !== undefined || claims.request_uri !== undefined)
      throw new InvalidRequestObject('A request object may not carry request or request_uri.');
    const jti = claims.jti;
    if (typeof jti !== 'string' || !jti || jti.length > 256)
      throw new InvalidRequestObject('The request object needs a jti of 1 to 256 characters.');
    const params: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(claims)) {
      if (JWT_CLAIMS.has(k)) continue;
      if (typeof v === 'string') params[k] = v;
      else if (typeof v === 'number' && Number.isFinite(v)) params[k] = String(v);
      else if (Array.isArray(v)) params[k] = v; // resource (RFC 8707) may repeat; elsewhere refused as repeated
      // Objects (the OIDC `claims` parameter, unsupported) are not read.
    }
    params.client_id = client.client_id;
    // Spent last, after every other check (RFC 9101 §10.8 replay; FAPI 2.0 Message Signing §5.3.1).
    const fresh = await this.o.jtis.consume({ iss: client.client_id, jti, exp, tenantId: client.tenant_id });
    if (!fresh) throw new InvalidRequestObject('The request object was already used (jti); sign a new one.');
    return params;
  }
}

function verifyError(e: unknown, issuer: string): InvalidRequestObject {
  const iss = { claims: ['iss'], rule: 'The request object iss must be the client_id.' };
  return new InvalidRequestObject(clientJwtRefusal(e, 'request object', issuer, iss));
}
