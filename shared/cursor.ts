/**
 * Signed keyset cursors for every endpoint that pages: `<payload>.<mac>`, the payload the
 * base64url JSON of the last row's (created_at, id) pair, the MAC an HMAC-SHA256 over it with a
 * key derived from the service secret key and a label per endpoint, so a cursor of one endpoint
 * is not accepted by another and a client cannot make one up (docs/security.md, "Cursors").
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { deriveKey } from './crypto.js';
import { ApiError } from './errors.js';

const SHAPE = /^([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{43})$/;

/** Where a keyset page resumes: after this row in (created_at, id) order. */
export interface KeysetPosition {
  createdAt: number;
  id: string;
}

/** Makes and checks the cursors of one endpoint. */
export class CursorSigner {
  private readonly key: Buffer;

  /**
   * @param secretKey the service secret key (IAM_SECRET_KEY)
   * @param label names the endpoint, e.g. `audit` or `devices`; each gets its own key
   * @param field the parameter named in the 400, e.g. `query.cursor`
   */
  constructor(
    secretKey: string,
    label: string,
    private readonly field = 'query.cursor',
  ) {
    this.key = deriveKey(secretKey, `cursor:${label}`);
  }

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload).digest();
  }

  /** The cursor of the page after `(createdAt, id)`. */
  encode(createdAt: number, id: string): string {
    const payload = Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
    return `${payload}.${this.mac(payload).toString('base64url')}`;
  }

  /**
   * The position a cursor this signer made names. Anything else (malformed, truncated, tampered,
   * signed for another endpoint) is a 400 `invalid_request` naming the parameter. The MAC is
   * compared in constant time before the payload is parsed.
   */
  decode(cursor: string): KeysetPosition {
    const m = SHAPE.exec(cursor);
    if (m) {
      // The MAC's text, not its decoded bytes: base64url decoding ignores the last character's
      // spare bits, so several texts decode to one MAC.
      const given = Buffer.from(m[2]);
      const want = Buffer.from(this.mac(m[1]).toString('base64url'));
      if (given.length === want.length && timingSafeEqual(given, want)) {
        try {
          const v = JSON.parse(Buffer.from(m[1], 'base64url').toString('utf8')) as unknown;
          if (
            Array.isArray(v) &&
            v.length === 2 &&
            Number.isSafeInteger(v[0]) &&
            (v[0] as number) >= 0 &&
            typeof v[1] === 'string'
          )
            return { createdAt: v[0] as number, id: v[1] };
        } catch {
          /* refused below */
        }
      }
    }
    throw new ApiError(400, 'invalid_request', `${this.field}: not a cursor returned by this endpoint.`, {
      details: [{ field: this.field, message: 'not a cursor returned by this endpoint' }],
    });
  }
}
