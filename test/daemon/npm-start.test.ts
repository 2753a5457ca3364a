/**
 * `npm start` runs the daemon already built (package.json: `node dist/daemon/main.js`): it
 * compiles nothing, so two starts in one checkout at once no longer race on rewriting dist/.
 * Both come up on one fresh SQLite database and data directory (each on a port of its own:
 * IAM_PORT=0), one of them migrating it while the other waits for the migration lock.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { testDatabase } from '../helpers/db.js';
import { daemonEnv, DAEMON_MAIN } from '../helpers/daemon.js';

const ROOT = dirname(dirname(dirname(DAEMON_MAIN)));

interface Started {
  port: number;
  logs: Record<string, unknown>[];
  stop(): Promise<void>;
}

/** `npm start` in the checkout, in a process group of its own (npm, sh, node) to stop at once. */
function npmStart(env: NodeJS.ProcessEnv): Promise<Started> {
  const proc = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => proc.once('close', () => resolve()));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) process.kill(-proc.pid!, 'SIGTERM');
    await exited;
  };
  const logs: Record<string, unknown>[] = [];
  let raw = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => void stop().then(() => reject(new Error(`no 'listening' in 60 s:\n${raw}`))),
      60_000,
    );
    proc.stderr.on('data', (d: Buffer) => (raw += d.toString()));
    let buf = '';
    proc.stdout.on('data', (d: Buffer) => {
      raw += d.toString();
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          const rec = JSON.parse(line) as Record<string, unknown>;
          logs.push(rec);
          if (rec.msg === 'listening') {
            clearTimeout(timer);
            resolve({ port: rec.port as number, logs, stop });
          }
        } catch {
          /* npm's own output */
        }
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`npm start exited before listening:\n${raw}`));
    });
  });
}

test('npm start is `node dist/daemon/main.js`: no compile at start', (t) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  t.is(pkg.scripts.start, 'node dist/daemon/main.js');
});

test('two npm start at once in one checkout, on one fresh database: both come up and serve', async (t) => {
  t.timeout(120_000);
  const db = await testDatabase(t, { empty: true });
  const env = { ...daemonEnv(db.url, db.dir), IAM_ISSUER: 'http://127.0.0.1:0' };
  const both = await Promise.allSettled([npmStart(env), npmStart(env)]);
  t.teardown(() => Promise.all(both.flatMap((s) => (s.status === 'fulfilled' ? [s.value.stop()] : []))));
  t.deepEqual(
    both.map((s) => (s.status === 'fulfilled' ? 'up' : String(s.reason))),
    ['up', 'up'],
  );
  const [a, b] = both.map((s) => (s as PromiseFulfilledResult<Started>).value);
  t.not(a.port, b.port);
  for (const d of [a, b]) t.is((await fetch(`http://127.0.0.1:${d.port}/readyz`)).status, 200);
  // The database was migrated once: by one of them, the other found nothing left to apply.
  const applied = [a, b].map((d) => d.logs.some((l) => l.msg === 'migrations applied'));
  t.is(applied.filter(Boolean).length, 1, `migrations applied by: ${JSON.stringify(applied)}`);
});
