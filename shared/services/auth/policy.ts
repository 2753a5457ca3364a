/** Lifetimes and limits of the login and token flow. docs/oauth.md lists them for operators. */
export const EMAIL_CODE_TTL_MS = 10 * 60_000;
export const EMAIL_CODE_MAX_ATTEMPTS = 5;
export const SESSION_TTL_MS = 7 * 24 * 3600_000;
export const AUTH_REQUEST_TTL_MS = 30 * 60_000;
/** RFC 6749 §4.1.2: codes are short-lived; a minute is the usual ceiling. */
export const AUTH_CODE_TTL_MS = 60_000;
export const ARTIFACT_TTL_MS = 2 * 60_000;
export const ACCESS_TOKEN_TTL_S = 600;
export const ID_TOKEN_TTL_S = 600;
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600_000;
/** last_seen_at is refreshed at most this often, so reading a session is not a write each time. */
export const SESSION_TOUCH_INTERVAL_MS = 60_000;
export const SESSION_COOKIE = 'service_session';
/** The known-device cookie (shared/services/auth/codes.ts): set by a successful email-code sign-in. */
export const KNOWN_DEVICE_COOKIE = 'known_device';
/**
 * How long the authentication history (the sign-in history) is kept: the auth-purge job deletes
 * older rows (purge.ts). Long enough for a user or support to look back over half a year.
 */
export const AUTH_HISTORY_RETENTION_MS = 180 * 24 * 3600_000;
