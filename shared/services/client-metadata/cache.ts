/**
 * The metadata documents this daemon has fetched, in memory: a cache, not state (each daemon
 * fetches for itself; nothing is written to the database). Keyed by URL; each entry lives as long
 * as the document's HTTP caching headers say (RFC 9111 §4.2.1: Cache-Control max-age, else
 * Expires), within [MIN_TTL_MS, MAX_TTL_MS], DEFAULT_TTL_MS without either; `no-store` and
 * `no-cache` get the minimum, so a flood of sign-ins cannot turn into a flood of fetches. Bounded
 * (least recently used out first). Concurrent misses for one URL share one fetch. A failed fetch
 * caches nothing: the next request fetches again.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ClientDocument } from './document.js';

export const MIN_TTL_MS = 60_000;
export const MAX_TTL_MS = 24 * 3600_000;
export const DEFAULT_TTL_MS = 5 * 60_000;
export const MAX_ENTRIES = 1000;

export interface CachedDocument {
  doc: ClientDocument;
  fetchedAt: number;
  expiresAt: number;
}

/** How long a document fetched at `now` with these response headers is kept, ms. */
export function lifetimeOf(headers: IncomingHttpHeaders, now: number): number {
  const cc = String(headers['cache-control'] ?? '').toLowerCase();
  const clamp = (ms: number) => Math.min(MAX_TTL_MS, Math.max(MIN_TTL_MS, ms));
  if (/(^|[\s,])(no-store|no-cache)([\s,=]|$)/.test(cc)) return MIN_TTL_MS;
  const maxAge = /(^|[\s,])max-age\s*=\s*"?(\d{1,10})"?/.exec(cc);
  if (maxAge) return clamp(Number(maxAge[2]) * 1000);
  const expires = headers.expires ? Date.parse(String(headers.expires)) : NaN;
  if (!Number.isNaN(expires)) return clamp(expires - now);
  return DEFAULT_TTL_MS;
}

export class DocumentCache {
  /** Insertion order is recency order: a hit moves its entry to the end. */
  private readonly entries = new Map<string, CachedDocument>();
  private readonly pending = new Map<string, Promise<CachedDocument>>();

  constructor(private readonly maxEntries = MAX_ENTRIES) {}

  /** The fresh entry for `url`, or undefined; `now` ms. */
  peek(url: string, now = Date.now()): CachedDocument | undefined {
    const e = this.entries.get(url);
    if (!e) return undefined;
    if (e.expiresAt <= now) {
      this.entries.delete(url);
      return undefined;
    }
    this.entries.delete(url);
    this.entries.set(url, e);
    return e;
  }

  /** The fresh entry, or the result of `load` (shared by concurrent callers; stored only on success). */
  async get(url: string, load: () => Promise<CachedDocument>): Promise<CachedDocument> {
    const hit = this.peek(url);
    if (hit) return hit;
    let p = this.pending.get(url);
    if (!p) {
      p = load().then((e) => {
        this.entries.set(url, e);
        while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
        return e;
      });
      const done = () => this.pending.delete(url);
      p.then(done, done);
      this.pending.set(url, p);
    }
    return p;
  }

  get size(): number {
    return this.entries.size;
  }
}
