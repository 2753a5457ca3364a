/**
 * Signing keys, one active key per signing algorithm offered (SIGNING_ALGORITHMS): ES256 is the
 * default every token is signed with unless its client registered another algorithm
 * (docs/oauth.md, "Signing algorithms"). A key is bound to one algorithm (its JWK `alg`), so
 * RS256 and PS256 each have an RSA key of their own: a verifier that honours `alg` on the JWK
 * (RFC 7517 §4.4) never has to accept one key under two algorithms (RFC 8725 §3.1). The private
 * JWK is sealed with a key derived from IAM_SECRET_KEY. Rotation makes a new active key for
 * every algorithm and moves the old ones to `retiring`, keeping them in the JWKS until
 * `retire_at` so tokens they signed still verify (RFC 7517 key rollover).
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import { createPrivateKey, type KeyObject } from 'node:crypto';
import type { Database } from '../db/index.js';
import { SecretBox } from '../crypto.js';
import { SIGNING_ALGORITHMS, type SigningAlg } from '../jws.js';
import type { SigningKey } from '../db/entities.js';
import { SigningKeyRepository } from '../repositories/index.js';
import { audit, type Actor } from './audit.js';

/** The algorithm of every token whose client asked for none (the service's secure default). */
export const DEFAULT_ALG = 'ES256';

export { SIGNING_ALGORITHMS, type SigningAlg };

/** RSA keys: 2048 bits, the minimum RFC 7518 §3.3 and §3.5 allow. */
const RSA_MODULUS_BITS = 2048;

export interface Signer {
  keyObject: KeyObject;
  kid: string;
  alg: string;
}

export interface KeyInfo {
  kid: string;
  alg: string;
  status: string;
  created_at: number;
  retire_at: number | null;
}

const info = (k: SigningKey): KeyInfo => ({
  kid: k.kid,
  alg: k.alg,
  status: k.status,
  created_at: k.created_at,
  retire_at: k.retire_at,
});

export class KeyService {
  private readonly box: SecretBox;
  /** The active key of each algorithm, unsealed, with when it was read. */
  private readonly cache = new Map<string, Signer & { at: number }>();
  /** How long a daemon keeps using its cached signing key before re-reading the table. */
  static readonly CACHE_MS = 30_000;

  constructor(
    private readonly ds: Database,
    secretKey: string,
    private readonly retireAfterSeconds: number,
  ) {
    this.box = new SecretBox(secretKey, 'signing-key-seal');
  }

  private async generate(alg: SigningAlg): Promise<SigningKey> {
    const { publicKey, privateKey } = await generateKeyPair(alg, {
      extractable: true,
      ...(alg === 'RS256' || alg === 'PS256' ? { modulusLength: RSA_MODULUS_BITS } : {}),
    });
    const pub = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(pub); // RFC 7638
    const priv = await exportJWK(privateKey);
    const now = Date.now();
    return {
      kid,
      alg,
      status: 'active',
      public_jwk: { ...pub, kid, alg, use: 'sig' },
      private_jwk_sealed: this.box.seal(JSON.stringify(priv), kid),
      created_at: now,
      retire_at: null,
      updated_at: now,
    };
  }

  async list(): Promise<KeyInfo[]> {
    return (await new SigningKeyRepository(this.ds).list()).map(info);
  }

  /**
   * Makes sure every algorithm has an active key (a database from before an algorithm was
   * offered gets its key here); called at daemon start. Returns the default algorithm's key.
   */
  async ensureActive(): Promise<KeyInfo> {
    const keys = await new SigningKeyRepository(this.ds).list();
    let dflt = keys.find((k) => k.status === 'active' && k.alg === DEFAULT_ALG);
    for (const alg of SIGNING_ALGORITHMS) {
      if (keys.some((k) => k.status === 'active' && k.alg === alg)) continue;
      const k = await this.generate(alg);
      await new SigningKeyRepository(this.ds).insert(k);
      if (alg === DEFAULT_ALG) dflt = k;
    }
    return info(dflt!);
  }

  /**
   * A new active key for every algorithm; the keys active before become retiring.
   * `active` is the default algorithm's new key, `active_keys` all of them.
   */
  async rotate(actor: Actor): Promise<{ active: KeyInfo; active_keys: KeyInfo[]; retiring: KeyInfo[] }> {
    const fresh: SigningKey[] = [];
    for (const alg of SIGNING_ALGORITHMS) fresh.push(await this.generate(alg));
    const now = Date.now();
    const retireAt = now + this.retireAfterSeconds * 1000;
    const retiring = await this.ds.transaction(async (em) => {
      const repo = new SigningKeyRepository(em);
      const old = (await repo.list()).filter((k) => k.status === 'active');
      for (const k of old) await repo.update(k.kid, { status: 'retiring', retire_at: retireAt, updated_at: now });
      for (const k of fresh) await repo.insert(k);
      await audit(em, actor, {
        tenantId: null,
        action: 'signing_key.rotate',
        targetType: 'signing_key',
        targetId: fresh[0].kid,
        summary: {
          active: fresh.map((k) => ({ kid: k.kid, alg: k.alg })),
          retiring: old.map((k) => k.kid),
          retire_at: retireAt,
        },
      });
      return old.map((k) => info({ ...k, status: 'retiring', retire_at: retireAt }));
    });
    this.cache.clear();
    return { active: info(fresh[0]), active_keys: fresh.map(info), retiring };
  }

  /** Public keys to publish: active ones, and retiring ones until their retire time. */
  async publicJwks(): Promise<{ keys: JWK[] }> {
    const now = Date.now();
    const keys = (await new SigningKeyRepository(this.ds).list())
      .filter((k) => k.status === 'active' || (k.status === 'retiring' && (k.retire_at ?? 0) > now))
      .map((k) => k.public_jwk as JWK);
    return { keys };
  }

  /** The newest active key of `alg`, unsealed, for signing with shared/jws.ts. */
  async signingKey(alg: SigningAlg = DEFAULT_ALG): Promise<Signer> {
    const cached = this.cache.get(alg);
    if (cached && Date.now() - cached.at < KeyService.CACHE_MS) return cached;
    const active = (await new SigningKeyRepository(this.ds).list()).find((k) => k.status === 'active' && k.alg === alg);
    if (!active) throw new Error(`no active ${alg} signing key: run \`iam keys rotate\``);
    const jwk = JSON.parse(this.box.open(active.private_jwk_sealed, active.kid)) as JWK;
    const keyObject = createPrivateKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
    const fresh = { at: Date.now(), keyObject, kid: active.kid, alg: active.alg };
    this.cache.set(alg, fresh);
    return fresh;
  }
}
