/**
 * Soak: a realistic mix against one daemon on durable SQLite with real SMTP delivery, first at
 * its peak to find it, then for `--minutes` at 80 % of that rate, with the daemon's memory
 * sampled throughout.
 *
 *   node dist/bench/soak.js [--minutes 10] [--share 0.8] [--peak-seconds 20] [--concurrency 32]
 *                           [--users 64] [--sample-seconds 5] [--warmup-minutes 1]
 *   npm run bench:soak -- --minutes 10
 *
 * The mix, per operation: 90 % introspection (RFC 7662) of a recently issued access token
 * (mostly cache hits: a pool of the last 1,000 tokens issued), 8 % token issuance
 * (client_credentials), 2 % whole logins (bench/lib/our-login.ts: five requests and a mail).
 *
 * 1. Peak: `--concurrency` workers run the mix back to back (a closed loop) for
 *    `--peak-seconds`; operations/s is the peak.
 * 2. Soak: operations are started on a fixed schedule at `--share` of the peak (an open loop,
 *    so a slow answer does not slow the offered load), each timed from its scheduled start.
 *    The daemon's RSS is read every `--sample-seconds`.
 *
 * Reported (bench/results/soak.{json,md}): errors (must be 0), unexpected statuses, latency
 * percentiles per minute, and the RSS slope: the least-squares line through the samples after
 * `--warmup-minutes`, in MiB per minute.
 */
import { parseArgs } from 'node:util';
import { BenchHttpClient } from './lib/http-client.js';
import { sleep } from './lib/login-driver.js';
import { median } from './lib/stats.js';
import { prepareOurLogin } from './lib/our-login.js';
import { cpuMs, loadAverage, rssMiB } from './lib/proc.js';
import { machine, summarize, writeResults } from './lib/stats.js';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    share: { type: 'string', default: '0.8' },
    'peak-seconds': { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '32' },
    users: { type: 'string', default: '64' },
    'sample-seconds': { type: 'string', default: '5' },
    'warmup-minutes': { type: 'string', default: '1' },
  },
});
const MINUTES = Number(args.minutes);
const SHARE = Number(args.share);
const PEAK_S = Number(args['peak-seconds']);
const CONCURRENCY = Number(args.concurrency);
const USERS = Number(args.users);
const SAMPLE_S = Number(args['sample-seconds']);
const WARMUP_MIN = Number(args['warmup-minutes']);
/** Most operations in flight during the soak: beyond it the daemon is not keeping up. */
const MAX_IN_FLIGHT = 512;

const MIX = [
  { op: 'introspect', weight: 0.9 },
  { op: 'token', weight: 0.08 },
  { op: 'login', weight: 0.02 },
] as const;
type Op = (typeof MIX)[number]['op'];

const setup = await prepareOurLogin({ concurrency: USERS, apiClients: true });
const ours = await setup.start({ name: 'iam (sqlite, soak)' });
const api = setup.api!;
const http = new BenchHttpClient(ours.url, { maxSockets: 64 });
const rsAuth = 'Basic ' + Buffer.from(`${api.resourceServer.id}:${api.resourceServer.secret}`).toString('base64');
const appAuth = 'Basic ' + Buffer.from(`${api.app.id}:${api.app.secret}`).toString('base64');

/** The last 1,000 tokens issued: introspection picks among them (most are cached by then). */
const tokens: string[] = [];
let tokenCursor = 0;

/** An error thrown for an answer with an unexpected status, counted apart from other failures. */
class StatusError extends Error {}

async function issue(): Promise<void> {
  const res = await http.request(
    'POST',
    '/token',
    { 'content-type': 'application/x-www-form-urlencoded', authorization: appAuth },
    'grant_type=client_credentials&scope=api',
  );
  if (res.status !== 200) throw new StatusError(`token ${res.status}`);
  const t = (JSON.parse(res.body) as { access_token: string }).access_token;
  if (tokens.length < 1000) tokens.push(t);
  else tokens[tokenCursor++ % 1000] = t;
}

async function introspect(): Promise<void> {
  const token = tokens[Math.floor(Math.random() * tokens.length)];
  const res = await http.request(
    'POST',
    '/introspect',
    { 'content-type': 'application/x-www-form-urlencoded', authorization: rsAuth },
    `token=${token}`,
  );
  if (res.status !== 200) throw new StatusError(`introspect ${res.status}`);
  if (!res.body.includes('"active":true')) throw new Error('introspect: token not active');
}

// One login at a time per user: its code is matched to the mail by address.
const freeUsers = Array.from({ length: USERS }, (_, i) => i);
async function login(): Promise<void> {
  const vu = freeUsers.pop();
  if (vu === undefined) throw new Error('login: no free user');
  try {
    await ours.login(vu);
  } catch (e) {
    const m = (e as Error).message;
    throw /^\w+ \d{3}$/.test(m) ? new StatusError(m) : e;
  } finally {
    freeUsers.push(vu);
  }
}

const run: Record<Op, () => Promise<void>> = { introspect, token: issue, login };
function pick(): Op {
  let x = Math.random();
  for (const m of MIX) if ((x -= m.weight) < 0) return m.op;
  return 'introspect';
}

for (let i = 0; i < 50; i++) await issue();

// ---- 1. peak: a closed loop ----
console.log(`soak: peak of the mix with ${CONCURRENCY} workers for ${PEAK_S} s`);
let peakOps = 0;
let peakFailed = 0;
let stop = false;
const peakStart = performance.now();
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (!stop) {
      if (performance.now() - peakStart > PEAK_S * 1000) {
        stop = true;
        break;
      }
      try {
        await run[pick()]();
        peakOps++;
      } catch {
        peakFailed++;
      }
    }
  }),
);
const peakRate = peakOps / ((performance.now() - peakStart) / 1000);
const rate = peakRate * SHARE;
console.log(`peak ${peakRate.toFixed(0)} operations/s (${peakFailed} failed); soak at ${rate.toFixed(0)}/s`);
await sleep(3000);

// ---- 2. soak: an open loop at `rate` ----
interface Minute {
  latency: Record<Op | 'all', number[]>;
  ops: number;
  errors: number;
  unexpectedStatus: number;
}
const newMinute = (): Minute => ({
  latency: { introspect: [], token: [], login: [], all: [] },
  ops: 0,
  errors: 0,
  unexpectedStatus: 0,
});
const minutes: Minute[] = Array.from({ length: MINUTES }, newMinute);
const failures = new Map<string, number>();
const rss: { minute: number; mib: number }[] = [];
let inFlight = 0;
let skipped = 0;
let started = 0;
const loadBefore = loadAverage();
const cpu0 = cpuMs(ours.pid);
const t0 = performance.now();
const endAt = t0 + MINUTES * 60_000;
const sampler = setInterval(() => {
  rss.push({ minute: (performance.now() - t0) / 60_000, mib: rssMiB(ours.pid) });
}, SAMPLE_S * 1000);
rss.push({ minute: 0, mib: rssMiB(ours.pid) });
const pending = new Set<Promise<void>>();

function launch(scheduledAt: number): void {
  if (inFlight >= MAX_IN_FLIGHT) {
    skipped++;
    return;
  }
  const op = pick();
  const minute = minutes[Math.min(MINUTES - 1, Math.floor((scheduledAt - t0) / 60_000))];
  inFlight++;
  started++;
  const p = run[op]()
    .then(
      () => {
        // Timed from the scheduled start: a late start counts against the latency.
        const ms = performance.now() - scheduledAt;
        minute.latency[op].push(ms);
        minute.latency.all.push(ms);
        minute.ops++;
      },
      (e: Error) => {
        if (e instanceof StatusError) minute.unexpectedStatus++;
        else minute.errors++;
        failures.set(e.message, (failures.get(e.message) ?? 0) + 1);
      },
    )
    .finally(() => {
      inFlight--;
      pending.delete(p);
    });
  pending.add(p);
}

let lastMinute = -1;
for (let due = 0; ;) {
  const now = performance.now();
  if (now >= endAt) break;
  const target = Math.floor(((now - t0) / 1000) * rate);
  for (; due < target; due++) launch(t0 + (due / rate) * 1000);
  const m = Math.floor((now - t0) / 60_000);
  if (m !== lastMinute && m > 0) {
    const done = minutes[m - 1];
    console.log(
      `minute ${m}: ${done.ops} operations, P99 ${summarize(done.latency.all).p99} ms, errors ${done.errors}, ` +
        `unexpected ${done.unexpectedStatus}, RSS ${rss[rss.length - 1].mib} MiB`,
    );
  }
  lastMinute = m;
  await sleep(5);
}
await Promise.all(pending);
const cpu1 = cpuMs(ours.pid);
clearInterval(sampler);
const peakRss = rssMiB(ours.pid, 'VmHWM');
await http.close();
await ours.stop();
await setup.close();

/** Least-squares slope of y over x. */
function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const sxy = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  return sxx ? sxy / sxx : 0;
}
const after = rss.filter((s) => s.minute >= WARMUP_MIN);
const rssSlope = Math.round(slope(after.map((s) => ({ x: s.minute, y: s.mib }))) * 1000) / 1000;
const second = after.filter((s) => s.minute >= WARMUP_MIN + (MINUTES - WARMUP_MIN) / 2);
const secondHalfSlope = Math.round(slope(second.map((s) => ({ x: s.minute, y: s.mib }))) * 1000) / 1000;
const totals = minutes.reduce(
  (a, m) => ({ ops: a.ops + m.ops, errors: a.errors + m.errors, unexpected: a.unexpected + m.unexpectedStatus }),
  { ops: 0, errors: 0, unexpected: 0 },
);
const perMinute = minutes.map((m, i) => ({
  minute: i + 1,
  operations: m.ops,
  operationsPerSecond: Math.round((m.ops / 60) * 10) / 10,
  errors: m.errors,
  unexpectedStatus: m.unexpectedStatus,
  latencyMs: Object.fromEntries(Object.entries(m.latency).map(([k, v]) => [k, summarize(v)])),
}));
const opsCount = (op: Op) => minutes.reduce((a, m) => a + m.latency[op].length, 0);
const result = {
  bench: 'soak',
  database: setup.kind,
  sqliteSynchronous: 'FULL',
  mix: Object.fromEntries(MIX.map((m) => [m.op, m.weight])),
  peak: {
    concurrency: CONCURRENCY,
    seconds: PEAK_S,
    operationsPerSecond: Math.round(peakRate),
    failed: peakFailed,
  },
  share: SHARE,
  offeredOperationsPerSecond: Math.round(rate * 10) / 10,
  minutes: MINUTES,
  started,
  completed: totals.ops,
  byOperation: { introspect: opsCount('introspect'), token: opsCount('token'), login: opsCount('login') },
  errors: totals.errors,
  unexpectedStatus: totals.unexpected,
  skippedOverInFlightLimit: skipped,
  failures: Object.fromEntries(failures),
  latencyMs: summarize(minutes.flatMap((m) => m.latency.all)),
  perMinute,
  rss: {
    samples: rss.map((s) => ({ minute: Math.round(s.minute * 1000) / 1000, mib: s.mib })),
    warmupMinutes: WARMUP_MIN,
    slopeMiBPerMinute: rssSlope,
    secondHalfSlopeMiBPerMinute: secondHalfSlope,
    first: after[0]?.mib,
    last: after[after.length - 1]?.mib,
    median: median(after.map((s) => s.mib)),
    peakMiB: peakRss,
  },
  daemonCpuMsPerOperation: Math.round(((cpu1.all - cpu0.all) / Math.max(1, totals.ops)) * 100) / 100,
  loadAverage: { before: loadBefore, after: loadAverage() },
  mailsReceived: setup.mailsReceived(),
  machine: machine(),
};
const pm = (k: Op | 'all', m: (typeof perMinute)[number]) => {
  const l = m.latencyMs[k];
  return l.count ? `${l.p50} / ${l.p95} / ${l.p99}` : '–';
};
const md = `# Soak (${setup.kind}, durable, real SMTP delivery)

${result.machine.at}, ${result.machine.cpus} cores, Node ${result.machine.node}. Load average (1, 5, 15 min)
${loadBefore.join(' ')} before and ${result.loadAverage.after.join(' ')} after: other work shares this
machine, so the rates are low; what the soak shows is errors and memory over time.

One daemon (IAM_WORKERS=1, SQLite with IAM_SQLITE_SYNCHRONOUS=FULL, sign-in codes sent by the smtp
provider to a local SMTP server). The mix per operation: 90 % introspection of one of the last
1,000 access tokens issued, 8 % token issuance (client_credentials), 2 % whole logins (five requests
and a mail).

- **Peak**: ${CONCURRENCY} workers back to back for ${PEAK_S} s: ${result.peak.operationsPerSecond} operations/s.
- **Soak**: ${MINUTES} minutes at ${Math.round(SHARE * 100)} % of it, \
${result.offeredOperationsPerSecond} operations/s offered on a fixed schedule (open loop),
  each timed from its scheduled start.

| | |
|---|---|
| operations started / completed | ${started} / ${totals.ops} (introspection ${result.byOperation.introspect}, tokens \
${result.byOperation.token}, logins ${result.byOperation.login}) |
| **errors** | **${totals.errors}** |
| unexpected statuses (non-2xx where 2xx was due) | ${totals.unexpected} |
| not started (over ${MAX_IN_FLIGHT} in flight) | ${skipped} |
| latency, all operations, P50 / P95 / P99 / max (ms) | ${result.latencyMs.p50} / ${result.latencyMs.p95} / \
${result.latencyMs.p99} / ${result.latencyMs.max} |
| **RSS slope after minute ${WARMUP_MIN}** (least squares, ${after.length} samples every ${SAMPLE_S} s) | \
**${rssSlope} MiB/minute** (second half: ${secondHalfSlope}) |
| RSS after the warm-up: first / median / last, peak | ${result.rss.first} / ${result.rss.median} / \
${result.rss.last} MiB, peak ${peakRss} MiB |
| daemon CPU per operation | ${result.daemonCpuMsPerOperation} ms |

Per minute (latency P50 / P95 / P99, ms):

| Minute | operations/s | errors | unexpected | all | introspection | token | login |
|---|---|---|---|---|---|---|---|
${perMinute
  .map(
    (m) =>
      `| ${m.minute} | ${m.operationsPerSecond} | ${m.errors} | ${m.unexpectedStatus} | ${pm('all', m)} | ` +
      `${pm('introspect', m)} | ${pm('token', m)} | ${pm('login', m)} |`,
  )
  .join('\n')}
`;
console.log(md);
writeResults('soak', result, md);
process.exit(0);
