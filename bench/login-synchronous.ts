/**
 * What SQLite's synchronous=FULL costs the login flow, against NORMAL, in the same run: the
 * login bench (bench/login.ts) runs once per setting per round, the order flipped each round
 * (FULL NORMAL, NORMAL FULL, …), each on a fresh database and daemon, and the result is the
 * median of the rounds' ratios. FULL is the default (docs/deployment.md, "what a crash can
 * lose"); with group commit it costs one fsync per group of commits.
 *
 *   node dist/bench/login-synchronous.js [--rounds 3] [--duration 20] [--warmup 5] [--concurrency 24]
 *
 * Results: bench/results/login-synchronous.{json,md}.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { bareHttpRps, REFERENCE_BARE_HTTP_RPS } from './lib/calibrate.js';
import { machine, writeResults } from './lib/stats.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '24' },
    calibrate: { type: 'string', default: '5' },
  },
});

interface LoginResult {
  loginsPerSecond: number;
  successRate: number;
  fullFlowMs: { p50: number; p95: number; p99: number };
  cpuMsPerLogin: { daemon: number; daemonMainThread: number } | null;
}

const loginBench = join(dirname(fileURLToPath(import.meta.url)), 'login.js');
const tmp = mkdtempSync(join(tmpdir(), 'iam-bench-sync-'));

function run(setting: 'FULL' | 'NORMAL', round: number): LoginResult {
  const out = join(tmp, `${setting}-${round}.json`);
  execFileSync(
    process.execPath,
    [
      loginBench,
      ...['--synchronous', setting, '--out', out, '--calibrate', '0'],
      ...['--duration', args.duration, '--warmup', args.warmup, '--concurrency', args.concurrency],
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const r = JSON.parse(readFileSync(out, 'utf8')) as LoginResult;
  console.log(
    `round ${round} ${setting}: ${r.loginsPerSecond} logins/s, P95 ${r.fullFlowMs.p95} ms, ` +
      `daemon CPU ${r.cpuMsPerLogin?.daemon} ms/login`,
  );
  return r;
}

const calibrate = Number(args.calibrate);
const speedBefore = calibrate > 0 ? await bareHttpRps(calibrate) : undefined;
const rounds: { round: number; full: LoginResult; normal: LoginResult }[] = [];
for (let i = 1; i <= Number(args.rounds); i++) {
  let full: LoginResult;
  let normal: LoginResult;
  if (i % 2) {
    full = run('FULL', i);
    normal = run('NORMAL', i);
  } else {
    normal = run('NORMAL', i);
    full = run('FULL', i);
  }
  rounds.push({ round: i, full, normal });
}
const speedAfter = calibrate > 0 ? await bareHttpRps(calibrate) : undefined;
rmSync(tmp, { recursive: true, force: true });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const r2 = (x: number) => Math.round(x * 100) / 100;
const throughput = r2(median(rounds.map((r) => r.full.loginsPerSecond / r.normal.loginsPerSecond)));
const p95 = r2(median(rounds.map((r) => r.full.fullFlowMs.p95 / r.normal.fullFlowMs.p95)));
const result = {
  bench: 'login-synchronous',
  rounds,
  ratio: { loginsPerSecondFullOverNormal: throughput, fullFlowP95FullOverNormal: p95 },
  machineSpeed:
    speedBefore !== undefined && speedAfter !== undefined
      ? {
          before: speedBefore,
          after: speedAfter,
          shareOfReference: r2((speedBefore + speedAfter) / 2 / REFERENCE_BARE_HTTP_RPS),
        }
      : null,
  machine: machine(),
};
const row = (r: LoginResult) =>
  `${r.loginsPerSecond} | ${r.fullFlowMs.p50} / ${r.fullFlowMs.p95} / ${r.fullFlowMs.p99} | ` +
  `${(r.successRate * 100).toFixed(1)} % | ${r.cpuMsPerLogin?.daemon ?? '?'}`;
const md = `# Login flow: synchronous=FULL against NORMAL (sqlite)

${result.machine.at}, ${result.machine.cpus} cores, Node ${result.machine.node}. bench/login.ts with
${args.concurrency} virtual users for ${args.duration} s per run, real mail through the smtp provider; each run on
a fresh database and daemon, the two settings alternating (the order flipped each round).

| Round | Setting | logins/s | full flow P50 / P95 / P99 (ms) | success | daemon CPU ms/login |
|---|---|---|---|---|---|
${rounds.map((r) => `| ${r.round} | FULL | ${row(r.full)} |\n| ${r.round} | NORMAL | ${row(r.normal)} |`).join('\n')}

**FULL / NORMAL**, the median of the rounds' ratios: logins/s **${throughput}×**, full-flow P95 **${p95}×**.
${
  result.machineSpeed
    ? `\nMachine speed: bare node:http ${speedBefore} requests/s before and ${speedAfter} after (about ` +
      `${Math.round(result.machineSpeed.shareOfReference * 100)} % of the reference machine).\n`
    : ''
}`;
console.log(md);
writeResults('login-synchronous', result, md);
