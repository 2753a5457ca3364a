/**
 * Introspection benchmark (autocannon, 50 connections): our cache-hit path against
 * node-oidc-provider's introspection endpoint under the same load, in the same run on the
 * same machine, then our cache-miss path.
 *
 *   node dist/bench/introspect.js [--duration 10] [--rounds 5] [--warmup 3] [--connections 50] [--calibrate 5]
 *                                [--database-url mysql://…]
 *                                [--million]   # also fill the cache with 1,000,000 distinct tokens and record RSS
 *
 * This machine is shared and its speed swings from minute to minute, so the two servers run
 * side by side and are loaded in alternation, round after round (the order flipped each
 * round): each round's ratio compares two runs seconds apart, and the result is the median of
 * the rounds' ratios. Before and after, the machine's own speed is measured for `--calibrate`
 * seconds (bench/lib/calibrate.ts; 0 skips it).
 *
 * Results: bench/results/introspect-<sqlite|mariadb>[-million].{json,md}.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { KeyService } from '../shared/services/keys.js';
import { TokenService } from '../shared/services/tokens.js';
import { startDaemon, type Daemon } from '../test/helpers/daemon.js';
import { createTestDatabase } from '../test/helpers/db.js';
import { clientCredentialsToken, openServices, activeTenant } from '../test/helpers/seed.js';
import { formLoad, type Run } from './lib/autocannon-load.js';
import { PEER_RS, startPeer } from './lib/peer.js';
import { bareHttpRps, REFERENCE_BARE_HTTP_RPS } from './lib/calibrate.js';
import { machine, writeResults } from './lib/stats.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    calibrate: { type: 'string', default: '5' },
    'database-url': { type: 'string' },
    million: { type: 'boolean', default: false },
  },
});
const DURATION = Number(args.duration);
const ROUNDS = Number(args.rounds);
const WARMUP_S = Number(args.warmup);
const CONNECTIONS = Number(args.connections);
const CALIBRATE_S = Number(args.calibrate);

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

/** One autocannon run at this bench's connections and duration (bench/lib/autocannon-load.ts). */
const load = (
  name: string,
  url: string,
  body: string,
  authorization: string,
  check?: (b: string) => boolean,
  duration = DURATION,
): Promise<Run> => formLoad(name, url, body, authorization, { connections: CONNECTIONS, duration, check });

// One issuer for every daemon of the run, so tokens from one verify at the others.
const daemonEnv = { IAM_LOG_LEVEL: 'warn', IAM_ISSUER: 'https://iam.bench.test' };
const runs: Run[] = [];
const memory: Record<string, unknown> = {};
const speedBefore = CALIBRATE_S > 0 ? await bareHttpRps(CALIBRATE_S) : undefined;

// ---- both servers up, side by side ----
let ours: Daemon = await startDaemon(db.url, db.dir, daemonEnv);
const token = await clientCredentialsToken(ours.url, app.client.client_id, app.client_secret!);
const body = new URLSearchParams({ token }).toString();
const peer = await startPeer();
const peerAuth = 'Basic ' + Buffer.from(`${PEER_RS.id}:${PEER_RS.secret}`).toString('base64');
const peerTok = (await (
  await fetch(`${peer.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: peerAuth },
    body: 'grant_type=client_credentials&scope=api',
  })
).json()) as { access_token: string };
const peerBody = new URLSearchParams({ token: peerTok.access_token }).toString();
const active = (b: string) => b.includes('"active":true');

// ---- ours (cache hit: one token, cached after the first call) and the peer, alternating ----
// Unrecorded first, so that neither is measured while its JIT compiler is still at work.
if (WARMUP_S > 0) {
  await load('warm-up, iam', `${ours.url}/introspect`, body, rsAuth, active, WARMUP_S);
  await load('warm-up, node-oidc-provider', `${peer.url}/token/introspection`, peerBody, peerAuth, active, WARMUP_S);
}
const rounds: { hit: Run; peer: Run; ratio: number }[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const oursRun = () => load(`iam cache hit, round ${i + 1}`, `${ours.url}/introspect`, body, rsAuth, active);
  const peerRun = () =>
    load(`node-oidc-provider, round ${i + 1}`, `${peer.url}/token/introspection`, peerBody, peerAuth, active);
  let hit: Run;
  let other: Run;
  if (i % 2 === 0) {
    hit = await oursRun();
    other = await peerRun();
  } else {
    other = await peerRun();
    hit = await oursRun();
  }
  runs.push(hit, other);
  rounds.push({ hit, peer: other, ratio: Math.round((hit.requestsPerSec / other.requestsPerSec) * 100) / 100 });
}
memory.afterHitRunMiB = rssMiB(ours.proc.pid!);
await peer.stop();
await ours.stop();

// ---- ours, cache off: every request verifies the signature (the miss path) ----
ours = await startDaemon(db.url, db.dir, { ...daemonEnv, IAM_INTROSPECTION_CACHE_ENTRIES: '0' });
const missRun = await load('iam cache miss', `${ours.url}/introspect`, body, rsAuth, active);
runs.push(missRun);
await ours.stop();

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
        `  ${sent} distinct tokens cached, daemon RSS ${rssMiB(ours.proc.pid!, 'VmRSS')} MiB` +
          ` (peak ${rssMiB(ours.proc.pid!)} MiB)`,
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

const speedAfter = CALIBRATE_S > 0 ? await bareHttpRps(CALIBRATE_S) : undefined;
const median = (xs: number[]) => {
  const sorted = [...xs].sort((x, y) => x - y);
  const m = sorted.length >> 1;
  return sorted.length % 2 ? sorted[m] : Math.round(((sorted[m - 1] + sorted[m]) / 2) * 100) / 100;
};
const ratio = median(rounds.map((r) => r.ratio));
const mean = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
const speed =
  speedBefore !== undefined && speedAfter !== undefined
    ? {
        bareHttpRpsBefore: speedBefore,
        bareHttpRpsAfter: speedAfter,
        referenceBareHttpRps: REFERENCE_BARE_HTTP_RPS,
        percentOfReference: Math.round(((speedBefore + speedAfter) / 2 / REFERENCE_BARE_HTTP_RPS) * 100),
      }
    : undefined;
const result = {
  bench: 'introspection',
  database: kind,
  connections: CONNECTIONS,
  durationSeconds: DURATION,
  rounds: rounds.map((r, i) => ({
    round: i + 1,
    cacheHitRps: r.hit.requestsPerSec,
    oidcProviderRps: r.peer.requestsPerSec,
    ratio: r.ratio,
  })),
  runs,
  ratioCacheHitToOidcProvider: ratio,
  meanCacheHitRps: mean(rounds.map((r) => r.hit.requestsPerSec)),
  meanOidcProviderRps: mean(rounds.map((r) => r.peer.requestsPerSec)),
  cacheMissRps: missRun.requestsPerSec,
  memory,
  goal: { ratio: 2, p99Ms: 10 },
  machine: { ...machine(), ...(speed ? { speed } : {}) },
};
const m = result.machine;
const row = (r: Run) =>
  `| ${r.name} | ${r.requestsPerSec} | ${r.p50} | ${r.p95} | ${r.p99} | ${r.errors} | ${r.non2xx} |`;
const million = memory.million as { rssAfterMiB: number; peakRssMiB: number; rssBeforeMiB: number } | undefined;
const md = `# Introspection benchmark (${kind})${args.million ? ' with a million distinct cached tokens' : ''}

${m.at}, ${m.cpus} cores, Node ${m.node}; autocannon with ${CONNECTIONS} connections for ${DURATION} s
per run, on the same machine as the servers. Each server is one process. Our daemon and
node-oidc-provider run side by side and are loaded in turn, ${ROUNDS} rounds (the order flipped
each round), so each round's ratio compares runs seconds apart on a machine whose speed drifts.

| Run | requests/s | P50 ms | P95 ms | P99 ms | errors | non-2xx |
|---|---|---|---|---|---|---|
${runs.map(row).join('\n')}

| Round | iam cache hit req/s | node-oidc-provider req/s | ratio |
|---|---|---|---|
${result.rounds.map((r) => `| ${r.round} | ${r.cacheHitRps} | ${r.oidcProviderRps} | ${r.ratio}× |`).join('\n')}

Cache-hit throughput is **${ratio}×** node-oidc-provider's (the median of the rounds' ratios;
goal: at least 2×; P99 under 10 ms). The revocation check runs on every request, cache hits included.
${
  speed
    ? `
Machine speed: a bare node:http server answered ${speed.bareHttpRpsBefore} requests/s before the run and
${speed.bareHttpRpsAfter} after it (autocannon, 50 connections), against about ${REFERENCE_BARE_HTTP_RPS} on the
reference machine of this kind: this one ran at ${speed.percentOfReference} % of it. The absolute figures scale
with that; the same-run ratio is what compares the two servers.
`
    : ''
}${
  million
    ? `\nA million distinct cached tokens: daemon RSS ${million.rssAfterMiB} MiB with all of them cached,` +
      ` peak ${million.peakRssMiB} MiB (before: ${million.rssBeforeMiB} MiB).\n`
    : ''
}
node-oidc-provider 9 runs with its in-memory adapter and opaque tokens (it does not introspect JWTs).
`;
console.log(md);
writeResults(`introspect-${kind}${args.million ? '-million' : ''}`, result, md);
process.exit(0);
