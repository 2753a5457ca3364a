/**
 * The Galera lane's cluster (test/lanes/galera.sh) as the tests under test/galera/ see it: the
 * nodes' URLs (IAM_GALERA_URLS), a control command for killing and restarting nodes
 * (IAM_GALERA_CTL), a fresh database per test file on the cluster, and direct connections to
 * one node for checks that must not go through a daemon.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ExecutionContext } from 'ava';
import mysql from 'mysql2/promise';
import { activeTenant, credentialsClient, openServices, TEST_API } from './seed.js';

/** The nodes' URLs (database `iam`), node 1 first. Outside the lane this is a mistake, not a skip. */
export function galeraUrls(): string[] {
  const raw = process.env.IAM_GALERA_URLS;
  if (!raw) throw new Error('IAM_GALERA_URLS is not set: run these tests with `npm run test:galera`');
  return raw.split(',');
}

/** Runs the lane's control command (`kill 3`, `start 3`, `status`, …) and returns its output. */
export function galeraCtl(...args: string[]): Promise<string> {
  const ctl = process.env.IAM_GALERA_CTL;
  if (!ctl) throw new Error('IAM_GALERA_CTL is not set: run these tests with `npm run test:galera`');
  return new Promise((resolve, reject) => {
    execFile(ctl, args, { timeout: 180_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`galera ctl ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve(stdout + stderr);
    });
  });
}

/** The same URL with another database name. */
const withDatabase = (url: string, name: string): string => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};

/**
 * One URL naming several nodes, `start` (0-based) first: the daemon connects to that node and
 * fails over to the others in the order given (shared/config.ts parses the list).
 */
export function failoverUrl(urls: string[], start: number): string {
  const order = [...urls.slice(start), ...urls.slice(0, start)].map((u) => new URL(u));
  const first = order[0];
  const hosts = order.map((u) => `${u.hostname}:${u.port}`).join(',');
  return `mysql://${first.username}:${first.password}@${hosts}${first.pathname}`;
}

export interface GaleraDb {
  name: string;
  /** The database on each node, node 1 first. */
  urls: string[];
  dir: string;
}

/** A fresh database on the cluster (created through node 1, replicated), dropped at teardown. */
export async function galeraDatabase(t: ExecutionContext): Promise<GaleraDb> {
  const nodes = galeraUrls();
  const name = `iamg_${randomBytes(6).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'iam-galera-test-'));
  await withNode(nodes[0], (c) => c.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`));
  t.teardown(async () => {
    // Any node that is up will do (a test may have left one down).
    for (const url of nodes) {
      try {
        await withNode(url, (c) => c.query(`DROP DATABASE IF EXISTS \`${name}\``));
        break;
      } catch {
        /* try the next node */
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return { name, urls: nodes.map((u) => withDatabase(u, name)), dir };
}

/** mysql2 options for one node's URL. */
export function connOpts(url: string): mysql.ConnectionOptions {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: u.pathname.length > 1 ? decodeURIComponent(u.pathname.slice(1)) : undefined,
    supportBigNumbers: true,
  };
}

/**
 * One connection to one node (no failover), closed after `fn`. Its reads are causal
 * (wsrep_sync_wait = 1): a check must see every write the cluster committed before it, not
 * only those this node has applied so far.
 */
export async function withNode<T>(url: string, fn: (c: mysql.Connection) => Promise<T>): Promise<T> {
  const c = await mysql.createConnection(connOpts(url));
  await c.query('SET SESSION wsrep_sync_wait = 1');
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Rows of one statement on one node. */
export async function nodeRows<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  return withNode(url, async (c) => (await c.query(sql, params))[0] as T[]);
}

/** How many connections each node has open to `database` (which node a daemon uses). */
export async function connectionsPerNode(urls: string[], database: string): Promise<number[]> {
  return Promise.all(
    urls.map(async (url) => {
      const [row] = await nodeRows<{ n: number }>(
        url,
        'SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()',
        [database],
      );
      return Number(row.n);
    }),
  );
}

/**
 * A fixed wait, only where no condition can be awaited: a job's simulated work, a clock to pass,
 * or a window in which something must NOT happen. To wait for something, use until() (poll.ts).
 */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A tenant with the API (a resource server) and a worker client whose tokens are for it. */
export async function seedApiAndWorker(db: GaleraDb, tenantName: string) {
  const { ds, directory, provisioning } = await openServices(db.urls[0], db.dir);
  try {
    const actor = { type: 'system' as const, id: 'test' };
    const tenant = await activeTenant(provisioning, { name: tenantName }, actor);
    const api = await credentialsClient(directory, tenant.id, TEST_API, actor);
    const worker = await credentialsClient(
      directory,
      tenant.id,
      { name: 'worker', scopes: ['api'], audiences: ['https://api.example.test'] },
      actor,
    );
    return { tenant, api, worker };
  } finally {
    await ds.destroy();
  }
}
