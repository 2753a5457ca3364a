/**
 * Several first starts at once with no IAM_SECRET_KEY (two `npm start` in one checkout, or the
 * workers of a fresh install): each process either writes the data directory's `secret.key` or
 * reads the one another wrote, and never reads a file still being written.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const MODULE = pathToFileURL(join(fileURLToPath(import.meta.url), '../../../shared/config/secret-key.js')).href;

function firstStart(dataDir: string): Promise<string> {
  const script =
    `const { loadSecretKey } = await import(${JSON.stringify(MODULE)});` +
    `process.stdout.write(loadSecretKey({}, ${JSON.stringify(dataDir)}).secretKey);`;
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['--input-type=module', '-e', script], (err, stdout, stderr) =>
      err ? reject(new Error(stderr || err.message)) : resolve(stdout),
    ),
  );
}

test('processes generating the secret key at once all come up with the one key written', async (t) => {
  for (let round = 0; round < 3; round++) {
    const dir = mkdtempSync(join(tmpdir(), 'iam-secret-race-'));
    try {
      const keys = await Promise.all(Array.from({ length: 8 }, () => firstStart(dir)));
      const onDisk = readFileSync(join(dir, 'secret.key'), 'utf8').trim();
      t.true(onDisk.length >= 32);
      t.deepEqual(new Set(keys), new Set([onDisk]), 'every process uses the key on disk');
      t.deepEqual(readdirSync(dir), ['secret.key'], 'no temporary file is left behind');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
