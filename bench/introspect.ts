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
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KeyService } from '../shared/services/keys.js';
import { TokenService } from '../shared/services/tokens.js';
import { startDaemon, type Daemon } from '../test/helpers/daemon.js';
import { createTestDatabase } from '../test/helpers/db.js';
import { clientCredentialsToken, openServices, activeTenant } from '../test/helpers/seed.js';
import { PEER_RS, startPeer } from './lib/peer.js';
import { basicAuth, createApiClients } from './lib/api-clients.js';
import { bareHttpRps, REFERENCE_BARE_HTTP_RPS } from './lib/calibrate.js';
import { load, loadStamp, mdRow, type Run } from './lib/load.js';
import { rssMiB } from './lib/proc.js';
import { median } from './lib/stats.js';
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
const { resourceServer: rs, app } = await createApiClients(directory, tenant.id, actor);
const keys = new KeyService(ds, config.secretKey, 86_400);
await keys.ensureActive();

const rsAuth = basicAuth(rs);

const loadOf = (name: string, url: string, body: string, authorization: string, pid: number, duration = DURATION) =>
  load({ name, url, body, authorization, pid, connections: CONNECTIONS, duration, check: active });
const active = (b: string) => b.includes('"active":true');

// One issuer for every daemon of the run, so tokens from one verify at the others.
const daemonEnv = { IAM_LOG_LEVEL: 'warn', IAM_ISSUER: 'https://iam.bench.test' };
const runs: Run[] = [];
const memory: Record<string, unknown> = {};
const loadBefore = loadStamp();
const speedBefore = CALIBRATE_S > 0 ? await bareHttpRps(CALIBRATE_S) : undefined;

// ---- both servers up, side by side ----
// e.g. BENCH_DAEMON_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' (bench/profile-summary.ts reads it)
const nodeArgs = (process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean);
let ours: Daemon = await startDaemon(db.url, db.dir, daemonEnv, nodeArgs);
const token = await clientCredentialsToken(ours.url, app.id, app.secret);
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

// ---- ours (cache hit: one token, cached after the first call) and the peer, alternating ----
// Unrecorded first, so that neither is measured while its JIT compiler is still at work.
if (WARMUP_S > 0) {
  await loadOf('warm-up, iam', `${ours.url}/introspect`, body, rsAuth, ours.proc.pid!, WARMUP_S);
  await loadOf(
    'warm-up, node-oidc-provider',
    `${peer.url}/token/introspection`,
    peerBody,
    peerAuth,
    peer.proc.pid!,
    WARMUP_S,
  );
}
const rounds: { hit: Run; peer: Run; ratio: number; cpuRatio: number }[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const oursRun = () => loadOf(`iam cache hit, round ${i + 1}`, `${ours.url}/introspect`, body, rsAuth, ours.proc.pid!);
  const peerRun = () =>
    loadOf(`node-oidc-provider, round ${i + 1}`, `${peer.url}/token/introspection`, peerBody, peerAuth, peer.proc.pid!);
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
  rounds.push({
    hit,
    peer: other,
    ratio: Math.round((hit.requestsPerSec / other.requestsPerSec) * 100) / 100,
    cpuRatio: Math.round((other.cpuUsPerRequest / hit.cpuUsPerRequest) * 100) / 100,
  });
}
memory.afterHitRunMiB = rssMiB(ours.proc.pid!, 'VmHWM');
await peer.stop();
await ours.stop();

// ---- ours, cache off: every request verifies the signature (the miss path) ----
ours = await startDaemon(db.url, db.dir, { ...daemonEnv, IAM_INTROSPECTION_CACHE_ENTRIES: '0' });
const missRun = await loadOf('iam cache miss', `${ours.url}/introspect`, body, rsAuth, ours.proc.pid!);
runs.push(missRun);
await ours.stop();

// ---- a million distinct cached tokens: memory stays bounded ----
if (args.million) {
  const N = 1_000_000;
  ours = await startDaemon(db.url, db.dir, { ...daemonEnv, IAM_INTROSPECTION_CACHE_ENTRIES: String(N) });
  const tokens = new TokenService(daemonEnv.IAM_ISSUER, keys);
  const before = rssMiB(ours.proc.pid!, 'VmHWM');
  let sent = 0;
  const started = Date.now();
  const batch = 500;
  const agentUrl = `${ours.url}/introspect`;
  while (sent < N) {
    const toks = await Promise.all(
      Array.from({ length: batch }, () =>
        tokens.issueAccessToken({
          sub: app.id,
          clientId: app.id,
          tenantId: tenant.id,
          scope: ['api'],
          audience: ['https://api.bench.test'],
          ttlSeconds: 3600,
        }),
      ),
    );
    await Promise.all(
      toks.map(async (t) => {
        const send = () =>
          fetch(agentUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: rsAuth },
            body: `token=${t.token}`,
          });
        // On a loaded machine this process's timers run late, and a pooled keep-alive socket
        // the daemon closed after its 5 s idle timeout can be picked before the client has
        // noticed ("other side closed"): introspection is read-only, so it is sent again once.
        const r = await send().catch(send);
        if (!(await r.text()).includes('"active":true')) throw new Error('a fresh token was not active');
      }),
    );
    sent += batch;
    if (sent % 100_000 === 0)
      console.log(
        `  ${sent} distinct tokens cached, daemon RSS ${rssMiB(ours.proc.pid!, 'VmRSS')} MiB` +
          ` (peak ${rssMiB(ours.proc.pid!, 'VmHWM')} MiB)`,
      );
  }
  // Every token is still cached: one more pass over a sample must be all cache hits.
  memory.million = {
    tokens: N,
    rssBeforeMiB: before,
    rssAfterMiB: rssMiB(ours.proc.pid!, 'VmRSS'),
    peakRssMiB: rssMiB(ours.proc.pid!, 'VmHWM'),
    seconds: Math.round((Date.now() - started) / 1000),
  };
  await ours.stop();
  // The cache alone, in a process of its own: heap used after a full GC, and RSS, per entry.
  memory.cacheOnly = JSON.parse(
    execFileSync(
      process.execPath,
      ['--expose-gc', join(import.meta.dirname, 'introspect-cache-memory.js'), '--entries', String(N), '--json'],
      { encoding: 'utf8' },
    ),
  ) as { entries: number; heapBytesPerEntry: number; rssBytesPerEntry: number };
}

await ds.destroy();
await db.drop();

const speedAfter = CALIBRATE_S > 0 ? await bareHttpRps(CALIBRATE_S) : undefined;
const ratio = median(rounds.map((r) => r.ratio));
const cpuRatio = median(rounds.map((r) => r.cpuRatio));
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
    cpuUsPerRequest: r.hit.cpuUsPerRequest,
    oidcProviderCpuUsPerRequest: r.peer.cpuUsPerRequest,
    cpuRatio: r.cpuRatio,
  })),
  runs,
  ratioCacheHitToOidcProvider: ratio,
  cpuRatioCacheHitToOidcProvider: cpuRatio,
  load: { before: loadBefore, after: loadStamp() },
  meanCacheHitRps: mean(rounds.map((r) => r.hit.requestsPerSec)),
  meanOidcProviderRps: mean(rounds.map((r) => r.peer.requestsPerSec)),
  cacheMissRps: missRun.requestsPerSec,
  memory,
  goal: { ratio: 2, p99Ms: 10 },
  machine: { ...machine(), ...(speed ? { speed } : {}) },
};
const m = result.machine;
const row = (r: Run) => mdRow([r.name, r.requestsPerSec, r.p50, r.p95, r.p99, r.cpuUsPerRequest, r.errors, r.non2xx]);
const roundsHeader = mdRow([
  'Round',
  'iam cache hit req/s',
  'node-oidc-provider req/s',
  'ratio',
  'iam CPU µs/req',
  'node-oidc-provider CPU µs/req',
  'CPU ratio',
]);
const million = memory.million as { rssAfterMiB: number; peakRssMiB: number; rssBeforeMiB: number } | undefined;
const cacheOnly = memory.cacheOnly as { heapBytesPerEntry: number; rssBytesPerEntry: number } | undefined;
const md = `# Introspection benchmark (${kind})${args.million ? ' with a million distinct cached tokens' : ''}

${m.at}, ${m.cpus} cores, Node ${m.node}; autocannon with ${CONNECTIONS} connections for ${DURATION} s
per run, on the same machine as the servers. Each server is one process. Our daemon and
node-oidc-provider run side by side and are loaded in turn, ${ROUNDS} rounds (the order flipped
each round), so each round's ratio compares runs seconds apart on a machine whose speed drifts.

Load average (1 min) ${result.load.before.loadAverage1m} at the start (${result.load.before.at}),
${result.load.after.loadAverage1m} at the end (${result.load.after.at}): other work shares these cores.

| Run | requests/s | P50 ms | P95 ms | P99 ms | server CPU µs/request | errors | non-2xx |
|---|---|---|---|---|---|---|---|
${runs.map(row).join('\n')}

${roundsHeader}
|---|---|---|---|---|---|---|
${result.rounds
  .map((r) =>
    mdRow([
      r.round,
      r.cacheHitRps,
      r.oidcProviderRps,
      `${r.ratio}×`,
      r.cpuUsPerRequest,
      r.oidcProviderCpuUsPerRequest,
      `${r.cpuRatio}×`,
    ]),
  )
  .join('\n')}

Cache-hit throughput is **${ratio}×** node-oidc-provider's (the median of the rounds' ratios;
goal: at least 2×; P99 under 10 ms); per request, node-oidc-provider spends **${cpuRatio}×** the
CPU our daemon does (the median of the rounds' CPU ratios, the steadier figure on a shared
machine). The revocation check runs on every request, cache hits included.
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
      ` peak ${million.peakRssMiB} MiB (before: ${million.rssBeforeMiB} MiB): about` +
      ` ${Math.round(((million.rssAfterMiB - million.rssBeforeMiB) * 2 ** 20) / 1_000_000)} bytes of RSS per entry.\n`
    : ''
}${
  cacheOnly
    ? `\nThe cache alone (bench/introspect-cache-memory.ts, a million entries in a process of its own):` +
      ` **${cacheOnly.heapBytesPerEntry} bytes of heap per entry** after a full GC,` +
      ` ${cacheOnly.rssBytesPerEntry} bytes of RSS per entry (goal: at most 300 bytes).\n`
    : ''
}
node-oidc-provider 9 runs with its in-memory adapter and opaque tokens (it does not introspect JWTs).
`;
console.log(md);
writeResults(`introspect-${kind}${args.million ? '-million' : ''}`, result, md);
process.exit(0);
