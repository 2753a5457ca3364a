/**
 * Binds the database to one IAM_SECRET_KEY. The first process to start records a keyed check
 * value in `service_meta`; every later daemon or CLI run compares its own key with it and stops
 * with a clear message on a mismatch, instead of writing client secrets and signing keys that
 * the others cannot read (a CLI run from another directory would otherwise generate a key of
 * its own). The check value is an HMAC under a key derived from the secret, never the secret.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ConfigError } from '../config.js';
import { deriveKey } from '../crypto.js';
import type { Database } from '../db/index.js';
import { ServiceMetaRepository } from '../repositories/index.js';

const NAME = 'secret_key_check';

/** Records this key's check value, or compares it with the recorded one; a mismatch is a ConfigError. */
export async function bindSecretKey(db: Database, secretKey: string): Promise<void> {
  const check = createHmac('sha256', deriveKey(secretKey, 'key-check')).update('iam').digest('base64url');
  const meta = new ServiceMetaRepository(db);
  // Recorded already (by us earlier, or by another daemon): compare below.
  if (await meta.insertIfAbsent(NAME, check, Date.now())) return;
  const stored = Buffer.from((await meta.get(NAME)) ?? '');
  const mine = Buffer.from(check);
  if (stored.length !== mine.length || !timingSafeEqual(stored, mine)) {
    throw new ConfigError(
      'IAM_SECRET_KEY',
      'does not match the key this database was set up with: ' +
        'use the same IAM_SECRET_KEY (or IAM_DATA_DIR with its secret.key) as the daemon',
    );
  }
}
