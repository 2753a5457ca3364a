/** Runs the real `iam` executable as an operator would. */
import { spawn } from 'node:child_process';
import { CLI_BIN } from './daemon.js';
import { TEST_SECRET_KEY, type TestDb } from './db.js';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const CLI_GUARD_MS = 150_000;

export const SCHEMA_MESSAGE = 'the database schema is not current: run `iam db migrate`';

/** `stdin`: text written to the command's stdin, which is then closed (default: no stdin at all). */
export function iam(
  db: Pick<TestDb, 'url' | 'dir'>,
  args: string[],
  extraEnv: Record<string, string> = {},
  opts: { stdin?: string } = {},
): Promise<Run> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    IAM_DATABASE_URL: db.url,
    IAM_SECRET_KEY: TEST_SECRET_KEY,
    IAM_DATA_DIR: db.dir,
    ...extraEnv,
  };
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [CLI_BIN, ...args], {
      env,
      stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (opts.stdin !== undefined) proc.stdin!.end(opts.stdin);
    let stdout = '';
    let stderr = '';
    // A guard against a command that hangs, not a speed check: it stays below ava's 3-minute
    // inactivity timeout so the failure names the command. On a loaded machine running the
    // whole MariaDB lane, a fresh `db migrate` (some 300 DDL statements, each one waiting on
    // the server's dictionary lock behind other tests' CREATE/DROP DATABASE) took over 60 s.
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`iam ${args.join(' ')} did not finish in ${CLI_GUARD_MS / 1000} s\n${stdout}\n${stderr}`));
    }, CLI_GUARD_MS);
    proc.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    proc.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    proc.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    proc.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs a command that must succeed, returning its parsed --json output. */
export async function iamJson<T = any>(db: Pick<TestDb, 'url' | 'dir'>, args: string[]): Promise<T> {
  const r = await iam(db, [...args, '--json']);
  if (r.code !== 0) throw new Error(`iam ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}
