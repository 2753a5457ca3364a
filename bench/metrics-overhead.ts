/**
 * What recording metrics costs the introspection hot path (docs/metrics.md): the cache-hit
 * introspection of bench/introspect.ts, against two daemons on one database, one without
 * IAM_METRICS_PORT (nothing mounted, nothing recorded) and one with it (the HTTP middleware,
 * the cache and revocation counters), loaded in alternation round after round (A B, then B A)
 * so each round's ratio compares two runs seconds apart on this shared machine. The result is
 * the median of the rounds' ratios, with /metrics scraped during the "on" runs as Prometheus
 * would (every second here, far more often than a real scrape interval).
 *
 *   node dist/bench/metrics-overhead.js [--duration 8] [--rounds 6] [--warmup 3] [--connections 50]
 *
 * Results: bench/results/metrics-overhead.{json,md}.
 */
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { KeyService } from '../shared/services/keys.js';
import { freePort, startDaemon, type Daemon } from '../test/helpers/daemon.js';
import { createTestDatabase } from '../test/helpers/db.js';
import { activeTenant, clientCredentialsToken, openServices } from '../test/helpers/seed.js';
import { machine, summarize, writeResults } from './lib/stats.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
  },
});
const DURATION = Number(args.duration);
const ROUNDS = Number(args.rounds);
const WARMUP_S = Number(args.warmup);
const CONNECTIONS = Number(args.connections);

const loadAverage = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const loadBefore = loadAverage();

const db = await createTestDatabase();
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
await new KeyService(ds, config.secretKey, 86_400).ensureActive();
const rsAuth = 'Basic ' + Buffer.from(`${rs.client.client_id}:${rs.client_secret}`).toString('base64');

interface Run {
  name: string;
  requestsPerSec: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

async function load(name: string, url: string, body: string, duration = DURATION, scrape?: string): Promise<Run> {
  const probe = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: rsAuth },
    body,
  });
  const text = await probe.text();
  if (probe.status !== 200 || !text.includes('"active":true'))
    throw new Error(`${name}: probe ${probe.status} ${text}`);
  const times: number[] = [];
  // Prometheus scraping meanwhile (every second), so the scrape's own cost is in the figure.
  const scraper = scrape
    ? setInterval(() => {
        void fetch(scrape).then((r) => r.text());
      }, 1000)
    : undefined;
  const inst = autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration,
    body,
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: rsAuth },
  }) as unknown as import('node:events').EventEmitter;
  inst.on('response', (_c: unknown, _status: number, _bytes: number, ms: number) => {
    times.push(ms);
  });
  const r = await new Promise<autocannon.Result>((resolve) => inst.on('done', resolve));
  if (scraper) clearInterval(scraper);
  const lat = summarize(times);
  const run = {
    name,
    requestsPerSec: Math.round(r.requests.average),
    p50: lat.p50,
    p99: lat.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
  };
  console.log(`${name}: ${run.requestsPerSec} req/s, P50 ${run.p50} ms, P99 ${run.p99} ms, errors ${run.errors}`);
  return run;
}

const env = { IAM_LOG_LEVEL: 'warn', IAM_ISSUER: 'https://iam.bench.test' };
const off: Daemon = await startDaemon(db.url, db.dir, env);
// A port chosen here: at IAM_LOG_LEVEL=warn (no access log to slow either daemon) the
// 'metrics listening' line is not written.
const metricsPort = await freePort();
const on: Daemon = await startDaemon(db.url, db.dir, { ...env, IAM_METRICS_PORT: String(metricsPort) });
const scrapeUrl = `http://127.0.0.1:${metricsPort}/metrics`;
const token = await clientCredentialsToken(off.url, app.client.client_id, app.client_secret!);
const body = new URLSearchParams({ token }).toString();

if (WARMUP_S > 0) {
  await load('warm-up, metrics off', `${off.url}/introspect`, body, WARMUP_S);
  await load('warm-up, metrics on', `${on.url}/introspect`, body, WARMUP_S, scrapeUrl);
}
const rounds: { off: Run; on: Run; ratio: number }[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const runOff = () => load(`metrics off, round ${i + 1}`, `${off.url}/introspect`, body);
  const runOn = () => load(`metrics on, round ${i + 1}`, `${on.url}/introspect`, body, DURATION, scrapeUrl);
  let a: Run;
  let b: Run;
  if (i % 2 === 0) {
    a = await runOff();
    b = await runOn();
  } else {
    b = await runOn();
    a = await runOff();
  }
  rounds.push({ off: a, on: b, ratio: Math.round((b.requestsPerSec / a.requestsPerSec) * 1000) / 1000 });
}
const finalScrape = await (await fetch(scrapeUrl)).text();
const counted = /iam_http_requests_total\{method="POST",route="\/introspect",status="200"\} (\d+)/.exec(finalScrape);
await off.stop();
await on.stop();
await ds.destroy();
await db.drop();
const loadAfter = loadAverage();

const sorted = rounds.map((r) => r.ratio).sort((x, y) => x - y);
const m = sorted.length >> 1;
const median = sorted.length % 2 ? sorted[m] : Math.round(((sorted[m - 1] + sorted[m]) / 2) * 1000) / 1000;
const result = {
  bench: 'metrics-overhead',
  database: db.url.startsWith('mysql') ? 'mariadb' : 'sqlite',
  connections: CONNECTIONS,
  durationSeconds: DURATION,
  rounds: rounds.map((r, i) => ({
    round: i + 1,
    metricsOffRps: r.off.requestsPerSec,
    metricsOnRps: r.on.requestsPerSec,
    ratio: r.ratio,
  })),
  medianRatioOnToOff: median,
  introspectionsCountedByMetrics: counted ? Number(counted[1]) : null,
  loadAverage: { before: loadBefore, after: loadAfter },
  machine: machine(),
};
const md = [
  '# /metrics overhead on the introspection cache-hit path',
  '',
  `${result.machine.at}; ${result.machine.cpus} CPUs (${result.machine.cpuModel}), Node ${result.machine.node};` +
    ` ${CONNECTIONS} connections, ${DURATION} s per run, rounds alternating off/on.`,
  '',
  `Load before: \`${loadBefore}\``,
  '',
  `Load after: \`${loadAfter}\``,
  '',
  '| Round | metrics off (req/s) | metrics on (req/s) | on / off |',
  '|---|---|---|---|',
  ...result.rounds.map((r) => `| ${r.round} | ${r.metricsOffRps} | ${r.metricsOnRps} | ${r.ratio} |`),
  '',
  `Median on/off ratio: **${median}** (1.0 = no cost; the machine is shared, so single rounds swing).`,
  '',
  `Introspections the "on" daemon counted in iam_http_requests_total: ${result.introspectionsCountedByMetrics}.`,
].join('\n');
writeResults('metrics-overhead', result, md);
