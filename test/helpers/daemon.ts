/**
 * Starts the real daemon (`node dist/daemon/main.js`) as a child process on an ephemeral
 * port, against a given database, and reads its JSON log lines.
 *
 * The daemon binds port 0 itself and reports the port the system gave it in its 'listening'
 * line; its default issuer here, `http://127.0.0.1:0`, becomes `http://127.0.0.1:<that port>`
 * (daemon/main.ts). No port is chosen in advance, so none can be taken by another process
 * between the choice and the bind. Several daemons that are one service start the first, then
 * pass `IAM_ISSUER: first.url` to the others; a daemon restarted "in place" gets
 * `IAM_PORT: String(d.port)` of the one it replaces.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { TEST_SECRET_KEY } from './db.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const DAEMON_MAIN = join(ROOT, 'dist', 'daemon', 'main.js');
export const CLI_BIN = join(ROOT, 'bin', 'iam.js');

export interface Daemon {
  url: string;
  port: number;
  proc: ChildProcess;
  /** Parsed JSON log lines so far. */
  logs: Record<string, unknown>[];
  /** Raw stdout+stderr. */
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function daemonEnv(databaseUrl: string, dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    IAM_PORT: '0',
    IAM_HOST: '127.0.0.1',
    IAM_DATABASE_URL: databaseUrl,
    IAM_DATA_DIR: dataDir,
    IAM_SECRET_KEY: TEST_SECRET_KEY,
    IAM_LOG_LEVEL: 'info',
    ...extra,
  };
}

/**
 * A port nothing listened on a moment ago: for a peer that must refuse connections (an SMTP
 * relay that is down, a daemon that is not running). Never for a daemon to listen on: that is
 * port 0 (startDaemon), since another process may take this one before it is bound.
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A daemon whose issuer is `http://localhost:<port>`, for passkeys: browsers allow no IP address
 * as a WebAuthn RP ID (docs/passkeys.md). The sign-in budgets of 127.0.0.1 are widened, since a
 * test signs in many times from it.
 */
export async function startLocalhostDaemon(
  databaseUrl: string,
  dataDir: string,
  extra: Record<string, string> = {},
): Promise<{ d: Daemon; issuer: string }> {
  const d = await startDaemon(databaseUrl, dataDir, {
    IAM_PORT: '0',
    IAM_ISSUER: 'http://localhost:0',
    IAM_THROTTLE_IP_FORM_POSTS: '100000',
    IAM_THROTTLE_IP_VERIFIES: '100000',
    ...extra,
  });
  return { d, issuer: `http://localhost:${d.port}` };
}

export async function startDaemon(
  databaseUrl: string,
  dataDir: string,
  extra: Record<string, string> = {},
  execArgv: string[] = [],
  /** How long it may take to listen (a first start migrates; on a Galera cluster that is slow). */
  opts: { startTimeoutMs?: number } = {},
): Promise<Daemon> {
  const startTimeoutMs = opts.startTimeoutMs ?? 30_000;
  const p = extra.IAM_PORT ?? '0';
  const env = daemonEnv(databaseUrl, dataDir, { IAM_PORT: p, IAM_ISSUER: `http://127.0.0.1:${p}`, ...extra });
  const proc = spawn(process.execPath, [...execArgv, DAEMON_MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: Record<string, unknown>[] = [];
  let raw = '';
  let buf = '';
  // 'exit' can come before the last lines written to stdout have been read; 'close' always comes
  // after it, once the pipes are drained, so the exit code is handed out then. The wait is
  // bounded: a worker process orphaned by a SIGKILL would keep the pipe open.
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => {
      const bound = setTimeout(() => resolve(code), 2_000);
      proc.once('close', () => {
        clearTimeout(bound);
        resolve(code);
      });
    }),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      clearInterval(poll);
      // Not handed to the test, so nothing else would stop it.
      proc.kill('SIGKILL');
      reject(new Error(`daemon did not start in ${startTimeoutMs / 1000} s:\n${raw}`));
    }, startTimeoutMs);
    const onLine = (line: string) => {
      try {
        const rec = JSON.parse(line) as Record<string, unknown>;
        logs.push(rec);
        if (rec.msg === 'listening' && typeof rec.port === 'number') {
          clearTimeout(timer);
          clearInterval(poll);
          resolve(rec.port);
        }
      } catch {
        /* not JSON */
      }
    };
    proc.stdout.on('data', (d: Buffer) => {
      raw += d.toString();
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        onLine(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    });
    proc.stderr.on('data', (d: Buffer) => {
      raw += d.toString();
    });
    // A fixed port at a quiet log level prints no 'listening' line (port 0 always does):
    // the port is known, so readiness will do.
    const poll = setInterval(() => {
      if (p === '0') return;
      fetch(`http://127.0.0.1:${p}/readyz`).then(
        (r) => {
          if (r.status === 200) {
            clearInterval(poll);
            clearTimeout(timer);
            resolve(Number(p));
          }
        },
        () => {
          /* not up yet */
        },
      );
    }, 100);
    void exited.then(() => clearInterval(poll));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`daemon exited with ${code} before listening:\n${raw}`));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    proc,
    logs,
    output: () => raw,
    stop: async (signal = 'SIGTERM') => {
      if (proc.exitCode !== null) return proc.exitCode;
      proc.kill(signal);
      return exited;
    },
  };
}

/** One request on a connection of its own, so the supervisor hands each to the next worker. */
export function healthz(url: string): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, path: '/healthz', headers: { connection: 'close' }, agent: false },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.setTimeout(5_000, () => req.destroy(new Error('no answer in 5 s')));
    req.end();
  });
}
