/**
 * Identity Assertion JWT Authorization Grants (ID-JAG, draft-ietf-oauth-identity-assertion-authz-grant)
 * presented as RFC 8693 subject tokens: discovery of each trusted issuer's metadata and key set
 * at runtime (cached, with a cooldown on refetches an unknown `kid` can trigger), signature
 * and claim verification, and single-use `jti` bookkeeping.
 *
 * Every outbound request goes through shared/net/outbound.ts, and only for issuers the
 * tenant trusts: the issuer is checked against the allow-list before anything is fetched, so
 * a token cannot make the service call an address of the attacker's choosing.
 */
import { createHash } from 'node:crypto';
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors as joseErrors,
  jwtVerify,
  type JWK,
  type JWTPayload,
} from 'jose';
import type { Database, Db } from '../../db/index.js';
import { TenantScope } from '../../repositories/index.js';
import { fetchJson, OutboundError, type OutboundPolicy } from '../../net/outbound.js';

/** The `typ` header of an ID-JAG (draft §3.1; media type application/oauth-id-jag+jwt). */
export const ID_JAG_TYP = 'oauth-id-jag+jwt';
/** Asymmetric algorithms only: an issuer's public key set can never verify an HMAC. */
export const ID_JAG_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];
/** Clock skew tolerated on `exp`, `nbf` and `iat`, seconds. */
export const CLOCK_SKEW_S = 30;
/** How long discovered metadata and keys are trusted before they are fetched again. */
export const KEYS_TTL_MS = 10 * 60_000;
const MAX_KEYS = 100;

export type IdJagFailure =
  | 'malformed'
  | 'wrong_typ'
  | 'alg_not_allowed'
  | 'issuer_not_allowed'
  | 'issuer_unavailable'
  | 'unknown_kid'
  | 'bad_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'iat_in_future'
  | 'wrong_audience'
  | 'wrong_issuer'
  | 'client_mismatch'
  | 'missing_claim'
  | 'replayed';

/** A refused ID-JAG. The message is for the client's error_description and names the check. */
export class IdJagError extends Error {
  constructor(
    readonly failure: IdJagFailure,
    message: string,
  ) {
    super(message);
    this.name = 'IdJagError';
  }
}

export interface IdJagClaims extends JWTPayload {
  iss: string;
  sub: string;
  jti: string;
  exp: number;
  iat: number;
  client_id: string;
  scope?: string;
  resource?: string | string[];
}

interface CacheEntry {
  /** Last fetch attempt, successful or not: the cooldown counts from it. */
  attemptedAt: number;
  keys?: { set: ReturnType<typeof createLocalJWKSet>; kids: Set<string>; fetchedAt: number };
  /** Why the last attempt failed: a short category for clients; the detail goes to the log. */
  error?: string;
}

/**
 * Per-daemon cache of trusted issuers' key sets. A hit costs nothing; a miss (first use, TTL
 * passed, or a `kid` the cached set lacks) fetches metadata then keys, at most once per
 * cooldown per issuer, with concurrent misses sharing one fetch.
 *
 * With `direct`, the key is not an issuer but a JWK Set URL fetched as is (a private_key_jwt
 * client's `jwks_uri`, shared/services/client-auth.ts): the same cache, cooldown and SSRF
 * policy, without the metadata discovery.
 */
export class IssuerKeys {
  private readonly entries = new Map<string, CacheEntry>();
  private readonly inflight = new Map<string, Promise<CacheEntry>>();

  constructor(
    private readonly opts: {
      policy: OutboundPolicy;
      cooldownMs: number;
      ttlMs?: number;
      /** Keys are JWK Set URLs, fetched without discovery. */
      direct?: boolean;
      /** Told once per failed fetch (not per request), with the detail an operator needs. */
      onFetchError?: (issuer: string, detail: string) => void;
    },
  ) {}

  private get ttl() {
    return this.opts.ttlMs ?? KEYS_TTL_MS;
  }

  async keySetFor(issuer: string, kid: string | undefined): Promise<ReturnType<typeof createLocalJWKSet>> {
    const now = Date.now();
    const e = this.entries.get(issuer);
    const fresh = !!e?.keys && now - e.keys.fetchedAt < this.ttl;
    if (fresh && (kid === undefined || e.keys!.kids.has(kid))) return e.keys!.set;
    if (e && now - e.attemptedAt < this.opts.cooldownMs) {
      // Fetched moments ago: an unknown kid now is not a rotation we missed, and a failing
      // issuer is not retried in a tight loop. (A set that merely went stale is refetched.)
      if (fresh) throw new IdJagError('unknown_kid', `No key with kid "${kid}" in the key set of ${issuer}.`);
      if (e.error)
        throw new IdJagError(
          'issuer_unavailable',
          `The keys of ${issuer} are unavailable (${e.error}); try again later.`,
        );
    }
    const next = await this.refresh(issuer);
    if (!next.keys)
      throw new IdJagError('issuer_unavailable', `The keys of ${issuer} are unavailable (${next.error}).`);
    if (kid !== undefined && !next.keys.kids.has(kid))
      throw new IdJagError('unknown_kid', `No key with kid "${kid}" in the key set of ${issuer}.`);
    return next.keys.set;
  }

  private refresh(issuer: string): Promise<CacheEntry> {
    let p = this.inflight.get(issuer);
    if (!p) {
      p = this.load(issuer).finally(() => this.inflight.delete(issuer));
      this.inflight.set(issuer, p);
    }
    return p;
  }

  private async load(issuer: string): Promise<CacheEntry> {
    const previous = this.entries.get(issuer);
    const entry: CacheEntry = { attemptedAt: Date.now() };
    try {
      const jwksUri = this.opts.direct ? issuer : (await this.discover(issuer)).jwks_uri;
      if (typeof jwksUri !== 'string') throw new Error('its metadata has no jwks_uri');
      const jwks = await fetchJson(jwksUri, this.opts.policy);
      if (!Array.isArray(jwks.keys)) throw new Error('its jwks_uri did not return a JWK Set');
      // Public keys only, bounded: a key set is not a place for private members or thousands of keys.
      const keys = (jwks.keys as JWK[]).filter(
        (k) =>
          k &&
          typeof k === 'object' &&
          typeof k.kty === 'string' &&
          k.d === undefined &&
          (k.use === undefined || k.use === 'sig'),
      );
      if (keys.length > MAX_KEYS) throw new Error(`its key set holds more than ${MAX_KEYS} keys`);
      entry.keys = {
        set: createLocalJWKSet({ keys }),
        kids: new Set(keys.map((k) => k.kid).filter((k): k is string => typeof k === 'string')),
        fetchedAt: Date.now(),
      };
    } catch (e) {
      // The client learns the category only; addresses and resolver answers stay in the log.
      entry.error = e instanceof OutboundError ? e.reason : 'metadata';
      this.opts.onFetchError?.(issuer, e instanceof OutboundError ? `${e.reason}: ${e.message}` : (e as Error).message);
      // A failed refresh of a still-fresh set keeps the set: one bad answer is not a revocation.
      if (previous?.keys && Date.now() - previous.keys.fetchedAt < this.ttl) entry.keys = previous.keys;
    }
    this.entries.set(issuer, entry);
    return entry;
  }

  /**
   * OpenID Connect Discovery §4 (`<issuer>/.well-known/openid-configuration`), then RFC 8414 §3
   * (`/.well-known/oauth-authorization-server` inserted before the issuer's path). The
   * document's `issuer` must equal the configured identifier exactly (RFC 8414 §3.3).
   */
  private async discover(issuer: string): Promise<Record<string, unknown>> {
    const u = new URL(issuer);
    const path = u.pathname.replace(/\/$/, '');
    const candidates = [
      `${u.origin}${path}/.well-known/openid-configuration`,
      `${u.origin}/.well-known/oauth-authorization-server${path}`,
    ];
    let last: Error | undefined;
    for (const url of candidates) {
      try {
        const doc = await fetchJson(url, this.opts.policy);
        if (doc.issuer !== issuer) throw new Error(`its metadata names issuer ${JSON.stringify(doc.issuer)}`);
        return doc;
      } catch (e) {
        last = e as Error;
        // Only "not there" moves on to the other well-known location; a refused address,
        // timeout or bad document would fail the same way twice.
        if (!(e instanceof OutboundError && e.reason === 'status')) break;
      }
    }
    throw last!;
  }
}

const typOf = (h: { typ?: string }) =>
  String(h.typ ?? '')
    .toLowerCase()
    .replace(/^application\//, '');

/**
 * Verifies an ID-JAG for the authenticated client `clientId` at this authorization server
 * (`audience`, our issuer identifier). Checks, in order: structure and `typ`, algorithm,
 * issuer allow-list, key (`kid`), signature, `iss`, `aud`, `exp`/`nbf`, `iat`, `client_id`,
 * `jti`. Replay is the caller's last step ({@link JtiStore}), after every other check.
 */
export async function verifyIdJag(
  token: string,
  p: {
    keys: IssuerKeys;
    allowedIssuers: string[];
    audience: string;
    clientId: string;
    /**
     * This service's own issuer and key set: an ID-JAG one tenant issued for another tenant of
     * this service is verified locally, never fetched (docs/token-exchange.md, "Own-issuer ID-JAGs").
     */
    own?: { issuer: string; keySet: (kid: string | undefined) => Promise<ReturnType<typeof createLocalJWKSet>> };
  },
): Promise<IdJagClaims> {
  let header: { typ?: string; alg?: string; kid?: string };
  let unverified: JWTPayload;
  try {
    header = decodeProtectedHeader(token);
    unverified = decodeJwt(token);
  } catch {
    throw new IdJagError('malformed', 'The subject_token is not a JWT.');
  }
  if (typOf(header) !== ID_JAG_TYP) throw new IdJagError('wrong_typ', `The subject_token's typ must be ${ID_JAG_TYP}.`);
  if (!header.alg || !ID_JAG_ALGORITHMS.includes(header.alg))
    throw new IdJagError('alg_not_allowed', `The subject_token's alg ${header.alg ?? '(none)'} is not accepted.`);
  const iss = unverified.iss;
  // Before any network access: only an allow-listed issuer is ever contacted.
  if (typeof iss !== 'string' || !p.allowedIssuers.includes(iss)) {
    throw new IdJagError(
      'issuer_not_allowed',
      `The issuer ${typeof iss === 'string' ? iss : '(missing)'} is not trusted by this tenant.`,
    );
  }
  const kid = typeof header.kid === 'string' ? header.kid : undefined;
  const keySet = p.own && iss === p.own.issuer ? await p.own.keySet(kid) : await p.keys.keySetFor(iss, kid);
  let claims: JWTPayload;
  try {
    ({ payload: claims } = await jwtVerify(token, keySet, {
      issuer: iss,
      audience: p.audience,
      typ: ID_JAG_TYP,
      algorithms: ID_JAG_ALGORITHMS,
      clockTolerance: CLOCK_SKEW_S,
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat', 'jti'],
    }));
  } catch (e) {
    throw mapJoseError(e);
  }
  const now = Math.floor(Date.now() / 1000);
  if (typeof claims.iat !== 'number' || claims.iat > now + CLOCK_SKEW_S)
    throw new IdJagError('iat_in_future', 'The subject_token was issued in the future (iat).');
  if (typeof claims.client_id !== 'string')
    throw new IdJagError('missing_claim', 'The subject_token has no client_id claim.');
  // draft §4.3: the ID-JAG was issued for one client; another client may not redeem it.
  if (claims.client_id !== p.clientId)
    throw new IdJagError('client_mismatch', 'The subject_token was issued for another client (client_id).');
  if (typeof claims.sub !== 'string' || !claims.sub)
    throw new IdJagError('missing_claim', 'The subject_token has no sub claim.');
  if (typeof claims.jti !== 'string' || !claims.jti || claims.jti.length > 256)
    throw new IdJagError('missing_claim', 'The subject_token needs a jti claim of 1 to 256 characters.');
  return claims as IdJagClaims;
}

function mapJoseError(e: unknown): IdJagError {
  if (e instanceof IdJagError) return e;
  if (e instanceof joseErrors.JWTExpired) return new IdJagError('expired', 'The subject_token has expired.');
  if (e instanceof joseErrors.JWSSignatureVerificationFailed)
    return new IdJagError('bad_signature', 'The subject_token signature does not verify.');
  if (e instanceof joseErrors.JWKSNoMatchingKey)
    return new IdJagError('unknown_kid', 'No key of the issuer matches the subject_token.');
  if (e instanceof joseErrors.JOSEAlgNotAllowed)
    return new IdJagError('alg_not_allowed', 'The subject_token algorithm is not accepted.');
  if (e instanceof joseErrors.JWTClaimValidationFailed) {
    if (e.claim === 'aud')
      return new IdJagError('wrong_audience', 'The subject_token is not addressed to this authorization server (aud).');
    if (e.claim === 'iss') return new IdJagError('wrong_issuer', 'The subject_token issuer does not match (iss).');
    if (e.claim === 'nbf') return new IdJagError('not_yet_valid', 'The subject_token is not yet valid (nbf).');
    if (e.claim === 'typ') return new IdJagError('wrong_typ', `The subject_token's typ must be ${ID_JAG_TYP}.`);
    if (e.reason === 'missing') return new IdJagError('missing_claim', `The subject_token lacks the ${e.claim} claim.`);
    return new IdJagError('malformed', `The subject_token ${e.claim} claim is invalid.`);
  }
  return new IdJagError('malformed', 'The subject_token could not be verified.');
}

/**
 * Single-use `jti` bookkeeping, shared by every daemon through the database. A used assertion
 * is a spent credential, so it is recorded in `revoked_access_tokens` (no migration needed)
 * under a key that cannot collide with an access token's jti: `jag_` + SHA-256(iss, jti),
 * kept until the assertion expires (plus the clock skew it could still be accepted within).
 * Client assertions (private_key_jwt) use their own store, made with the prefix `cla_`, so an
 * ID-JAG and a client assertion never share a key.
 */
export class JtiStore {
  constructor(
    private readonly db: Database,
    private readonly prefix = 'jag_',
  ) {}

  static key(iss: string, jti: string, prefix = 'jag_'): string {
    return prefix + createHash('sha256').update(iss).update('\0').update(jti).digest('base64url');
  }

  /**
   * Records the jti; false when it was already recorded (a replay). One winner under races.
   * `db`: the caller's transaction, when the jti is spent with what it buys.
   */
  consume(p: { iss: string; jti: string; exp: number; tenantId: string }, db: Db = this.db): Promise<boolean> {
    return new TenantScope(db, p.tenantId).tokens.recordSpentJti(
      JtiStore.key(p.iss, p.jti, this.prefix),
      (p.exp + CLOCK_SKEW_S) * 1000,
      Date.now(),
    );
  }
}
