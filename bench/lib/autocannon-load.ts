/**
 * One autocannon run of a form POST (introspection, a token request) with every response
 * time kept, so P95 is exact (autocannon itself reports P90 and P97.5). The probe before the
 * load checks the answer, so a broken setup cannot pass as a fast one. Shared by
 * bench/introspect.ts and bench/workers.ts.
 */
import type { EventEmitter } from 'node:events';
import autocannon from 'autocannon';
import { summarize } from './stats.js';

export interface Run {
  name: string;
  requestsPerSec: number;
  p50: number;
  p95: number;
  p99: number;
  errors: number;
  non2xx: number;
  total: number;
}

export interface FormLoadOptions {
  connections: number;
  /** Seconds. */
  duration: number;
  /** Must hold for the probe's answer. */
  check?: (body: string) => boolean;
}

export async function formLoad(
  name: string,
  url: string,
  body: string,
  authorization: string,
  opts: FormLoadOptions,
): Promise<Run> {
  // Validate once outside the load, so a broken setup cannot pass as a fast one.
  const probe = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
    body,
  });
  const text = await probe.text();
  if (probe.status !== 200 || (opts.check && !opts.check(text)))
    throw new Error(`${name}: probe failed ${probe.status} ${text}`);
  // Every response time is kept, so P95 is computed exactly (autocannon reports P90 and P97.5).
  const times: number[] = [];
  const inst = autocannon({
    url,
    method: 'POST',
    connections: opts.connections,
    duration: opts.duration,
    body,
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
  }) as unknown as EventEmitter;
  inst.on('response', (_c: unknown, _status: number, _bytes: number, ms: number) => {
    times.push(ms);
  });
  const r = await new Promise<autocannon.Result>((resolve) => inst.on('done', resolve));
  const lat = summarize(times);
  const run = {
    name,
    requestsPerSec: Math.round(r.requests.average),
    p50: lat.p50,
    p95: lat.p95,
    p99: lat.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
    total: r.requests.total,
  };
  console.log(
    `${name}: ${run.requestsPerSec} req/s, P50 ${run.p50} ms, P99 ${run.p99} ms,` +
      ` errors ${run.errors}, non-2xx ${run.non2xx}`,
  );
  return run;
}
