/**
 * Purpose-bound keys derived from IAM_SECRET_KEY, secret hashing and encryption at rest.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** HKDF-SHA256 (RFC 5869) so that each use of the secret key gets an independent key. */
export function deriveKey(secretKey: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secretKey, 'utf8'), Buffer.alloc(0), `iam:${purpose}`, 32));
}

/**
 * The `sid` claim of the ID tokens issued through a browser session (OpenID Connect
 * Front-Channel Logout 1.0 §3, used by RP-Initiated Logout to tell sessions apart): an HMAC of
 * the session's id rather than the id itself, which is the hash that finds the session by its
 * cookie and has no business in a token a client may log.
 */
export function sessionSid(secretKey: string): (sessionId: string) => string {
  const key = deriveKey(secretKey, 'oidc-sid');
  return (sessionId) => createHmac('sha256', key).update(sessionId).digest('base64url');
}

/*
 * Random bytes come from a pool refilled 4 KiB at a time: a login takes about fifteen small
 * values (ids, tokens, nonces), and one CSPRNG call per value cost more than the bytes. Each
 * byte is handed out once; Node's randomUUID caches its entropy the same way.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/**
 * `bytes` fresh random bytes, as a view that is valid until the next call. A request larger
 * than the pool would get a short view (fewer bytes than asked, silently), so it is refused.
 */
function takeRandom(bytes: number): Buffer {
  if (!(bytes >= 0 && bytes <= POOL_BYTES && Number.isInteger(bytes))) {
    throw new RangeError(`random bytes requested: ${bytes}; at most ${POOL_BYTES} at a time`);
  }
  if (poolOffset + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  const out = pool.subarray(poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return out;
}

/** Random value of `bytes` bytes, base64url-encoded (RFC 4648 §5). */
export function randomToken(bytes = 32): string {
  return takeRandom(bytes).toString('base64url');
}

/**
 * A client_id: 144 random bits, base64url, never starting with `-`. One id in 64 would otherwise
 * begin with a dash, and every command line (the `iam` CLI, curl's `-u`) then reads it as a
 * flag. Drawing again costs log2(64/63) ≈ 0.02 bits.
 */
export function newClientId(): string {
  for (;;) {
    const id = randomToken(18);
    if (!id.startsWith('-')) return id;
  }
}

/** Random value of `bytes` bytes, base64-encoded (CSP nonces use this alphabet). */
export function randomBase64(bytes: number): string {
  return takeRandom(bytes).toString('base64');
}

/** Random identifier with a readable type prefix, e.g. `ten_3k9…`. */
export function newId(prefix: string, bytes = 12): string {
  return `${prefix}_${randomToken(bytes)}`;
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

/**
 * Two strings compared in constant time (their lengths are not secret): what a presented value
 * is checked against wherever guessing it byte by byte from the timing must not work.
 */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** AES-256-GCM envelope for secrets at rest (signing keys' private parts). */
export class SecretBox {
  private readonly key: Buffer;
  constructor(secretKey: string, purpose: string) {
    this.key = deriveKey(secretKey, purpose);
  }
  seal(plaintext: string, aad = ''): string {
    const iv = Buffer.from(takeRandom(12));
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
