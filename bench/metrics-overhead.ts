/**
 * What recording metrics costs the introspection hot path (docs/metrics.md): the cache-hit
 * introspection of bench/introspect.ts, against two daemons on one database, one without
 * IAM_METRICS_PORT (nothing mounted, nothing recorded) and one with it (the HTTP middleware,
 * the cache and revocation counters), loaded in alternation round after round (A B, then B A)
 * so each round's ratio compares two runs seconds apart on this shared machine. The result is
 * the median of the rounds' ratios, with /metrics scraped during the "on" runs as Prometheus
 * would (every `--scrape-every` seconds). Besides requests per second, which on a shared
 * machine swing with the other tenants' load, each run records the daemon's own CPU time per
 * request (utime + stime from /proc), which the neighbours disturb far less.
 *
 *   node dist/bench/metrics-overhead.js [--duration 8] [--rounds 6] [--warmup 3] [--connections 50]
 *                                       [--scrape-every 5]
 *
 * Results: bench/results/metrics-overhead.{json,md}.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { KeyService } from '../shared/services/keys.js';
import { freePort, startDaemon, type Daemon } from '../test/helpers/daemon.js';
import { createTestDatabase } from '../test/helpers/db.js';
import { activeTenant, clientCredentialsToken, openServices } from '../test/helpers/seed.js';
import { machine, summarize, writeResults } from './lib/stats.js';
import { Metrics } from '../shared/metrics.js';
import { httpMetrics } from '../daemon/metrics/http.js';
import { basicAuth, createApiClients } from './lib/api-clients.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    'scrape-every': { type: 'string', default: '5' },
  },
});
const SCRAPE_EVERY_MS = Number(args['scrape-every']) * 1000;
const DURATION = Number(args.duration);
const ROUNDS = Number(args.rounds);
const WARMUP_S = Number(args.warmup);
const CONNECTIONS = Number(args.connections);

const loadAverage = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const loadBefore = loadAverage();

/**
 * The HTTP middleware's own cost, in this process, without a network or a daemon: a bare
 * async middleware against the metrics middleware around the same `next`, alternating, 500,000
 * calls each, 7 times; the median of the differences, ns per request.
 */
async function middlewareNs(): Promise<{ bareNs: number; metricsNs: number; overheadNs: number }> {
  const metrics = new Metrics({ defaultMetrics: false });
  const mw = httpMetrics(metrics) as unknown as (c: unknown, n: () => Promise<void>) => Promise<void>;
  const bare = async (_c: unknown, n: () => Promise<void>) => {
    await n();
  };
  const ctx = { method: 'POST', status: 200, _matchedRoute: '/introspect' };
  const next = () => Promise.resolve();
  const time = async (fn: typeof bare) => {
    const n = 500_000;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await fn(ctx, next);
    return Number(process.hrtime.bigint() - t0) / n;
  };
  const pairs: [number, number][] = [];
  for (let i = 0; i < 7; i++) pairs.push([await time(bare), await time(mw)]);
  const mid = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
  return {
    bareNs: Math.round(mid(pairs.map((p) => p[0]))),
    metricsNs: Math.round(mid(pairs.map((p) => p[1]))),
    overheadNs: Math.round(mid(pairs.map((p) => p[1] - p[0]))),
  };
}
const micro = await middlewareNs();
console.log(`middleware alone: ${micro.overheadNs} ns per request (${micro.bareNs} → ${micro.metricsNs} ns)`);

const db = await createTestDatabase();
const { ds, directory, config, provisioning } = await openServices(db.url, db.dir);
const actor = { type: 'system' as const, id: 'bench' };
const tenant = await activeTenant(provisioning, { name: 'Bench' }, actor);
const { resourceServer: rs, app } = await createApiClients(directory, tenant.id, actor);
await new KeyService(ds, config.secretKey, 86_400).ensureActive();
const rsAuth = basicAuth(rs);

/** CPU time (user + system) a process has used so far, ms. */
function cpuMs(pid: number): number {
  // /proc/<pid>/stat: fields 14 and 15 (utime, stime) in clock ticks, after the ")" of the name.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

interface Run {
  name: string;
  requestsPerSec: number;
  /** The daemon's CPU time per request answered, µs. */
  cpuUsPerRequest: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

async function load(name: string, daemon: Daemon, body: string, duration = DURATION, scrape?: string): Promise<Run> {
  const url = `${daemon.url}/introspect`;
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
      }, SCRAPE_EVERY_MS)
    : undefined;
  const cpuBefore = cpuMs(daemon.proc.pid!);
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
  const cpu = cpuMs(daemon.proc.pid!) - cpuBefore;
  const lat = summarize(times);
  const run = {
    name,
    requestsPerSec: Math.round(r.requests.average),
    cpuUsPerRequest: Math.round(((cpu * 1000) / Math.max(1, r.requests.total)) * 10) / 10,
    p50: lat.p50,
    p99: lat.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
  };
  console.log(
    `${name}: ${run.requestsPerSec} req/s, ${run.cpuUsPerRequest} µs CPU/request, P50 ${run.p50} ms, ` +
      `P99 ${run.p99} ms, errors ${run.errors}`,
  );
  return run;
}

const env = { IAM_LOG_LEVEL: 'warn', IAM_ISSUER: 'https://iam.bench.test' };
const off: Daemon = await startDaemon(db.url, db.dir, env);
// A port chosen here: at IAM_LOG_LEVEL=warn (no access log to slow either daemon) the
// 'metrics listening' line is not written.
const metricsPort = await freePort();
const on: Daemon = await startDaemon(db.url, db.dir, { ...env, IAM_METRICS_PORT: String(metricsPort) });
const scrapeUrl = `http://127.0.0.1:${metricsPort}/metrics`;
const token = await clientCredentialsToken(off.url, app.id, app.secret);
const body = new URLSearchParams({ token }).toString();

if (WARMUP_S > 0) {
  await load('warm-up, metrics off', off, body, WARMUP_S);
  await load('warm-up, metrics on', on, body, WARMUP_S, scrapeUrl);
}
const rounds: { off: Run; on: Run; ratio: number; cpuRatio: number }[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const runOff = () => load(`metrics off, round ${i + 1}`, off, body);
  const runOn = () => load(`metrics on, round ${i + 1}`, on, body, DURATION, scrapeUrl);
  let a: Run;
  let b: Run;
  if (i % 2 === 0) {
    a = await runOff();
    b = await runOn();
  } else {
    b = await runOn();
    a = await runOff();
  }
  rounds.push({
    off: a,
    on: b,
    ratio: Math.round((b.requestsPerSec / a.requestsPerSec) * 1000) / 1000,
    cpuRatio: Math.round((b.cpuUsPerRequest / a.cpuUsPerRequest) * 1000) / 1000,
  });
}
const finalScrape = await (await fetch(scrapeUrl)).text();
const counted = /iam_http_requests_total\{method="POST",route="\/introspect",status="200"\} (\d+)/.exec(finalScrape);
await off.stop();
await on.stop();
await ds.destroy();
await db.drop();
const loadAfter = loadAverage();

const medianOf = (xs: number[]) => {
  const sorted = [...xs].sort((x, y) => x - y);
  const m = sorted.length >> 1;
  return sorted.length % 2 ? sorted[m] : Math.round(((sorted[m - 1] + sorted[m]) / 2) * 1000) / 1000;
};
const median = medianOf(rounds.map((r) => r.ratio));
const cpuMedian = medianOf(rounds.map((r) => r.cpuRatio));
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
    metricsOffCpuUsPerRequest: r.off.cpuUsPerRequest,
    metricsOnCpuUsPerRequest: r.on.cpuUsPerRequest,
    cpuRatio: r.cpuRatio,
  })),
  scrapeEverySeconds: SCRAPE_EVERY_MS / 1000,
  middlewareInProcess: micro,
  medianRatioOnToOff: median,
  medianCpuPerRequestRatioOnToOff: cpuMedian,
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
  `/metrics scraped every ${SCRAPE_EVERY_MS / 1000} s during the "on" runs.`,
  '',
  '| Round | off (req/s) | on (req/s) | on / off | off (µs CPU/req) | on (µs CPU/req) | on / off |',
  '|---|---|---|---|---|---|---|',
  ...result.rounds.map(
    (r) =>
      `| ${r.round} | ${r.metricsOffRps} | ${r.metricsOnRps} | ${r.ratio} | ${r.metricsOffCpuUsPerRequest} | ` +
      `${r.metricsOnCpuUsPerRequest} | ${r.cpuRatio} |`,
  ),
  '',
  `Median on/off ratio of requests/s: **${median}**; of the daemon's CPU time per request: **${cpuMedian}** ` +
    '(1.0 = no cost; the machine is shared, so single rounds swing, requests/s far more than CPU time).',
  '',
  `Introspections the "on" daemon counted in iam_http_requests_total: ${result.introspectionsCountedByMetrics}.`,
  '',
  `The HTTP middleware alone, in process (median of 7 alternations of 500,000 calls): **${micro.overheadNs} ns** ` +
    `per request (${micro.bareNs} ns for a bare async middleware, ${micro.metricsNs} ns with the metrics one), ` +
    'against the daemon CPU time per introspection above; the introspection counters add a few ns more.',
].join('\n');
writeResults('metrics-overhead', result, md);
