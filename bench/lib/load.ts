/**
 * One measured load of an HTTP endpoint (autocannon), shared by the benches that compare our
 * daemon with node-oidc-provider in alternating rounds (bench/introspect.ts,
 * bench/client-credentials.ts, bench/workers.ts).
 *
 * Besides requests/s and latency, each run records the server process's CPU time per request
 * (user + system, from /proc/<pid>/stat, over the run): on a shared machine whose other tenants
 * take a changing share of the cores, requests/s swing with them, while the CPU a request costs
 * the server stays close to constant, so its ratio is the steadier comparison.
 */
import { readFileSync } from 'node:fs';
import type { EventEmitter } from 'node:events';
import autocannon from 'autocannon';
import { loadAverage } from './proc.js';
import { summarize } from './stats.js';

export interface Run {
  name: string;
  requestsPerSec: number;
  p50: number;
  p95: number;
  p99: number;
  /** Server CPU (user + system) per request, µs. */
  cpuUsPerRequest: number;
  errors: number;
  non2xx: number;
  total: number;
}

/** User + system CPU time of a process so far, µs (clock ticks are 100 Hz on Linux). */
export function cpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10_000;
}

export interface LoadOptions {
  name: string;
  url: string;
  body: string;
  authorization: string;
  /** The server's process, for its CPU time (without it, cpuUsPerRequest is NaN). */
  pid?: number;
  connections: number;
  duration: number;
  /** Checks the probe's answer, so a broken setup cannot pass as a fast one. */
  check?: (body: string) => boolean;
}

export async function load(o: LoadOptions): Promise<Run> {
  const headers = { 'content-type': 'application/x-www-form-urlencoded', authorization: o.authorization };
  const probe = await fetch(o.url, { method: 'POST', headers, body: o.body });
  const text = await probe.text();
  if (probe.status !== 200 || (o.check && !o.check(text)))
    throw new Error(`${o.name}: probe failed ${probe.status} ${text}`);
  // Every response time is kept, so P95 is computed exactly (autocannon reports P90 and P97.5).
  const times: number[] = [];
  const cpuBefore = o.pid === undefined ? NaN : cpuUs(o.pid);
  const inst = autocannon({
    url: o.url,
    method: 'POST',
    connections: o.connections,
    duration: o.duration,
    body: o.body,
    headers,
  }) as unknown as EventEmitter;
  inst.on('response', (_c: unknown, _status: number, _bytes: number, ms: number) => {
    times.push(ms);
  });
  const r = await new Promise<autocannon.Result>((resolve) => inst.on('done', resolve));
  const cpu = o.pid === undefined ? NaN : cpuUs(o.pid) - cpuBefore;
  const lat = summarize(times);
  const run: Run = {
    name: o.name,
    requestsPerSec: Math.round(r.requests.average),
    p50: lat.p50,
    p95: lat.p95,
    p99: lat.p99,
    cpuUsPerRequest: r.requests.total > 0 ? Math.round(cpu / r.requests.total) : NaN,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
    total: r.requests.total,
  };
  console.log(
    `${o.name}: ${run.requestsPerSec} req/s, P50 ${run.p50} ms, P99 ${run.p99} ms,` +
      ` CPU ${run.cpuUsPerRequest} µs/request, errors ${run.errors}, non-2xx ${run.non2xx}`,
  );
  return run;
}

/** The 1-minute load average and the time, for the results files (the machine is shared). */
export function loadStamp(): { at: string; loadAverage1m: number } {
  return { at: new Date().toISOString(), loadAverage1m: loadAverage()[0] };
}

/** One row of a Markdown table. */
export function mdRow(cells: unknown[]): string {
  return `| ${cells.map(String).join(' | ')} |`;
}
