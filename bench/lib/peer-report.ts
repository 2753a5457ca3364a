/**
 * What the login benchmarks against node-oidc-provider (bench/login.ts --peer,
 * bench/login-fapi.ts) report of their alternating rounds: the median ratios and the markdown
 * tables of rounds, ratios and steps, written once for both.
 */
import type { alternate, LoginRun } from './login-driver.js';
import { median } from './stats.js';

type Rounds = Awaited<ReturnType<typeof alternate>>;

export const cell = (r: LoginRun) => `${r.fullFlowMs.p50} / ${r.fullFlowMs.p95} / ${r.fullFlowMs.p99}`;
export const cpuCell = (r: LoginRun) =>
  r.cpuMsPerLogin
    ? `${r.cpuMsPerLogin.server} / ${r.cpuMsPerLogin.serverMainThread} / ${r.cpuMsPerLogin.loadGenerator}`
    : '?';

/** The medians of the rounds' ratios (this service ÷ the peer) and the failures of all rounds. */
export function peerRatios(out: Rounds) {
  const cpuRatio = median(
    out.map((r) =>
      r.a.cpuMsPerLogin && r.b.cpuMsPerLogin ? r.a.cpuMsPerLogin.server / r.b.cpuMsPerLogin.server : NaN,
    ),
  );
  return {
    loginsPerSecondRatio: median(out.map((r) => r.loginsRatio)),
    fullFlowP95Ratio: median(out.map((r) => r.p95Ratio)),
    serverCpuPerLoginRatio: Math.round(cpuRatio * 1000) / 1000,
    failures: out.reduce((n, r) => n + r.a.failed + r.b.failed, 0),
  };
}

/** The rounds, their ratios, the medians against the goal and the last round's steps, as markdown. */
export function peerTables(out: Rounds, m: ReturnType<typeof peerRatios>): string {
  const row = (i: number, r: LoginRun) =>
    `| ${i} | ${r.name} | ${r.loginsPerSecond} | ${cell(r)} | ${cpuCell(r)} | ${r.logins} / ${r.failed} |`;
  const steps = (r: LoginRun) =>
    Object.entries(r.stepsMs)
      .map(([s, v]) => `| ${r.name} | ${s} | ${v.p50} | ${v.p95} | ${v.p99} |`)
      .join('\n');
  const last = out[out.length - 1];
  return `| Round | Server | logins/s | full flow P50 / P95 / P99 (ms) | \
CPU per login: server / its main thread / load generator (ms) | logins / failures |
|---|---|---|---|---|---|
${out.map((r) => `${row(r.round, r.a)}\n${row(r.round, r.b)}`).join('\n')}

| Round | logins/s ratio (iam ÷ peer) | P95 ratio (iam ÷ peer, lower is better) |
|---|---|---|
${out.map((r) => `| ${r.round} | ${r.loginsRatio}× | ${r.p95Ratio}× |`).join('\n')}

**Median of the rounds: iam's logins/s are ${m.loginsPerSecondRatio}× node-oidc-provider's (goal ≥ 1.0×); its full-flow
P95 is ${m.fullFlowP95Ratio}× the peer's (goal ≤ 1.0×); its server CPU per login is \
${m.serverCpuPerLoginRatio}× the peer's.**
Failures over all rounds: ${m.failures}.

Per step, last round (ms):

| Server | Step | P50 | P95 | P99 |
|---|---|---|---|---|
${steps(last.a)}
${steps(last.b)}
`;
}
