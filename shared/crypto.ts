/**
 * Purpose-bound keys derived from IAM_SECRET_KEY, secret hashing and encryption at rest.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** HKDF-SHA256 (RFC 5869) so that each use of the secret key gets an independent key. */
export function deriveKey(secretKey: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secretKey, 'utf8'), Buffer.alloc(0), `iam:${purpose}`, 32));
}

/** Random identifier with a readable type prefix, e.g. `ten_3k9…`. */
export function newId(prefix: string, bytes = 12): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * Client secrets are 256-bit random values, so a keyed fast hash is as strong as a password
 * hash against guessing and lets the hot path verify a secret in microseconds.
 */
export class SecretHasher {
  private readonly key: Buffer;
  constructor(secretKey: string) {
    this.key = deriveKey(secretKey, 'client-secret-hash');
  }
  hash(secret: string): string {
    return 'hs256$' + createHmac('sha256', this.key).update(secret, 'utf8').digest('base64url');
  }
  /** Constant-time comparison of a presented secret with a stored hash. */
  verify(secret: string, stored: string | null | undefined): boolean {
    if (!stored) return false;
    const a = Buffer.from(this.hash(secret));
    const b = Buffer.from(stored);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}

/** AES-256-GCM envelope for secrets at rest (signing keys' private parts). */
export class SecretBox {
  private readonly key: Buffer;
  constructor(secretKey: string, purpose: string) {
    this.key = deriveKey(secretKey, purpose);
  }
  seal(plaintext: string, aad = ''): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    c.setAAD(Buffer.from(aad));
    const body = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
    return ['v1', iv.toString('base64url'), body.toString('base64url'), c.getAuthTag().toString('base64url')].join('.');
  }
  open(sealed: string, aad = ''): string {
    const [v, iv, body, tag] = sealed.split('.');
    if (v !== 'v1' || !iv || !body || !tag) throw new Error('unrecognised sealed value');
    const d = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    d.setAAD(Buffer.from(aad));
    d.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(body, 'base64url')), d.final()]).toString('utf8');
  }
}
