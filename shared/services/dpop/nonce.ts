/**
 * Server-provided DPoP nonces (RFC 9449 §8, §9), stateless: a nonce is an HMAC, under a key
 * derived from the service's secret key, of the number of the time window it was issued in.
 * Every daemon with the same secret key issues and accepts the same nonces, with nothing
 * stored. The current window's nonce and the previous one's are accepted, so a nonce is good
 * for at least one window and at most two.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { deriveKey } from '../../crypto.js';

/** The length of a nonce window, seconds: a nonce lives 5 to 10 minutes. */
export const DPOP_NONCE_WINDOW_S = 300;

/** The nonce of window `window` (floor(seconds since the epoch / DPOP_NONCE_WINDOW_S)). */
export function dpopNonce(key: Buffer, window: number): string {
  return createHmac('sha256', key).update(`dpop-nonce:${window}`).digest('base64url');
}

export class DpopNonces {
  private readonly key: Buffer;
  constructor(secretKey: string) {
    this.key = deriveKey(secretKey, 'dpop-nonce');
  }

  private window(now: number): number {
    return Math.floor(now / 1000 / DPOP_NONCE_WINDOW_S);
  }

  /** The nonce to send in `DPoP-Nonce` now. */
  current(now = Date.now()): string {
    return dpopNonce(this.key, this.window(now));
  }

  /** Whether `nonce` is this window's or the previous one's (compared in constant time). */
  valid(nonce: string, now = Date.now()): boolean {
    const w = this.window(now);
    const given = Buffer.from(nonce);
    let ok = false;
    for (const n of [dpopNonce(this.key, w), dpopNonce(this.key, w - 1)]) {
      const b = Buffer.from(n);
      if (b.length === given.length && timingSafeEqual(b, given)) ok = true;
    }
    return ok;
  }
}
