/**
 * Deletes login and token rows that can no longer matter, so the tables stay the size of
 * what is live. Each kind is kept a little past its own expiry:
 *
 * | Table | Deleted when |
 * |---|---|
 * | auth_requests, direct_auth_artifacts | expired |
 * | email_codes | expired an hour ago |
 * | auth_codes | expired a day ago (a replay within the day still revokes its tokens) |
 * | refresh_tokens | expired |
 * | revoked_access_tokens | the revoked token has expired (introspection rejects it by exp anyway) |
 * | sessions | expired or revoked 30 days ago (they list as the user's devices until then) |
 * | rate_limits | the budget's window (or lock) ended |
 * | dpop_proofs | the proof can no longer be accepted (RFC 9449 §11.1: its iat window passed) |
 * | upstream_login_states | expired (a pending sign-in at an upstream provider, 10 minutes) |
 * | webauthn_challenges | expired (a passkey registration or sign-in challenge, 5 minutes) |
 * | passkey_tombstones | expired (a removed passkey's record, PASSKEY_TOMBSTONE_TTL_MS: 90 days) |
 * | auth_history | older than AUTH_HISTORY_RETENTION_MS (180 days: the sign-in history) |
 */
import type { Database } from '../../db/index.js';
import {
  AgentGrantTokenHousekeeping,
  AuthHistoryHousekeeping,
  DpopProofHousekeeping,
  LoginHousekeeping,
  PushedRequestLookup,
  PasskeyTombstoneHousekeeping,
  RateLimitHousekeeping,
  TokenHousekeeping,
  UpstreamLoginStateHousekeeping,
  WebauthnChallengeHousekeeping,
} from '../../repositories/index.js';
import { AUTH_HISTORY_RETENTION_MS } from './policy.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The auth-purge job's work, over every tenant, one table after another (stopping between
 * tables once `signal` aborts). Returns how many rows were deleted, by table.
 */
export async function purgeExpiredAuth(
  db: Database,
  signal?: AbortSignal,
  now = Date.now(),
): Promise<Record<string, number>> {
  const login = new LoginHousekeeping(db);
  const tokens = new TokenHousekeeping(db);
  const plan: [string, () => Promise<number>][] = [
    ['auth_requests', () => login.authRequests(now, signal)],
    ['pushed_auth_requests', () => new PushedRequestLookup(db).purge(now, signal)],
    ['direct_auth_artifacts', () => login.artifacts(now, signal)],
    ['email_codes', () => login.emailCodes(now - HOUR, signal)],
    ['auth_codes', () => login.authCodes(now - DAY, signal)],
    ['refresh_tokens', () => tokens.refreshTokens(now, signal)],
    ['revoked_access_tokens', () => tokens.revokedAccessTokens(now, signal)],
    ['agent_grant_tokens', () => new AgentGrantTokenHousekeeping(db).expired(now, signal)],
    ['sessions', () => login.sessions(now - 30 * DAY, signal)],
    ['rate_limits', () => new RateLimitHousekeeping(db).expired(now, signal)],
    ['dpop_proofs', () => new DpopProofHousekeeping(db).expired(now, signal)],
    ['upstream_login_states', () => new UpstreamLoginStateHousekeeping(db).expired(now, signal)],
    ['webauthn_challenges', () => new WebauthnChallengeHousekeeping(db).expired(now, signal)],
    // A tombstone past its bound no longer gives the signal (the lookup compares expires_at).
    ['passkey_tombstones', () => new PasskeyTombstoneHousekeeping(db).expired(now, signal)],
    ['auth_history', () => new AuthHistoryHousekeeping(db).olderThan(now - AUTH_HISTORY_RETENTION_MS, signal)],
  ];
  const counts: Record<string, number> = {};
  for (const [table, purge] of plan) {
    if (signal?.aborted) break;
    counts[table] = await purge();
  }
  return counts;
}
