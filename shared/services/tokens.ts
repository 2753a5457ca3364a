/**
 * JWT access tokens per RFC 9068 (`typ: at+jwt`), ID tokens (OIDC Core §2) and signed UserInfo
 * responses (OIDC Core §5.3.2), signed with the active key of the algorithm the client
 * registered (ES256 when it registered none), and their verification for the service's own
 * bearer-protected APIs.
 */
import { createLocalJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import { signCompact } from '../jws.js';
import { randomToken } from '../crypto.js';
import { DEFAULT_ALG, SIGNING_ALGORITHMS, type KeyService, type SigningAlg } from './keys.js';

/**
 * The algorithms a token of ours may carry, each verified only with a key published for that
 * very algorithm: the key is chosen by `kid`, and a key whose JWK `alg` or type differs from the
 * header's `alg` is never tried (jose's local JWK Set; RFC 8725 §3.1). Nothing else (`none`,
 * HS256 with a public key as the secret) reaches a verifier.
 */
const ISSUED_ALGORITHMS: string[] = [...SIGNING_ALGORITHMS];

export interface AccessTokenClaims extends JWTPayload {
  client_id: string;
  scope: string;
  tenant_id: string;
  /** Token family: every token descending from one grant shares it, so one revocation kills all. */
  fid?: string;
  /** RFC 9449 §6.1: the DPoP key the token is bound to (docs/dpop.md). */
  cnf?: { jkt?: string };
}

export interface IssuedToken {
  token: string;
  jti: string;
  expiresIn: number;
  claims: AccessTokenClaims;
}

export class TokenService {
  private jwks: { at: number; set: ReturnType<typeof createLocalJWKSet>; kids: Set<string> } | undefined;
  static readonly JWKS_CACHE_MS = 30_000;

  constructor(
    private readonly issuer: string,
    private readonly keys: KeyService,
  ) {}

  /**
   * Loads the signing keys of these algorithms (null: the default) into the key cache, so that a
   * token signed inside a transaction (shared/services/grants/grant.ts) finds its key without a
   * second database connection (a MySQL pool whose connections all wait for a second one stalls).
   * Best effort: an algorithm without a key fails where a token is signed with it, as before.
   */
  async warm(...algs: (SigningAlg | null | undefined)[]): Promise<void> {
    for (const alg of new Set(algs.map((a) => a ?? DEFAULT_ALG)))
      await this.keys.signingKey(alg).catch(() => undefined);
  }

  async issueAccessToken(p: {
    sub: string;
    clientId: string;
    tenantId: string;
    scope: string[];
    audience: string[];
    ttlSeconds: number;
    familyId?: string;
    extra?: Record<string, unknown>;
    /** The client's `access_token_signed_response_alg`; the default when it has none. */
    alg?: SigningAlg | null;
    /**
     * Seconds since the epoch that `exp` may not pass (an exchanged token never outlives its
     * subject token, RFC 8693 §2.2.1). Applied here, on the same clock reading as `iat`, so a
     * second boundary between the caller's arithmetic and this one cannot add a second.
     */
    notAfter?: number;
    /** The DPoP proof key's thumbprint: the token is bound to it, `cnf.jkt` (RFC 9449 §6.1). */
    jkt?: string;
  }): Promise<IssuedToken> {
    const { keyObject, kid, alg } = await this.keys.signingKey(p.alg ?? DEFAULT_ALG);
    const jti = randomToken(16);
    const now = Math.floor(Date.now() / 1000);
    const exp = Math.min(now + p.ttlSeconds, p.notAfter ?? Number.POSITIVE_INFINITY);
    const claims: AccessTokenClaims = {
      ...(p.extra ?? {}),
      iss: this.issuer,
      sub: p.sub,
      aud: p.audience.length === 1 ? p.audience[0] : p.audience,
      iat: now,
      exp,
      jti,
      client_id: p.clientId,
      scope: p.scope.join(' '),
      tenant_id: p.tenantId,
      ...(p.familyId ? { fid: p.familyId } : {}),
      ...(p.jkt ? { cnf: { jkt: p.jkt } } : {}),
    };
    const token = signCompact({ alg, kid, typ: 'at+jwt' }, claims, keyObject);
    return { token, jti, expiresIn: exp - now, claims };
  }

  /** OIDC Core §2 ID token: `aud` is the client, `auth_time` in seconds, `nonce` echoed. */
  async issueIdToken(p: {
    sub: string;
    clientId: string;
    tenantId: string;
    nonce: string | null;
    authTimeMs: number;
    acr: string;
    amr: string[];
    sid?: string;
    ttlSeconds: number;
    claims?: Record<string, unknown>;
    /** The client's `id_token_signed_response_alg` (OIDC Registration §2); the default when it has none. */
    alg?: SigningAlg | null;
  }): Promise<string> {
    const { keyObject, kid, alg } = await this.keys.signingKey(p.alg ?? DEFAULT_ALG);
    const now = Math.floor(Date.now() / 1000);
    return signCompact(
      { alg, kid, typ: 'JWT' },
      {
        ...(p.claims ?? {}),
        iss: this.issuer,
        sub: p.sub,
        aud: p.clientId,
        azp: p.clientId,
        iat: now,
        exp: now + p.ttlSeconds,
        auth_time: Math.floor(p.authTimeMs / 1000),
        acr: p.acr,
        amr: p.amr,
        tenant_id: p.tenantId,
        ...(p.nonce ? { nonce: p.nonce } : {}),
        ...(p.sid ? { sid: p.sid } : {}),
      },
      keyObject,
    );
  }

  /**
   * A signed UserInfo response (OIDC Core §5.3.2): the claims plus `iss` and `aud` (the client),
   * signed with the client's `userinfo_signed_response_alg`, served as `application/jwt`.
   */
  async signUserinfo(p: { clientId: string; claims: Record<string, unknown>; alg: SigningAlg }): Promise<string> {
    const { keyObject, kid, alg } = await this.keys.signingKey(p.alg);
    const now = Math.floor(Date.now() / 1000);
    return signCompact(
      { alg, kid, typ: 'JWT' },
      { ...p.claims, iss: this.issuer, aud: p.clientId, iat: now },
      keyObject,
    );
  }

  /**
   * An ID-JAG (draft-ietf-oauth-identity-assertion-authz-grant §3): `typ: oauth-id-jag+jwt`,
   * signed with the service's active key of the default algorithm (the target verifies it with
   * the keys our metadata publishes). `claims` holds everything but `iss`, `iat`, `exp`, `jti`.
   */
  async signIdJag(claims: Record<string, unknown>, ttlSeconds: number): Promise<IssuedToken> {
    const { keyObject, kid, alg } = await this.keys.signingKey(DEFAULT_ALG);
    const jti = randomToken(16);
    const now = Math.floor(Date.now() / 1000);
    const payload = { ...claims, iss: this.issuer, iat: now, exp: now + ttlSeconds, jti };
    const token = signCompact({ alg, kid, typ: 'oauth-id-jag+jwt' }, payload, keyObject);
    return { token, jti, expiresIn: ttlSeconds, claims: payload as unknown as AccessTokenClaims };
  }

  /** The service's own public keys, for verifying an assertion it issued without the network. */
  ownKeySet(kid: string | undefined) {
    return this.keySet(kid);
  }

  /** Verifies an ID token this service issued (for id_token_hint), ignoring expiry (OIDC RP-Initiated Logout §2). */
  async verifyIdTokenHint(token: string): Promise<JWTPayload | undefined> {
    try {
      const set = await this.keySet(peekKid(token));
      const { payload } = await jwtVerify(token, set, {
        issuer: this.issuer,
        typ: 'JWT',
        currentDate: new Date(0),
        algorithms: ISSUED_ALGORITHMS,
      });
      return payload;
    } catch {
      return undefined;
    }
  }

  private async keySet(kid: string | undefined) {
    const fresh = this.jwks && Date.now() - this.jwks.at < TokenService.JWKS_CACHE_MS;
    // A kid we have not seen may come from a key rotated in by another daemon: reload once.
    if (!fresh || (kid && !this.jwks!.kids.has(kid))) {
      const set = await this.keys.publicJwks();
      this.jwks = { at: Date.now(), set: createLocalJWKSet(set), kids: new Set(set.keys.map((k) => String(k.kid))) };
    }
    return this.jwks!.set;
  }

  /** Verifies signature, `typ`, issuer and expiry (RFC 9068 §4). Throws on any failure. */
  async verifyAccessToken(token: string, audience?: string): Promise<AccessTokenClaims> {
    const kid = peekKid(token);
    const set = await this.keySet(kid);
    const { payload } = await jwtVerify(token, set, {
      issuer: this.issuer,
      typ: 'at+jwt',
      ...(audience ? { audience } : {}),
      algorithms: ISSUED_ALGORITHMS,
    });
    return payload as AccessTokenClaims;
  }

  /**
   * The client an access token was issued to, from a token whose signature, `typ` and issuer
   * verify, expired or not (jose checks `exp` after them, and its JWTExpired error carries the
   * verified payload); undefined for anything else. For the CORS answer of /userinfo
   * (docs/oauth.md, "CORS"), so a browser client can read the 401 that tells it to refresh an
   * expired token. Revocation is not checked: the endpoint does that before it answers data.
   */
  async accessTokenClientId(token: string): Promise<string | undefined> {
    let payload: JWTPayload;
    try {
      payload = await this.verifyAccessToken(token);
    } catch (e) {
      if (!(e instanceof errors.JWTExpired)) return undefined;
      payload = e.payload;
    }
    return typeof payload.client_id === 'string' ? payload.client_id : undefined;
  }
}

/**
 * True for a token that fails verification (jose's errors: signature, claims, format, unknown
 * key); false for anything else, such as the database failing while the signing keys load.
 */
export const isTokenInvalid = (e: unknown): boolean => e instanceof errors.JOSEError;

function peekKid(token: string): string | undefined {
  try {
    const h = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as { kid?: unknown };
    return typeof h.kid === 'string' ? h.kid : undefined;
  } catch {
    return undefined;
  }
}
