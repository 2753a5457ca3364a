/**
 * Token introspection (RFC 7662) with a response cache that never outlives a revocation.
 *
 * The cache holds only `active: true` results, for at most 60 s and never past the token's
 * `exp`, bounded in entries (least recently used goes first). It saves the signature check
 * and claim decoding; it does NOT save the revocation check, which runs on every request,
 * cache hits included, as one prepared statement against the shared database (the token
 * tenant's scope, shared/repositories/tokens.ts). So a revocation written by any daemon is
 * seen by every daemon on its next introspection: there is no cross-node cache of
 * revocations to wait for.
 */
import { createHash } from 'node:crypto';
import type { Database } from '../db/index.js';
import { TenantScope } from '../repositories/index.js';
import type { AccessTokenClaims, TokenService } from './tokens.js';
import type { IntrospectionObserver } from '../metrics.js';
import { isDocumentClientId } from './client-metadata/document.js';

export const CACHE_TTL_MS = 60_000;

/** The prefix of every local user's id (`newId('usr')`). */
const USER_ID_PREFIX = 'usr_';

/**
 * What the tokens of one client share: the claims that repeat from token to token (issuer,
 * client, tenant, scope, audience and any other claim but the per-token five), kept once and
 * already serialised. Cache entries point at one of these instead of each holding a copy.
 */
export class TokenProfile {
  constructor(
    readonly tenantId: string,
    readonly clientId: string,
    readonly aud: readonly string[],
    /** `"iss":…,"aud":…,…,"token_type":"Bearer","tenant":…`: the tail of the active response. */
    readonly tail: string,
    /** The agent grant the token was issued under (`agent_grant_id`), '' for none (docs/agents.md). */
    readonly agentGrantId = '',
    /** The grant's generation the token was issued under (`agent_grant_gen`); -1 for none. */
    readonly agentGrantGen = -1,
  ) {}
}

/**
 * A verified token, kept small because the cache may hold a million of them (bench/results/
 * introspect-sqlite-million.md: about 1.1 KB an entry when each held its claims and its
 * serialised response; the goal is 300 bytes). Only the five claims that differ from token
 * to token are held here, the times as whole seconds (small integers V8 stores in the object
 * itself, not as boxed numbers); the rest is the shared TokenProfile. The active response is
 * built on the way out (`json()`), which costs a few string concatenations per cache hit.
 */
export class CachedToken {
  constructor(
    readonly jti: string,
    /** '' when the token has no subject. */
    readonly sub: string,
    /** The token family; '' for a token without one (client_credentials). */
    readonly fid: string,
    /** Seconds; -1 when the token has no iat. */
    readonly iat: number,
    /** Seconds; -1 when exp is not a whole number (it is then in the profile, and never cached). */
    readonly exp: number,
    /** Seconds: the entry is dropped at min(insert + 60 s, exp). */
    readonly until: number,
    readonly profile: TokenProfile,
  ) {}
  get tenantId(): string {
    return this.profile.tenantId;
  }
  get clientId(): string {
    return this.profile.clientId;
  }
  get aud(): readonly string[] {
    return this.profile.aud;
  }
  get agentGrantId(): string {
    return this.profile.agentGrantId;
  }
  get agentGrantGen(): number {
    return this.profile.agentGrantGen;
  }
  /** The active response body (RFC 7662 §2.2): the token's claims, `active`, `token_type` and `tenant`. */
  json(): string {
    let s = '{"active":true';
    if (this.sub !== '') s += ',"sub":' + JSON.stringify(this.sub);
    if (this.jti !== '') s += ',"jti":' + JSON.stringify(this.jti);
    if (this.fid !== '') s += ',"fid":' + JSON.stringify(this.fid);
    if (this.iat >= 0) s += ',"iat":' + this.iat;
    if (this.exp >= 0) s += ',"exp":' + this.exp;
    return s + ',' + this.profile.tail + '}';
  }
}

/**
 * Interning of what repeats across entries. Each table is bounded: past its limit it starts
 * afresh (entries keep what they point at; only the sharing of new entries with old ones is
 * lost), so a stream of distinct values cannot grow it without end.
 */
const INTERN_MAX = 50_000;
class Interner<V> {
  private map = new Map<string, V>();
  get(key: string, make: () => V): V {
    let v = this.map.get(key);
    if (v === undefined) {
      if (this.map.size >= INTERN_MAX) this.map = new Map();
      v = make();
      this.map.set(key, v);
    }
    return v;
  }
}

/** The claims held per entry; every other claim belongs to the profile. */
const PER_TOKEN = new Set(['sub', 'jti', 'fid', 'iat', 'exp']);

export class CachedTokenFactory {
  private readonly profiles = new Interner<TokenProfile>();
  private readonly strings = new Interner<string>();

  create(c: AccessTokenClaims, now: number): CachedToken {
    const shared: Record<string, unknown> = {};
    const irregular: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(c)) {
      if (!PER_TOKEN.has(k)) shared[k] = v;
      // A per-token claim of an unexpected type is kept as it is, in the profile.
      else if (k === 'iat' || k === 'exp' ? !Number.isSafeInteger(v) || (v as number) < 0 : typeof v !== 'string')
        irregular[k] = v;
    }
    // RFC 9449 §6.2: a DPoP-bound token's `cnf` (a claim like any other, above) and its type.
    const bound = typeof c.cnf === 'object' && c.cnf !== null && typeof c.cnf.jkt === 'string';
    Object.assign(shared, irregular, { token_type: bound ? 'DPoP' : 'Bearer', tenant: c.tenant_id });
    const tail = JSON.stringify(shared).slice(1, -1);
    const profile = this.profiles.get(
      tail,
      () =>
        new TokenProfile(
          String(c.tenant_id ?? ''),
          String(c.client_id ?? ''),
          c.aud === undefined ? [] : Array.isArray(c.aud) ? c.aud : [c.aud],
          tail,
          typeof c.agent_grant_id === 'string' ? c.agent_grant_id : '',
          Number.isSafeInteger(c.agent_grant_gen) ? (c.agent_grant_gen as number) : -1,
        ),
    );
    const str = (v: unknown) => (typeof v === 'string' ? this.strings.get(v, () => v) : '');
    const int = (v: unknown) => (Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : -1);
    const exp = int(c.exp);
    return new CachedToken(
      typeof c.jti === 'string' ? c.jti : '',
      str(c.sub),
      str(c.fid),
      int(c.iat),
      exp,
      // Whole seconds, rounded down: never later than 60 s after now, never past exp.
      exp >= 0 ? Math.min(Math.floor((now + CACHE_TTL_MS) / 1000), exp) : 0,
      profile,
    );
  }
}

/** A small LRU over Map's insertion order: a hit re-inserts the key at the young end. */
export class LruCache<V> {
  private readonly map = new Map<string, V>();
  constructor(readonly max: number) {}
  get size(): number {
    return this.map.size;
  }
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, v: V): void {
    if (this.max <= 0) return;
    this.map.delete(key);
    this.map.set(key, v);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
  delete(key: string): void {
    this.map.delete(key);
  }
}

type RevocationSubject = Pick<CachedToken, 'jti' | 'fid' | 'clientId' | 'tenantId' | 'sub' | 'iat'> &
  Partial<Pick<CachedToken, 'agentGrantId' | 'agentGrantGen'>>;

export class IntrospectionService {
  readonly cache: LruCache<CachedToken>;
  /** The metrics (docs/metrics.md) when IAM_METRICS_PORT is set; undefined costs nothing. */
  private readonly metrics: IntrospectionObserver | undefined;
  private readonly entries = new CachedTokenFactory();

  constructor(
    private readonly db: Database,
    private readonly tokens: TokenService,
    opts: { cacheEntries: number; metrics?: IntrospectionObserver },
  ) {
    this.cache = new LruCache(opts.cacheEntries);
    this.metrics = opts.metrics;
  }

  /**
   * The cache key: 128 bits of the token's SHA-256, as 22 characters (a flat string; a slice of
   * the full digest's text would keep all 43 characters alive behind it).
   */
  static key(token: string): string {
    return createHash('sha256').update(token).digest().toString('base64url', 0, 16);
  }

  /** Steps 2 and 3 of the spec's order: signature (or a cached verification), then expiry. */
  async verify(token: string, now = Date.now()): Promise<{ entry: CachedToken; cached: boolean } | { reason: string }> {
    const key = IntrospectionService.key(token);
    const hit = this.cache.get(key);
    if (hit) {
      if (hit.until * 1000 > now) {
        this.metrics?.cacheHit();
        return { entry: hit, cached: true };
      }
      this.cache.delete(key);
    }
    this.metrics?.cacheMiss();
    let claims: AccessTokenClaims;
    try {
      claims = await this.tokens.verifyAccessToken(token, undefined);
    } catch (e) {
      return { reason: (e as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'expired' : 'invalid' };
    }
    if ((claims.exp ?? 0) * 1000 <= now) return { reason: 'expired' };
    return { entry: this.entries.create(claims, now), cached: false };
  }

  /** Step 4: revocation, on every request. Returns the reason when the token is no longer good. */
  revoked(c: RevocationSubject): Promise<string | undefined> {
    const reason = this.revocationReason(c);
    // With metrics on, one `then` more per check; without, none.
    return this.metrics ? reason.then(this.countRevocationCheck) : reason;
  }

  private readonly countRevocationCheck = (reason: string | undefined): string | undefined => {
    this.metrics?.revocationCheck(reason);
    return reason;
  };

  private async revocationReason(c: RevocationSubject): Promise<string | undefined> {
    // A user's token: one with a family (every code and refresh grant), or one without whose
    // subject is a local user's id (a token exchange whose subject was an ID token): the user's
    // status is checked for both, so a disabled or erased user has no token left anywhere.
    const userToken = c.fid !== '' || c.sub.startsWith(USER_ID_PREFIX);
    // Every token this service signs names its tenant; one that does not has none to be active in.
    if (!c.tenantId) return 'tenant_inactive';
    // One round trip answers every revocation question: the token itself (jti), its family
    // (refresh reuse, logout, consent withdrawal), its client, its tenant, its user, and for a
    // token issued under an agent grant that grant's current generation.
    const grantId = c.agentGrantId ?? '';
    const r = await new TenantScope(this.db, c.tenantId).tokens.revocationState({
      jti: c.jti,
      familyId: c.fid,
      clientId: c.clientId,
      sub: c.sub,
      agentGrantId: grantId,
    });
    if (!r) return 'unknown';
    if (r.r_jti !== null && r.r_jti !== undefined) return 'revoked';
    if (r.r_fam !== null && r.r_fam !== undefined) return 'family_revoked';
    // A metadata document client has no row (docs/client-metadata-documents.md, "After
    // issuance"): its tokens live by their family, user and tenant; a tenant that turns documents
    // off stops its next authorization and refresh, and the short-lived access tokens run out.
    const documentClient = (r.c_status === null || r.c_status === undefined) && isDocumentClientId(c.clientId);
    if (r.c_status !== 'active' && !documentClient) return 'client_disabled';
    // A disable sets the client's watermark in the same transaction: its access tokens issued
    // until then stay inactive after an enable too (docs/directory.md, "Clients"). A token
    // without iat cannot show it is younger.
    if (r.c_wm !== null && r.c_wm !== undefined && c.iat <= Number(r.c_wm)) return 'client_tokens_revoked';
    if (r.t_state !== 'active') return 'tenant_inactive';
    if (userToken && r.u_status !== 'active') return 'user_disabled';
    // docs/agents.md "Revocation": a PATCH raises the grant's generation in its own transaction,
    // which revokes every token of an older generation at once, wherever it is cached; the
    // outbox job's jti records follow. A grant that is gone leaves its tokens nothing to act under.
    if (grantId !== '') {
      if (r.g_gen === null || r.g_gen === undefined) return 'agent_grant_revoked';
      if ((c.agentGrantGen ?? -1) < Number(r.g_gen)) return 'agent_grant_superseded';
    }
    return undefined;
  }

  remember(token: string, entry: CachedToken): void {
    this.cache.set(IntrospectionService.key(token), entry);
  }
}
