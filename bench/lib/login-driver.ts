/**
 * The login benches' load loop: a fixed number of virtual users, each running one server's
 * whole login flow back to back (a closed loop), measured after a warm-up. The flow itself is
 * the target's (ours: bench/lib/our-login.ts; node-oidc-provider's: bench/login-peer.ts); the
 * loop, the CPU and memory readings and the statistics are the same for every target, so two
 * targets measured in one run are measured the same way.
 */
import { cpuMs, rssMiB } from './proc.js';
import { summarize } from './stats.js';

export interface LoginTarget {
  /** A label for the results. */
  name: string;
  /** The server process, for its CPU time and memory. */
  pid: number;
  /** Its worker processes (IAM_WORKERS), 1 for a single process. */
  workers: number;
  /** The flow's steps, in order: `login` returns one mark after each. */
  steps: readonly string[];
  /** HTTP requests one login sends. */
  requestsPerLogin: number;
  /**
   * One whole login for virtual user `vu` (0 ≤ vu < concurrency): `performance.now()` at the
   * start and after each step. Throws when any answer is not the expected one.
   */
  login(vu: number): Promise<number[]>;
}

export interface LoginRunOptions {
  concurrency: number;
  warmupSeconds: number;
  durationSeconds: number;
}

export type LoginRun = Awaited<ReturnType<typeof measureLogins>>;

const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Runs `target`'s flow with `concurrency` virtual users: warm-up, then the measured window. */
export async function measureLogins(target: LoginTarget, opts: LoginRunOptions) {
  const stepTimes: number[][] = target.steps.map(() => []);
  const flowTimes: number[] = [];
  const failures = new Map<string, number>();
  let ok = 0;
  let failed = 0;
  let measuring = false;
  let stopping = false;

  const virtualUser = async (vu: number) => {
    while (!stopping) {
      const counted = measuring;
      try {
        const t = await target.login(vu);
        if (counted && measuring) {
          ok++;
          flowTimes.push(t[t.length - 1] - t[0]);
          for (let i = 0; i < stepTimes.length; i++) stepTimes[i].push(t[i + 1] - t[i]);
        }
      } catch (e) {
        if (counted && measuring) {
          failed++;
          const k = (e as Error).message;
          failures.set(k, (failures.get(k) ?? 0) + 1);
        }
      }
    }
  };

  const vus = Array.from({ length: opts.concurrency }, (_, i) => virtualUser(i));
  await sleep(opts.warmupSeconds * 1000);
  measuring = true;
  const t0 = performance.now();
  const cpu0 = cpuMs(target.pid, target.workers);
  const gen0 = process.cpuUsage();
  const rss: number[] = [];
  const rssTimer = setInterval(() => {
    try {
      rss.push(rssMiB(target.pid));
    } catch {
      /* process gone */
    }
  }, 500);
  await sleep(opts.durationSeconds * 1000);
  measuring = false;
  const elapsed = (performance.now() - t0) / 1000;
  const cpu1 = cpuMs(target.pid, target.workers);
  const gen = process.cpuUsage(gen0);
  clearInterval(rssTimer);
  stopping = true;
  await Promise.all(vus);

  const total = ok + failed;
  return {
    name: target.name,
    workers: target.workers,
    concurrency: opts.concurrency,
    durationSeconds: round(elapsed),
    loginsPerSecond: round(ok / elapsed),
    httpRequestsPerSecond: round((ok * target.requestsPerLogin) / elapsed),
    successRate: total ? ok / total : 0,
    logins: ok,
    failed,
    failures: Object.fromEntries(failures),
    fullFlowMs: summarize(flowTimes),
    stepsMs: Object.fromEntries(target.steps.map((s, i) => [s, summarize(stepTimes[i])])),
    // CPU per login: the server (all threads; with workers, all processes), its main thread
    // (the first worker's with workers), and this load generator (with its SMTP server for ours).
    cpuMsPerLogin: ok
      ? {
          server: round((cpu1.all - cpu0.all) / ok, 2),
          serverMainThread: round((cpu1.main - cpu0.main) / ok, 2),
          loadGenerator: round((gen.user + gen.system) / 1000 / ok, 2),
        }
      : null,
    serverRssMiB: rss.length ? { max: Math.round(Math.max(...rss)) } : null,
  };
}

/**
 * Two targets measured in alternation, A B, B A, A B …, `rounds` times: each round's ratio
 * (A ÷ B) compares two runs seconds apart on a machine whose speed drifts.
 */
export async function alternate(a: LoginTarget, b: LoginTarget, rounds: number, opts: LoginRunOptions) {
  const out: { round: number; a: LoginRun; b: LoginRun; loginsRatio: number; p95Ratio: number }[] = [];
  for (let i = 0; i < rounds; i++) {
    let ra: LoginRun;
    let rb: LoginRun;
    if (i % 2 === 0) {
      ra = await measureLogins(a, opts);
      rb = await measureLogins(b, opts);
    } else {
      rb = await measureLogins(b, opts);
      ra = await measureLogins(a, opts);
    }
    for (const r of [ra, rb])
      console.log(
        `round ${i + 1}, ${r.name}: ${r.loginsPerSecond} logins/s, P95 ${r.fullFlowMs.p95} ms, ` +
          `${r.cpuMsPerLogin?.server ?? '?'} ms server CPU per login, failures ${r.failed}`,
      );
    out.push({
      round: i + 1,
      a: ra,
      b: rb,
      loginsRatio: round(ra.loginsPerSecond / rb.loginsPerSecond, 3),
      // Below 1 is better for A: its P95 is that share of B's.
      p95Ratio: round(ra.fullFlowMs.p95 / rb.fullFlowMs.p95, 3),
    });
  }
  return out;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
