/**
 * The operator CLI's credentials file: where the daemon is and which OAuth client the
 * commands act as. `$IAM_CLI_CONFIG` if set, else `${XDG_CONFIG_HOME:-$HOME/.config}/iam/config.json`.
 * It holds a client secret, so it is created 0600 in a 0700 directory (written to a temp
 * file opened 0600 and renamed over, so it is never readable by others, even briefly), and a
 * file whose mode lets group or others read it is refused rather than used.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliFailure } from '../base.js';

export interface StoredCredentials {
  url: string;
  client_id: string;
  client_secret: string;
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.IAM_CLI_CONFIG) return env.IAM_CLI_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'iam', 'config.json');
}

const notLoggedIn = (path: string) =>
  new CliFailure('not_logged_in', `not logged in (no ${path}): run \`iam login --url URL --client-id ID\` first`);

export function readCredentials(path: string): StoredCredentials {
  let mode: number;
  try {
    const st = statSync(path);
    if (!st.isFile())
      throw new CliFailure('config_invalid', `${path} is not a regular file: remove it and run \`iam login\``);
    mode = st.mode & 0o777;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw notLoggedIn(path);
    throw e;
  }
  // Like ssh with a private key: a secret others can read is treated as already leaked.
  if (mode & 0o077) {
    throw new CliFailure(
      'config_insecure',
      `${path} has mode ${mode.toString(8).padStart(4, '0')}, so other users may read the client secret in it: run ` +
        `\`chmod 600 ${path}\`, and consider rotating the secret`,
    );
  }
  let v: Partial<StoredCredentials>;
  try {
    v = JSON.parse(readFileSync(path, 'utf8')) as Partial<StoredCredentials>;
  } catch {
    throw new CliFailure(
      'config_invalid',
      `${path} is not valid JSON: remove it (\`iam logout\`) and run \`iam login\` again`,
    );
  }
  if (typeof v?.url !== 'string' || typeof v.client_id !== 'string' || typeof v.client_secret !== 'string') {
    throw new CliFailure('config_invalid', `${path} lacks url, client_id or client_secret: run \`iam login\` again`);
  }
  return { url: v.url, client_id: v.client_id, client_secret: v.client_secret };
}

export function writeCredentials(path: string, creds: StoredCredentials): void {
  // Directories created here are 0700 (umask can only narrow it); an existing one is left alone.
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  // 'wx': a fresh file, never an existing (possibly attacker-placed) one; 0600 from the start.
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    try {
      writeSync(fd, JSON.stringify(creds, null, 2) + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw e;
  }
}

/** True when there was a file to remove. */
export function removeCredentials(path: string): boolean {
  try {
    statSync(path);
  } catch {
    return false;
  }
  rmSync(path, { force: true });
  return true;
}
