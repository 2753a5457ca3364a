/**
 * The metadata poller's arithmetic, free of I/O so that tests can hold it exactly: when to
 * poll next, how to back off, and which sourceState a trust source is in.
 */

export const MIN_REFRESH_SECONDS = 30;
/** `policy: strict` refuses a copy whose validUntil is absent or further away than this. */
export const STRICT_MAX_VALIDITY_SECONDS = 14 * 86_400;
/** A copy expiring within this raises metadata_expiring. */
export const EXPIRING_WITHIN_SECONDS = 7 * 86_400;
/** Consecutive failures that raise refresh_failing. */
export const REFRESH_FAILING_AFTER = 3;

export type SourceState = 'healthy' | 'stale' | 'error' | 'expired' | 'missing' | 'identity_change_pending';

/** xs:duration (ISO 8601, as SAML's cacheDuration) in seconds; undefined when malformed. */
export function parseDuration(d: string | null | undefined): number | undefined {
  if (!d) return undefined;
  const m = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(d.trim());
  if (!m || d.trim() === 'P' || d.trim().endsWith('T')) return undefined;
  const [, y, mo, day, h, mi, s] = m.map((v) => (v === undefined ? 0 : Number(v)));
  // Years and months have no fixed length; 365 and 30 days are what a cache lifetime needs.
  return y * 365 * 86_400 + mo * 30 * 86_400 + day * 86_400 + h * 3600 + mi * 60 + s;
}

/** validUntil (xs:dateTime) in epoch ms; undefined when absent or malformed. */
export function parseValidUntil(v: string | null | undefined): number | undefined {
  if (!v) return undefined;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : undefined;
}

/**
 * Seconds until the next poll after a good copy: 0.75 of the shorter of cacheDuration and
 * the time left to validUntil (SAML V2.0 Metadata §2.3: a consumer should refresh before
 * either), clamped to [30 s, intervalSeconds]. Neither given: intervalSeconds.
 */
export function refreshAfterSeconds(
  now: number,
  validUntilMs: number | null | undefined,
  cacheDurationSeconds: number | null | undefined,
  intervalSeconds: number,
): number {
  const bounds: number[] = [];
  if (cacheDurationSeconds != null) bounds.push(cacheDurationSeconds);
  if (validUntilMs != null) bounds.push((validUntilMs - now) / 1000);
  if (!bounds.length) return intervalSeconds;
  const s = Math.floor(0.75 * Math.min(...bounds));
  return Math.min(Math.max(s, MIN_REFRESH_SECONDS), intervalSeconds);
}

/** After `failures` consecutive failures: 60 s doubled per failure, at most intervalSeconds. */
export function backoffSeconds(failures: number, intervalSeconds: number): number {
  const s = 60 * 2 ** Math.min(Math.max(failures - 1, 0), 20);
  return Math.min(Math.max(s, MIN_REFRESH_SECONDS), intervalSeconds);
}

/**
 * The state after a failed poll, given the copy still held (if any):
 * - the failure is a new signing key → identity_change_pending (the copy is kept as it is);
 * - 404/410, or never fetched and nothing to keep → missing when the server says it is gone;
 * - a copy is held and still valid → stale; held but past validUntil → expired;
 * - no copy → error.
 */
export function stateAfterFailure(p: {
  code: string;
  httpStatus?: number;
  hasCopy: boolean;
  copyValidUntil: number | null;
  now: number;
}): SourceState {
  if (p.code === 'metadata_signing_key_changed') return 'identity_change_pending';
  if (p.hasCopy) return p.copyValidUntil !== null && p.copyValidUntil <= p.now ? 'expired' : 'stale';
  if (p.httpStatus === 404 || p.httpStatus === 410) return 'missing';
  return 'error';
}
