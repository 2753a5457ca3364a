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

export const CACHE_TTL_MS = 60_000;

/**
 * A verified token, kept compact because the cache may hold a million of them: the fields the
 * per-request checks read, and the active response already serialised (built once, at
 * verification, instead of keeping the parsed claims object beside it).
 */
export interface CachedToken {
  jti: string;
  fid: string;
  clientId: string;
  tenantId: string;
  sub: string;
  aud: string[];
  /** ms epoch: the entry is dropped at min(insert + 60 s, exp). */
  until: number;
  expMs: number;
  /** The active response body. */
  json: string;
}

export function toCachedToken(c: AccessTokenClaims, now: number): CachedToken {
  const expMs = (c.exp ?? 0) * 1000;
  return {
    jti: String(c.jti ?? ''),
    fid: typeof c.fid === 'string' ? c.fid : '',
    clientId: c.client_id,
    tenantId: c.tenant_id,
    sub: String(c.sub ?? ''),
    aud: c.aud === undefined ? [] : Array.isArray(c.aud) ? c.aud : [c.aud],
    until: Math.min(now + CACHE_TTL_MS, expMs),
    expMs,
    json: JSON.stringify({ ...c, active: true, token_type: 'Bearer', tenant: c.tenant_id }),
  };
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

type RevocationSubject = Pick<CachedToken, 'jti' | 'fid' | 'clientId' | 'tenantId' | 'sub'>;

export class IntrospectionService {
  readonly cache: LruCache<CachedToken>;
  /** The metrics (docs/metrics.md) when IAM_METRICS_PORT is set; undefined costs nothing. */
  private readonly metrics: IntrospectionObserver | undefined;

  constructor(
    private readonly db: Database,
    private readonly tokens: TokenService,
    opts: { cacheEntries: number; metrics?: IntrospectionObserver },
  ) {
    this.cache = new LruCache(opts.cacheEntries);
    this.metrics = opts.metrics;
  }

  static key(token: string): string {
    return createHash('sha256').update(token).digest('base64url').slice(0, 27);
  }

  /** Steps 2 and 3 of the spec's order: signature (or a cached verification), then expiry. */
  async verify(token: string, now = Date.now()): Promise<{ entry: CachedToken; cached: boolean } | { reason: string }> {
    const key = IntrospectionService.key(token);
    const hit = this.cache.get(key);
    if (hit) {
      if (hit.until > now && hit.expMs > now) {
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
    return { entry: toCachedToken(claims, now), cached: false };
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
    const userToken = c.fid !== '';
    // Every token this service signs names its tenant; one that does not has none to be active in.
    if (!c.tenantId) return 'tenant_inactive';
    // One round trip answers every revocation question: the token itself (jti), its family
    // (refresh reuse, logout, consent withdrawal), its client, its tenant and its user.
    const r = await new TenantScope(this.db, c.tenantId).tokens.revocationState({
      jti: c.jti,
      familyId: c.fid,
      clientId: c.clientId,
      sub: c.sub,
    });
    if (!r) return 'unknown';
    if (r.r_jti !== null && r.r_jti !== undefined) return 'revoked';
    if (r.r_fam !== null && r.r_fam !== undefined) return 'family_revoked';
    if (r.c_status !== 'active') return 'client_disabled';
    if (r.t_state !== 'active') return 'tenant_inactive';
    if (userToken && r.u_status !== 'active') return 'user_disabled';
    return undefined;
  }

  remember(token: string, entry: CachedToken): void {
    this.cache.set(IntrospectionService.key(token), entry);
  }
}
