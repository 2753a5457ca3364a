/**
 * Runs one of the example apps in examples/ as a newcomer would, `node examples/<name>/server.mjs`
 * with its environment variables, and browses it like a browser: per-host cookies, redirects
 * followed by hand so each hop can be checked.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CookieJar } from './oauth.js';

/** The repository (this file runs from dist/test/helpers/). */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export interface Example {
  proc: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

/** Starts examples/<name>/server.mjs and resolves once it prints `ready` (its listening line). */
export async function startExample(name: string, env: Record<string, string>, ready: RegExp): Promise<Example> {
  const proc = spawn(process.execPath, [join(ROOT, 'examples', name, 'server.mjs')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<void>((resolve) => proc.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${out}`)), 20_000);
    const onData = (b: Buffer) => {
      out += b.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.once('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}:\n${out}`));
    });
  });
  return {
    proc,
    output: () => out,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** A browser's cookie store in the small: one jar per host:port, as the tests need no more. */
export class Browser {
  private readonly jars = new Map<string, CookieJar>();
  jar(url: string): CookieJar {
    const host = new URL(url).host;
    if (!this.jars.has(host)) this.jars.set(host, new CookieJar());
    return this.jars.get(host)!;
  }
  /** One request, no redirect followed; cookies sent and kept. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const jar = this.jar(url);
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: jar.header() },
    });
    jar.take(res);
    return res;
  }
  /** Follows redirects from `url` until a page (a non-3xx answer); returns it and its URL. */
  async follow(url: string, init: RequestInit = {}, hops: string[] = []): Promise<{ res: Response; url: string }> {
    let res = await this.fetch(url, init);
    hops.push(url);
    while (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url).toString();
      hops.push(url);
      if (hops.length > 20) throw new Error(`redirect loop: ${hops.join(' → ')}`);
      res = await this.fetch(url);
    }
    return { res, url };
  }
}
