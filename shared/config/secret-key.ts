/**
 * The secret key (IAM_SECRET_KEY): from the environment, or from the data directory's
 * `secret.key`, generated there on first start. Read by loadConfig (shared/config.ts).
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './vars.js';

export const MIN_SECRET_KEY_LENGTH = 32;

/** Where the secret key came from, for the start-up log (never the key itself). */
export type SecretKeySource = 'env' | 'file' | 'generated';

/** Reads the secret key from the environment, or from (or into) the data directory. */
export function loadSecretKey(
  env: NodeJS.ProcessEnv,
  dataDir: string,
): { secretKey: string; secretKeySource: SecretKeySource } {
  const fromEnv = env.IAM_SECRET_KEY;
  if (fromEnv !== undefined && fromEnv !== '') {
    if (fromEnv.length < MIN_SECRET_KEY_LENGTH) {
      throw new ConfigError(
        'IAM_SECRET_KEY',
        `is too short: at least ${MIN_SECRET_KEY_LENGTH} characters are required ` +
          '(generate one with: openssl rand -base64 32)',
      );
    }
    return { secretKey: fromEnv, secretKeySource: 'env' };
  }
  const file = join(dataDir, 'secret.key');
  if (existsSync(file)) {
    const key = readFileSync(file, 'utf8').trim();
    if (key.length < MIN_SECRET_KEY_LENGTH) {
      throw new ConfigError(
        'IAM_SECRET_KEY',
        `the key file ${file} holds fewer than ${MIN_SECRET_KEY_LENGTH} characters`,
      );
    }
    return { secretKey: key, secretKeySource: 'file' };
  }
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const key = randomBytes(32).toString('base64url');
    // Written whole to a file of this process's own, then linked into place: link() fails if
    // another process got there first (then read theirs), and a process that finds the file
    // never reads it half-written, as it could with an O_EXCL create followed by a write.
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(tmp, key + '\n', { mode: 0o600, flag: 'wx' });
    chmodSync(tmp, 0o600);
    try {
      linkSync(tmp, file);
      return { secretKey: key, secretKeySource: 'generated' };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return loadSecretKey(env, dataDir);
      throw e;
    } finally {
      rmSync(tmp, { force: true });
    }
  } catch (e) {
    throw new ConfigError('IAM_SECRET_KEY', `is unset and no key could be written to ${file}: ${(e as Error).message}`);
  }
}
