/**
 * Introspection benchmark (autocannon, 50 connections): our cache-hit and cache-miss paths,
 * and node-oidc-provider's introspection endpoint under the same load, in the same run on the
 * same machine.
 *
 *   node dist/bench/introspect.js [--duration 10] [--connections 50] [--database-url mysql://…]
 *                                [--million]   # also fill the cache with 1,000,000 distinct tokens and record RSS
 *
 * Results: bench/results/introspect-<sqlite|mariadb>.{json,md}.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { KeyService } from '../shared/services/keys.js';
import { TokenService } from '../shared/services/tokens.js';
import { startDaemon, freePort, type Daemon } from '../test/helpers/daemon.js';
import { createTestDatabase } from '../test/helpers/db.js';
import { clientCredentialsToken, openServices, activeTenant } from '../test/helpers/seed.js';
import { machine, summarize, writeResults } from './lib/stats.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    'database-url': { type: 'string' },
    million: { type: 'boolean', default: false },
  },
});
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);

if (args['database-url']) process.env.IAM_TEST_DATABASE_URL = args['database-url'];
const db = await createTestDatabase();
const kind = db.url.startsWith('mysql') ? 'mariadb' : 'sqlite';
const { ds, directory, config, provisioning } = await openServices(db.url, db.dir);
const actor = { type: 'system' as const, id: 'bench' };
const tenant = await activeTenant(provisioning, { name: 'Bench' }, actor);
const rs = await directory.createClient(
  tenant.id,
  {
    name: 'Bench API',
    grant_types: ['client_credentials'],
    scopes: ['api'],
    resource_identifiers: ['https://api.bench.test'],
  },
  actor,
);
const app = await directory.createClient(
  tenant.id,
  { name: 'Bench app', grant_types: ['client_credentials'], scopes: ['api'], audiences: ['https://api.bench.test'] },
  actor,
);
const keys = new KeyService(ds, config.secretKey, 86_400);
await keys.ensureActive();

const rsAuth = 'Basic ' + Buffer.from(`${rs.client.client_id}:${rs.client_secret}`).toString('base64');

/** Peak (VmHWM) or current (VmRSS) resident memory of a process, MiB. */
function rssMiB(pid: number, field: 'VmHWM' | 'VmRSS' = 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

interface Run {
  name: string;
  requestsPerSec: number;
  p50: number;
  p95: number;
  p99: number;
  errors: number;
  non2xx: number;
  total: number;
}

async function load(
  name: string,
  url: string,
  body: string,
  authorization: string,
  check?: (b: string) => boolean,
): Promise<Run> {
  // Validate once outside the load, so a broken setup cannot pass as a fast one.
  const probe = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
    body,
  });
  const text = await probe.text();
  if (probe.status !== 200 || (check && !check(text))) throw new Error(`${name}: probe failed ${probe.status} ${text}`);
  // Every response time is kept, so P95 is computed exactly (autocannon reports P90 and P97.5).
  const times: number[] = [];
  const inst = autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration: DURATION,
    body,
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
  }) as unknown as import('node:events').EventEmitter;
  inst.on('response', (_c: unknown, _status: number, _bytes: number, ms: number) => {
    times.push(ms);
  });
  const r = await new Promise<autocannon.Result>((resolve) => inst.on('done', resolve));
  const lat = summarize(times);
  const run = {
    name,
    requestsPerSec: Math.round(r.requests.average),
    p50: lat.p50,
    p95: lat.p95,
    p99: lat.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
    total: r.requests.total,
  };
  console.log(
    `${name}: ${run.requestsPerSec} req/s, P50 ${run.p50} ms, P99 ${run.p99} ms, errors ${run.errors}, non-2xx ${run.non2xx}`,
  );
  return run;
}

// One issuer for every daemon of the run, so tokens from one verify at the others.
const daemonEnv = { IAM_LOG_LEVEL: 'warn', IAM_ISSUER: 'https://iam.bench.test' };
const runs: Run[] = [];
const memory: Record<string, unknown> = {};

// ---- ours, cache on (hit path: one token, cached after the first call) ----
let ours: Daemon = await startDaemon(db.url, db.dir, daemonEnv);
const token = await clientCredentialsToken(ours.url, app.client.client_id, app.client_secret!);
const body = new URLSearchParams({ token }).toString();
runs.push(await load('iam cache hit', `${ours.url}/introspect`, body, rsAuth, (b) => b.includes('"active":true')));
memory.afterHitRunMiB = rssMiB(ours.proc.pid!);
await ours.stop();

// ---- ours, cache off: every request verifies the signature (the miss path) ----
ours = await startDaemon(db.url, db.dir, { ...daemonEnv, IAM_INTROSPECTION_CACHE_ENTRIES: '0' });
runs.push(await load('iam cache miss', `${ours.url}/introspect`, body, rsAuth, (b) => b.includes('"active":true')));
await ours.stop();

// ---- node-oidc-provider, same load ----
const peerPort = await freePort();
const peer = spawn(process.execPath, [join(import.meta.dirname, 'oidc-provider-peer.js'), String(peerPort)], {
  stdio: ['ignore', 'pipe', 'pipe'],
});
await new Promise<void>((resolve, reject) => {
  peer.stdout.on('data', (d: Buffer) => {
    if (d.toString().includes('ready')) resolve();
  });
  peer.on('exit', (c) => reject(new Error(`oidc-provider exited ${c}`)));
});
const peerAuth = 'Basic ' + Buffer.from('bench-rs:bench-rs-secret-0123456789abcdef').toString('base64');
const peerTok = (await (
  await fetch(`http://127.0.0.1:${peerPort}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: peerAuth },
    body: 'grant_type=client_credentials&scope=api',
  })
).json()) as { access_token: string };
runs.push(
  await load(
    'node-oidc-provider',
    `http://127.0.0.1:${peerPort}/token/introspection`,
    new URLSearchParams({ token: peerTok.access_token }).toString(),
    peerAuth,
    (b) => b.includes('"active":true'),
  ),
);
peer.kill('SIGTERM');

// ---- a million distinct cached tokens: memory stays bounded ----
if (args.million) {
  const N = 1_000_000;
  ours = await startDaemon(db.url, db.dir, { ...daemonEnv, IAM_INTROSPECTION_CACHE_ENTRIES: String(N) });
  const tokens = new TokenService(daemonEnv.IAM_ISSUER, keys);
  const before = rssMiB(ours.proc.pid!);
  let sent = 0;
  const started = Date.now();
  const batch = 500;
  const agentUrl = `${ours.url}/introspect`;
  while (sent < N) {
    const toks = await Promise.all(
      Array.from({ length: batch }, () =>
        tokens.issueAccessToken({
          sub: app.client.client_id,
          clientId: app.client.client_id,
          tenantId: tenant.id,
          scope: ['api'],
          audience: ['https://api.bench.test'],
          ttlSeconds: 3600,
        }),
      ),
    );
    await Promise.all(
      toks.map(async (t) => {
        const r = await fetch(agentUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: rsAuth },
          body: `token=${t.token}`,
        });
        if (!(await r.text()).includes('"active":true')) throw new Error('a fresh token was not active');
      }),
    );
    sent += batch;
    if (sent % 100_000 === 0)
      console.log(
        `  ${sent} distinct tokens cached, daemon RSS ${rssMiB(ours.proc.pid!, 'VmRSS')} MiB (peak ${rssMiB(ours.proc.pid!)} MiB)`,
      );
  }
  // Every token is still cached: one more pass over a sample must be all cache hits.
  memory.million = {
    tokens: N,
    rssBeforeMiB: before,
    rssAfterMiB: rssMiB(ours.proc.pid!, 'VmRSS'),
    peakRssMiB: rssMiB(ours.proc.pid!),
    seconds: Math.round((Date.now() - started) / 1000),
  };
  await ours.stop();
}

await ds.destroy();
await db.drop();

const [hit, miss, peerRun] = runs as [Run, Run, Run];
const ratio = Math.round((hit.requestsPerSec / peerRun.requestsPerSec) * 100) / 100;
const result = {
  bench: 'introspection',
  database: kind,
  connections: CONNECTIONS,
  durationSeconds: DURATION,
  runs,
  ratioCacheHitToOidcProvider: ratio,
  memory,
  goal: { ratio: 2, p99Ms: 10 },
  machine: machine(),
};
const md = `# Introspection benchmark (${kind})

${result.machine.at}, ${result.machine.cpus} cores, Node ${result.machine.node}; autocannon with ${CONNECTIONS} connections for ${DURATION} s
per run, on the same machine as the servers. Each server is one process.

| Run | requests/s | P50 ms | P95 ms | P99 ms | errors | non-2xx |
|---|---|---|---|---|---|---|
${runs.map((r) => `| ${r.name} | ${r.requestsPerSec} | ${r.p50} | ${r.p95} | ${r.p99} | ${r.errors} | ${r.non2xx} |`).join('\n')}

Cache-hit throughput is **${ratio}×** node-oidc-provider's (goal: at least 2×; P99 under 10 ms).
The revocation check runs on every request, cache hits included.
${memory.million ? `\nA million distinct cached tokens: daemon RSS ${(memory.million as { rssAfterMiB: number }).rssAfterMiB} MiB with all of them cached, peak ${(memory.million as { peakRssMiB: number }).peakRssMiB} MiB (before: ${(memory.million as { rssBeforeMiB: number }).rssBeforeMiB} MiB).\n` : ''}
node-oidc-provider 9 runs with its in-memory adapter and opaque tokens (it does not introspect JWTs).
`;
console.log(md);
writeResults(`introspect-${kind}`, result, md);
process.exit(0);
