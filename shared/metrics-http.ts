/**
 * The per-request HTTP series of shared/metrics.ts, kept as plain numbers: a request finds its
 * (method, route) series with two Map lookups and adds to a few counters, and the numbers are
 * turned into Prometheus values only when /metrics is scraped (SnapshotMetric, also used for
 * the introspection counters). prom-client's own `observe`/`inc` hash the label set and
 * allocate on every call, which the introspection hot path cannot afford.
 */
import type { Aggregator } from 'prom-client';

/** Seconds. Introspection and cached reads answer in about a millisecond, so the low end is fine-grained. */
export const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
/** The `route` label of a request no route matched (404, 405, a refused body before routing). */
export const UNMATCHED = 'unmatched';

/** HTTP methods get their own label value; anything else is `other` (the label set stays bounded). */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * The counts of one (method, route): the duration histogram (bucket i counts the durations in
 * (b[i-1], b[i]], not cumulative until exported) and a count per status.
 */
export class RouteSeries {
  readonly buckets = new Float64Array(HTTP_BUCKETS.length);
  sum = 0;
  count = 0;
  readonly statuses = new Map<number, number>();
  constructor(
    readonly method: string,
    readonly route: string,
  ) {}

  observe(status: number, seconds: number): void {
    this.count++;
    this.sum += seconds;
    let i = 0;
    while (i < HTTP_BUCKETS.length && seconds > HTTP_BUCKETS[i]) i++;
    if (i < HTTP_BUCKETS.length) this.buckets[i]++;
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
  }
}

/** One sample as prom-client's registries read it (`metricName` for a histogram's _bucket, _sum, _count). */
export type Values = { metricName: string; labels: Record<string, string | number>; value: number }[];

/**
 * A metric whose values are read from plain counters when the registry is scraped. It has the
 * shape prom-client's Registry and AggregatorRegistry read (`name`, `help`, `type`,
 * `aggregator`, `get()`), which is all a registered metric needs.
 */
export class SnapshotMetric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
    private readonly read: () => Values,
    readonly aggregator: Aggregator = 'sum',
  ) {}

  get(): Promise<{ name: string; help: string; type: string; aggregator: Aggregator; values: Values }> {
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: this.read(),
    });
  }

  /** Registry.resetMetrics: the counts are the process's own; nothing to reset from outside. */
  reset(): void {}
}

/** Every (method, route template) seen so far, each with its series. */
export class HttpRouteTable {
  private readonly routes = new Map<string, Map<string, RouteSeries>>();

  /**
   * The series of one (method, route template), made on first use and kept: a request after
   * the first finds it with two Map lookups. `route` must be a template (never a raw path), so
   * the set stays as small as the route table.
   */
  series(method: string, route: string | undefined): RouteSeries {
    const m = METHODS.has(method) ? method : 'other';
    let byRoute = this.routes.get(m);
    if (!byRoute) {
      byRoute = new Map();
      this.routes.set(m, byRoute);
    }
    const r = route ?? UNMATCHED;
    let s = byRoute.get(r);
    if (!s) {
      s = new RouteSeries(m, r);
      byRoute.set(r, s);
    }
    return s;
  }

  requestValues(): Values {
    const out: Values = [];
    for (const byRoute of this.routes.values())
      for (const s of byRoute.values())
        for (const [status, value] of s.statuses)
          out.push({
            metricName: 'iam_http_requests_total',
            labels: { method: s.method, route: s.route, status: String(status) },
            value,
          });
    return out;
  }

  durationValues(): Values {
    const out: Values = [];
    const name = 'iam_http_request_duration_seconds';
    for (const byRoute of this.routes.values())
      for (const s of byRoute.values()) {
        const labels = { method: s.method, route: s.route };
        let cumulative = 0;
        for (let i = 0; i < HTTP_BUCKETS.length; i++) {
          cumulative += s.buckets[i];
          out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: HTTP_BUCKETS[i] }, value: cumulative });
        }
        out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: s.count });
        out.push({ metricName: `${name}_sum`, labels, value: s.sum });
        out.push({ metricName: `${name}_count`, labels, value: s.count });
      }
    return out;
  }
}
