/**
 * Signing keys. ES256 by default; the private JWK is sealed with a key derived from
 * IAM_SECRET_KEY. Rotation makes a new active key and moves the old one to `retiring`, keeping
 * it in the JWKS until `retire_at` so tokens it signed still verify (RFC 7517 key rollover).
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import { createPrivateKey, type KeyObject } from 'node:crypto';
import type { Database } from '../db/index.js';
import { SecretBox } from '../crypto.js';
import type { SigningKey } from '../db/entities.js';
import { SigningKeyRepository } from '../repositories/index.js';
import { audit, type Actor } from './audit.js';

export const DEFAULT_ALG = 'ES256';

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
  private cache: { at: number; keyObject: KeyObject; kid: string; alg: string } | undefined;
  /** How long a daemon keeps using its cached signing key before re-reading the table. */
  static readonly CACHE_MS = 30_000;

  constructor(
    private readonly ds: Database,
    secretKey: string,
    private readonly retireAfterSeconds: number,
  ) {
    this.box = new SecretBox(secretKey, 'signing-key-seal');
  }

  private async generate(alg = DEFAULT_ALG): Promise<SigningKey> {
    const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
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

  /** Makes sure one active key exists; called at daemon start. */
  async ensureActive(): Promise<KeyInfo> {
    const keys = await new SigningKeyRepository(this.ds).list();
    const active = keys.find((k) => k.status === 'active');
    if (active) return info(active);
    const k = await this.generate();
    await new SigningKeyRepository(this.ds).insert(k);
    return info(k);
  }

  async rotate(actor: Actor): Promise<{ active: KeyInfo; retiring: KeyInfo[] }> {
    const fresh = await this.generate();
    const now = Date.now();
    const retireAt = now + this.retireAfterSeconds * 1000;
    const retiring = await this.ds.transaction(async (em) => {
      const repo = new SigningKeyRepository(em);
      const old = (await repo.list()).filter((k) => k.status === 'active');
      for (const k of old) await repo.update(k.kid, { status: 'retiring', retire_at: retireAt, updated_at: now });
      await repo.insert(fresh);
      await audit(em, actor, {
        tenantId: null,
        action: 'signing_key.rotate',
        targetType: 'signing_key',
        targetId: fresh.kid,
        summary: { retiring: old.map((k) => k.kid), retire_at: retireAt },
      });
      return old.map((k) => info({ ...k, status: 'retiring', retire_at: retireAt }));
    });
    this.cache = undefined;
    return { active: info(fresh), retiring };
  }

  /** Public keys to publish: active ones, and retiring ones until their retire time. */
  async publicJwks(): Promise<{ keys: JWK[] }> {
    const now = Date.now();
    const keys = (await new SigningKeyRepository(this.ds).list())
      .filter((k) => k.status === 'active' || (k.status === 'retiring' && (k.retire_at ?? 0) > now))
      .map((k) => k.public_jwk as JWK);
    return { keys };
  }

  /** The newest active key, unsealed, for signing with shared/jws.ts. */
  async signingKey(): Promise<{ keyObject: KeyObject; kid: string; alg: string }> {
    if (this.cache && Date.now() - this.cache.at < KeyService.CACHE_MS) return this.cache;
    const active = (await new SigningKeyRepository(this.ds).list()).find((k) => k.status === 'active');
    if (!active) throw new Error('no active signing key: run `iam keys rotate`');
    const jwk = JSON.parse(this.box.open(active.private_jwk_sealed, active.kid)) as JWK;
    const keyObject = createPrivateKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
    this.cache = { at: Date.now(), keyObject, kid: active.kid, alg: active.alg };
    return this.cache;
  }
}
