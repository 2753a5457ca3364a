/**
 * Login-flow benchmark: the spec's five requests per login, driven by concurrent virtual
 * users against a real daemon, with every sign-in code delivered by the smtp provider to a
 * local SMTP server (smtp-server) and read from there (bench/lib/our-login.ts; the load loop
 * and statistics: bench/lib/login-driver.ts).
 *
 *   node dist/bench/login.js [--duration 20] [--warmup 5] [--concurrency 24] [--workers 1] [--calibrate 10]
 *                            [--synchronous FULL|NORMAL] [--out result.json] [--database-url mysql://…]
 *   node dist/bench/login.js --peer [--rounds 4] [--duration 15] [--concurrency 24] [--notes profile.md] …
 *
 * Full-flow latency runs from the first request to the token response, mail delivery
 * included. Before and after the run the machine's own speed is measured for `--calibrate`
 * seconds (bench/lib/calibrate.ts; 0 skips it), so a result can be read against the reference
 * machine. Results: bench/results/login-<sqlite|mariadb>.{json,md}, or only the JSON to `--out`
 * (bench/login-synchronous.ts runs this script that way, once per setting, alternating).
 * `--synchronous` is the daemon's IAM_SQLITE_SYNCHRONOUS (FULL, the default, or NORMAL).
 *
 * `--peer` (`npm run bench:login:peer`): the same run also drives node-oidc-provider's own
 * login flow (bench/login-peer.ts) at the same concurrency, the two alternating round by
 * round (A B, B A, …), and writes bench/results/login-vs-peer.{json,md} (login-vs-peer-mariadb on
 * MariaDB), with the `--notes` file appended to the Markdown.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { machine, writeResults } from './lib/stats.js';
import { bareHttpRps, REFERENCE_BARE_HTTP_RPS } from './lib/calibrate.js';
import { alternate, measureLogins } from './lib/login-driver.js';
import { cell, cpuCell, peerRatios, peerTables } from './lib/peer-report.js';
import { prepareOurLogin } from './lib/our-login.js';
import { loadAverage } from './lib/proc.js';
import { startPeerLogin } from './login-peer.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '24' },
    workers: { type: 'string', default: '1' },
    calibrate: { type: 'string', default: '10' },
    'database-url': { type: 'string' },
    label: { type: 'string' },
    synchronous: { type: 'string', default: 'FULL' },
    out: { type: 'string' },
    peer: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '4' },
    // A hand-written Markdown file appended to the peer run's results (the profile notes).
    notes: { type: 'string' },
  },
});
const CONCURRENCY = Number(args.concurrency);
const CALIBRATE_S = Number(args.calibrate);
const runOpts = {
  concurrency: CONCURRENCY,
  warmupSeconds: Number(args.warmup),
  durationSeconds: Number(args.duration),
};

const setup = await prepareOurLogin({ concurrency: CONCURRENCY, databaseUrl: args['database-url'] });
const kind = setup.kind;
const loadBefore = loadAverage();
const speedBefore = CALIBRATE_S > 0 ? await bareHttpRps(CALIBRATE_S) : undefined;
const ours = await setup.start({
  workers: Number(args.workers),
  synchronous: args.synchronous,
  // e.g. BENCH_DAEMON_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'
  nodeArgs: (process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean),
});

async function finish() {
  await setup.close();
  const speedAfter = CALIBRATE_S > 0 ? await bareHttpRps(CALIBRATE_S) : undefined;
  // The machine's speed as a share of the reference machine's (the mean of the two measurements).
  const speed =
    speedBefore !== undefined && speedAfter !== undefined
      ? (speedBefore + speedAfter) / 2 / REFERENCE_BARE_HTTP_RPS
      : undefined;
  return { speedAfter, speed, loadAfter: loadAverage() };
}

async function single() {
  console.log(
    `login bench: ${kind}, ${CONCURRENCY} virtual users, ` +
      `warm-up ${runOpts.warmupSeconds} s, measure ${runOpts.durationSeconds} s`,
  );
  const run = await measureLogins(ours, runOpts);
  await ours.stop();
  const mailsReceived = setup.mailsReceived();
  const { speedAfter, speed } = await finish();
  const loginsPerSecond = run.loginsPerSecond;
  const fullFlowMs = run.fullFlowMs;
  const result = {
    bench: 'login-flow',
    database: kind,
    label: args.label ?? null,
    concurrency: CONCURRENCY,
    workers: Number(args.workers),
    sqliteSynchronous: kind === 'sqlite' ? args.synchronous : null,
    durationSeconds: run.durationSeconds,
    loginsPerSecond,
    httpRequestsPerSecond: run.httpRequestsPerSecond,
    successRate: run.successRate,
    logins: run.logins,
    failures: run.failures,
    fullFlowMs,
    stepsMs: run.stepsMs,
    mailsReceived,
    // CPU per login: the daemon (all threads; with workers, all processes), its main thread
    // (the first worker's with workers), and this load generator with its SMTP server.
    cpuMsPerLogin: run.cpuMsPerLogin
      ? {
          daemon: run.cpuMsPerLogin.server,
          daemonMainThread: run.cpuMsPerLogin.serverMainThread,
          loadGenerator: run.cpuMsPerLogin.loadGenerator,
        }
      : null,
    daemonRssMiB: run.serverRssMiB,
    goal: { loginsPerSecond: 600, fullFlowP95Ms: 100, successRate: 1 },
    // The run's result at the reference speed: the work is CPU-bound on both cores, so logins/s
    // scale with the machine, and in this closed loop (a fixed number of virtual users) the
    // latencies scale inversely with it. These are estimates; the measured figures are what ran here.
    machineSpeed:
      speed === undefined
        ? null
        : {
            bareHttpRequestsPerSecond: { before: speedBefore, after: speedAfter, reference: REFERENCE_BARE_HTTP_RPS },
            shareOfReference: Math.round(speed * 1000) / 1000,
            atReferenceSpeed: {
              loginsPerSecond: Math.round(loginsPerSecond / speed),
              fullFlowP95Ms: Math.round(fullFlowMs.p95 * speed * 10) / 10,
            },
          },
    loadAverage: loadBefore,
    machine: machine(),
  };
  const stepRows = Object.entries(run.stepsMs)
    .map(([s, v]) => `| ${s} | ${v.p50} | ${v.p95} | ${v.p99} |`)
    .join('\n');
  const ms = result.machineSpeed;
  const speedText = ms
    ? `Machine speed: a bare node:http server answered ${ms.bareHttpRequestsPerSecond.before} requests/s before the run
and ${ms.bareHttpRequestsPerSecond.after} after it (autocannon, 50 connections), against about \
${REFERENCE_BARE_HTTP_RPS.toLocaleString('en')} on the reference
machine of this kind: this one ran at ${(ms.shareOfReference * 100).toFixed(0)} % of it. At the reference speed \
this run's work would give about
${ms.atReferenceSpeed.loginsPerSecond} logins/s at full-flow P95 ${ms.atReferenceSpeed.fullFlowP95Ms} ms \
(an estimate: both scale with the machine, since the
work is CPU-bound and the number of virtual users fixed).

`
    : '';
  const total = run.logins + run.failed;
  const md = `# Login flow benchmark (${kind})

${result.machine.at}, ${result.machine.cpus} cores, Node ${result.machine.node}, IAM_WORKERS=${result.workers}${
    result.sqliteSynchronous ? `, IAM_SQLITE_SYNCHRONOUS=${result.sqliteSynchronous}` : ''
  }, load average ${loadBefore.join(' ')} at the start. ${CONCURRENCY} virtual users, each running
the five-request flow (authorize page, send code, verify code, authorize with prompt=none,
token) back to back; the code is delivered by the smtp provider to a local SMTP server.

| Metric | Value | Goal |
|---|---|---|
| logins/s | ${result.loginsPerSecond} | ≥ 600 |
| HTTP requests/s | ${result.httpRequestsPerSecond} | |
| full flow P50 / P95 / P99 (ms) | ${cell(run)} | P95 < 100 |
| success rate | ${(result.successRate * 100).toFixed(2)} % (${run.logins} of ${total}) | 100 % |
| daemon peak RSS | ${result.daemonRssMiB?.max ?? '?'} MiB | |
| CPU per login: daemon / its main thread / load generator (ms) | ${cpuCell(run)} | |

${speedText}Per step (ms, P50 / P95 / P99):

| Step | P50 | P95 | P99 |
|---|---|---|---|
${stepRows}

The spec observed 150 logins/s at full-flow P95 756 ms.
`;
  console.log(md);
  if (args.out) writeFileSync(args.out, JSON.stringify(result, null, 2) + '\n');
  else writeResults(`login-${kind}${result.workers > 1 ? `-workers${result.workers}` : ''}`, result, md);
}

async function versusPeer() {
  const rounds = Number(args.rounds);
  const peer = await startPeerLogin(CONCURRENCY);
  console.log(
    `login vs node-oidc-provider: ${kind}, ${CONCURRENCY} virtual users each, ${rounds} rounds of ` +
      `${runOpts.durationSeconds} s (warm-up ${runOpts.warmupSeconds} s each)`,
  );
  // Unrecorded first, so that neither is measured while its JIT compiler is still at work.
  const warm = { ...runOpts, warmupSeconds: 0, durationSeconds: runOpts.warmupSeconds };
  await measureLogins(ours, warm);
  await measureLogins(peer, warm);
  const out = await alternate(ours, peer, rounds, runOpts);
  await ours.stop();
  await peer.stop();
  const { speedAfter, loadAfter } = await finish();

  const ratios = peerRatios(out);
  const result = {
    bench: 'login-vs-peer',
    database: kind,
    sqliteSynchronous: kind === 'sqlite' ? args.synchronous : null,
    concurrency: CONCURRENCY,
    workers: Number(args.workers),
    rounds: out,
    ...ratios,
    goal: { loginsPerSecondRatio: 1, fullFlowP95Ratio: 1 },
    loadAverage: { before: loadBefore, after: loadAfter },
    machineSpeed: { bareHttpRequestsPerSecond: { before: speedBefore, after: speedAfter } },
    machine: machine(),
  };
  const md = `# Login flow against node-oidc-provider (${kind}, same run)

${result.machine.at}, ${result.machine.cpus} cores, Node ${result.machine.node}. Load average (1, 5, 15 min)
${loadBefore.join(' ')} before the run and ${loadAfter.join(' ')} after it: other work shares this machine, so the
absolute figures are low and noisy and the same-run ratios are what compare the two servers.
${
  speedBefore !== undefined
    ? `A bare node:http server answered ${speedBefore} requests/s before the run and ${speedAfter} after it
(autocannon, 50 connections; about ${REFERENCE_BARE_HTTP_RPS.toLocaleString('en')} on the reference machine).\n`
    : ''
}
Both servers run side by side, each one process, and are loaded in turn by the same closed loop
(bench/lib/login-driver.ts) with ${CONCURRENCY} virtual users for ${runOpts.durationSeconds} s after a \
${runOpts.warmupSeconds} s warm-up, ${rounds} rounds alternating A B, B A, …

- **iam**: ${
    kind === 'sqlite' ? `durable SQLite (IAM_SQLITE_SYNCHRONOUS=${args.synchronous})` : "MariaDB (the lane's server)"
  }, IAM_WORKERS=${args.workers}; the five requests of the spec's
  flow (authorize page, send code, verify code, authorize with the session, token), the sign-in
  code delivered by the smtp provider over real SMTP to a local SMTP server (smtp-server) and
  read from there; access and ID token signed with ES256.
- **node-oidc-provider** 9.13 (bench/login-peer.ts, bench/oidc-provider-peer.ts): its own
  authorization-code flow with PKCE through its interaction API, eight requests (authorize,
  login form, login POST with a trivial account lookup, resume, consent form, consent POST saving
  a Grant, resume to the callback, token), a fresh cookie jar per login; its **in-memory
  adapter** (no database, no mail); opaque access token and ES256 ID token.

${peerTables(out, ratios)}${args.notes ? `\n${readFileSync(args.notes, 'utf8')}` : ''}`;
  console.log(md);
  writeResults(kind === 'sqlite' ? 'login-vs-peer' : `login-vs-peer-${kind}`, result, md);
}

if (args.peer) await versusPeer();
else await single();
process.exit(0);
