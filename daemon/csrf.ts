/**
 * CSRF tokens for the forms a signed-in browser posts (the account page's buttons, the
 * logout confirmation): an HMAC of the session's id under a key derived for one purpose, so
 * a token is good only for that session and that kind of form, and a cross-site page, which
 * cannot read it, cannot forge the POST. The login and consent forms, which come before a
 * session exists, use the double-submit token of daemon/routes/oauth/authorization.ts instead.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { deriveKey } from '../shared/crypto.js';
import { ApiError } from '../shared/errors.js';

export interface SessionCsrf {
  /** The token to put in the form of a page shown to this session. */
  tokenFor(sessionId: string): string;
  /** Whether `given` (the posted field) is this session's token; constant-time. */
  verify(sessionId: string, given: unknown): boolean;
}

export function sessionCsrf(secretKey: string, purpose: string): SessionCsrf {
  const key = deriveKey(secretKey, purpose);
  const tokenFor = (sessionId: string) => createHmac('sha256', key).update(sessionId).digest('base64url');
  return {
    tokenFor,
    verify(sessionId, given) {
      const a = Buffer.from(typeof given === 'string' ? given : '');
      const b = Buffer.from(tokenFor(sessionId));
      return a.length === b.length && timingSafeEqual(a, b);
    },
  };
}

/**
 * For the account's JSON endpoints that change state: a request whose browser says it comes
 * from another origin (an `Origin` header that is not the issuer's) is refused with 403, as
 * the Fetch standard's Origin lets a server do for a cross-site POST or DELETE.
 */
export function refuseCrossOrigin(origin: string, issuerOrigin: string): void {
  if (origin && origin !== issuerOrigin) throw new ApiError(403, 'forbidden', 'Cross-origin requests are refused.');
}
