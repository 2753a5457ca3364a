import { createHmac, timingSafeEqual } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { ConfigError } from '../config.js';
import { deriveKey } from '../crypto.js';

const NAME = 'secret_key_check';

/**
 * Binds the database to one IAM_SECRET_KEY. The first process to start records a keyed check
 * value; every later daemon or CLI run compares its own key with it and stops with a clear
 * message on a mismatch, instead of writing client secrets and signing keys that the others
 * cannot read (a CLI run from another directory would otherwise generate a key of its own).
 */
export async function bindSecretKey(ds: DataSource, secretKey: string): Promise<void> {
  const check = createHmac('sha256', deriveKey(secretKey, 'key-check')).update('iam').digest('base64url');
  try {
    await ds.query('INSERT INTO service_meta (name, value, updated_at) VALUES (?, ?, ?)', [NAME, check, Date.now()]);
    return;
  } catch {
    // Already recorded (by us earlier, or by another daemon): compare below.
  }
  const rows: { value: string }[] = await ds.query('SELECT value FROM service_meta WHERE name = ?', [NAME]);
  const stored = Buffer.from(rows[0]?.value ?? '');
  const mine = Buffer.from(check);
  if (stored.length !== mine.length || !timingSafeEqual(stored, mine)) {
    throw new ConfigError(
      'IAM_SECRET_KEY',
      'does not match the key this database was set up with: use the same IAM_SECRET_KEY (or IAM_DATA_DIR with its secret.key) as the daemon',
    );
  }
}
