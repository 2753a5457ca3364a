/**
 * client_credentials benchmark (autocannon, 50 connections): our token endpoint issuing an
 * ES256 JWT access token to a client authenticating with HTTP Basic, against node-oidc-provider
 * 9 doing the same (bench/oidc-provider-cc-peer.ts), in the same run on the same machine,
 * alternating A B A B (the order flipped each round), as bench/introspect.ts does.
 *
 *   node dist/bench/client-credentials.js [--duration 10] [--rounds 5] [--warmup 3] [--connections 50]
 *                                         [--calibrate 5] [--database-url mysql://…]
 *
 * Results: bench/results/client-credentials-<sqlite|mariadb>.{json,md}: requests/s, P50/P95/P99,
 * the servers' CPU per request, and the ratios (the median of the rounds'). Every answer of the
 * probe is checked: a token must come back, so a broken setup cannot pass as a fast one.
 */
import { parseArgs } from 'node:util';
import { KeyService } from '../shared/services/keys.js';
import { startDaemon } from '../test/helpers/daemon.js';
import { createTestDatabase } from '../test/helpers/db.js';
import { openServices, activeTenant } from '../test/helpers/seed.js';
import { basicAuth, createApiClients } from './lib/api-clients.js';
import { bareHttpRps, REFERENCE_BARE_HTTP_RPS } from './lib/calibrate.js';
import { load, loadStamp, mdRow, type Run } from './lib/load.js';
import { startPeer } from './lib/peer.js';
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
const { app } = await createApiClients(directory, tenant.id, actor);
const keys = new KeyService(ds, config.secretKey, 86_400);
await keys.ensureActive();
const { alg } = await keys.signingKey();
await ds.destroy();
if (alg !== 'ES256') throw new Error(`the daemon signs with ${alg}; this bench compares ES256`);

const ourAuth = basicAuth(app);
const peerAuth = basicAuth({ id: 'bench-app', secret: 'bench-app-secret-0123456789abcdef' });
const body = 'grant_type=client_credentials&scope=api';
const jwt = (b: string) => /"access_token":"eyJ[^"]+\.[^"]+\.[^"]+"/.test(b);

const loadBefore = loadStamp();
const speedBefore = CALIBRATE_S > 0 ? await bareHttpRps(CALIBRATE_S) : undefined;
// e.g. BENCH_DAEMON_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' (bench/profile-summary.ts reads it)
const nodeArgs = (process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean);
const ours = await startDaemon(
  db.url,
  db.dir,
  { IAM_LOG_LEVEL: 'warn', IAM_ISSUER: 'https://iam.bench.test' },
  nodeArgs,
);
const peer = await startPeer({ script: 'oidc-provider-cc-peer.js' });
const oursUrl = `${ours.url}/token`;
const peerUrl = `${peer.url}/token`;
const run = (name: string, which: 'ours' | 'peer', duration = DURATION) =>
  load({
    name,
    url: which === 'ours' ? oursUrl : peerUrl,
    body,
    authorization: which === 'ours' ? ourAuth : peerAuth,
    pid: which === 'ours' ? ours.proc.pid! : peer.proc.pid!,
    connections: CONNECTIONS,
    duration,
    check: jwt,
  });

// Unrecorded first, so that neither is measured while its JIT compiler is still at work.
if (WARMUP_S > 0) {
  await run('warm-up, iam', 'ours', WARMUP_S);
  await run('warm-up, node-oidc-provider', 'peer', WARMUP_S);
}
const runs: Run[] = [];
const rounds: { ours: Run; peer: Run; ratio: number; cpuRatio: number }[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const a = () => run(`iam client_credentials, round ${i + 1}`, 'ours');
  const b = () => run(`node-oidc-provider, round ${i + 1}`, 'peer');
  let o: Run;
  let p: Run;
  if (i % 2 === 0) {
    o = await a();
    p = await b();
  } else {
    p = await b();
    o = await a();
  }
  runs.push(o, p);
  rounds.push({
    ours: o,
    peer: p,
    ratio: Math.round((o.requestsPerSec / p.requestsPerSec) * 100) / 100,
    cpuRatio: Math.round((p.cpuUsPerRequest / o.cpuUsPerRequest) * 100) / 100,
  });
}
await peer.stop();
await ours.stop();
await db.drop();
const speedAfter = CALIBRATE_S > 0 ? await bareHttpRps(CALIBRATE_S) : undefined;

const ratio = median(rounds.map((r) => r.ratio));
const cpuRatio = median(rounds.map((r) => r.cpuRatio));
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
  bench: 'client_credentials',
  database: kind,
  connections: CONNECTIONS,
  durationSeconds: DURATION,
  signingAlg: alg,
  rounds: rounds.map((r, i) => ({
    round: i + 1,
    iamRps: r.ours.requestsPerSec,
    oidcProviderRps: r.peer.requestsPerSec,
    ratio: r.ratio,
    iamCpuUsPerRequest: r.ours.cpuUsPerRequest,
    oidcProviderCpuUsPerRequest: r.peer.cpuUsPerRequest,
    cpuRatio: r.cpuRatio,
  })),
  runs,
  ratioToOidcProvider: ratio,
  cpuRatioToOidcProvider: cpuRatio,
  goal: { ratio: 1.5 },
  load: { before: loadBefore, after: loadStamp() },
  machine: { ...machine(), ...(speed ? { speed } : {}) },
};
const m = result.machine;
const runRows = runs.map((r) =>
  mdRow([r.name, r.requestsPerSec, r.p50, r.p95, r.p99, r.cpuUsPerRequest, r.errors, r.non2xx]),
);
const roundsHeader = mdRow([
  'Round',
  'iam req/s',
  'node-oidc-provider req/s',
  'ratio',
  'iam CPU µs/req',
  'node-oidc-provider CPU µs/req',
  'CPU ratio',
]);
const md = `# client_credentials benchmark (${kind})

${m.at}, ${m.cpus} cores, Node ${m.node}; autocannon with ${CONNECTIONS} connections for ${DURATION} s
per run, on the same machine as the servers. Each server is one process. Each request is
\`POST /token\` with \`grant_type=client_credentials&scope=api\` and HTTP Basic client
authentication, answered with an ES256-signed JWT access token by both: our daemon (SQLite)
and node-oidc-provider 9 (in-memory adapter, resource indicators with JWT access tokens).
The two run side by side and are loaded in turn, ${ROUNDS} rounds, the order flipped each round.

Load average (1 min) ${result.load.before.loadAverage1m} at the start (${result.load.before.at}),
${result.load.after.loadAverage1m} at the end (${result.load.after.at}): other work shares these cores.

${mdRow(['Run', 'requests/s', 'P50 ms', 'P95 ms', 'P99 ms', 'server CPU µs/request', 'errors', 'non-2xx'])}
|---|---|---|---|---|---|---|---|
${runRows.join('\n')}

${roundsHeader}
|---|---|---|---|---|---|---|
${result.rounds
  .map((r) =>
    mdRow([
      r.round,
      r.iamRps,
      r.oidcProviderRps,
      `${r.ratio}×`,
      r.iamCpuUsPerRequest,
      r.oidcProviderCpuUsPerRequest,
      `${r.cpuRatio}×`,
    ]),
  )
  .join('\n')}

Throughput is **${ratio}×** node-oidc-provider's (the median of the rounds' ratios; goal: at least
1.5×); per request, node-oidc-provider spends **${cpuRatio}×** the CPU our daemon does (the median of
the rounds' CPU ratios, the steadier figure on a shared machine).
${
  speed
    ? `
Machine speed: a bare node:http server answered ${speed.bareHttpRpsBefore} requests/s before the run and
${speed.bareHttpRpsAfter} after it, against about ${REFERENCE_BARE_HTTP_RPS} on the reference machine: this one
ran at ${speed.percentOfReference} % of it.
`
    : ''
}`;
console.log(md);
writeResults(`client-credentials-${kind}`, result, md);
process.exit(0);
