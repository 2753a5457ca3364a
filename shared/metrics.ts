/**
 * The daemon's Prometheus series (docs/metrics.md), on a registry of their own.
 *
 * Built once by daemon/main.ts when IAM_METRICS_PORT is set, and handed to what records into
 * it: the HTTP middleware (daemon/metrics/http.ts), the introspection service, the job
 * scheduler. When metrics are off nothing is built, and each of those sees `undefined`.
 *
 * The hot path. Introspection answers in tens of microseconds, so what a request records must
 * cost next to nothing. prom-client's own `observe`/`inc` hash the label set and allocate on
 * every call; the per-request series are instead plain numbers in objects resolved once per
 * (method, route) and then found with two Map lookups, and they are turned into Prometheus
 * values only when /metrics is scraped (`SnapshotMetric`); both are in metrics-http.ts. The
 * low-rate series (jobs, gauges read at scrape time) use prom-client's classes as they are.
 *
 * With IAM_WORKERS > 1 every worker keeps its own registry and the supervisor sums them with
 * prom-client's AggregatorRegistry (daemon/metrics/cluster.ts): each metric names how it is
 * aggregated (counters and histograms sum; a database-wide count is the same in every worker,
 * so it takes the max instead of being counted once per worker).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import { HttpRouteTable, SnapshotMetric, type RouteSeries } from './metrics-http.js';

export { HTTP_BUCKETS, UNMATCHED } from './metrics-http.js';

/** Seconds: jobs run from milliseconds (an empty outbox) to minutes (a federation poll). */
export const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900] as const;

/** Seconds: a due metadata poll starts within the rescan interval, or one slot (the document deadline) late. */
export const FEDERATION_LATENESS_BUCKETS = [0.1, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600] as const;

/** What the introspection service records (shared/services/introspection.ts). */
export interface IntrospectionObserver {
  cacheHit(): void;
  cacheMiss(): void;
  /** One revocation check; `reason` is why the token is no longer good, undefined when it is. */
  revocationCheck(reason: string | undefined): void;
}

export type JobOutcome = 'ok' | 'error' | 'aborted' | 'skipped';

/** What the job scheduler records (daemon/jobs/scheduler.ts). */
export interface JobObserver {
  /** A run ended (`skipped`: another daemon held the lease); `seconds` is undefined for a run that did not start. */
  jobRun(job: string, outcome: JobOutcome, seconds: number | undefined): void;
  /** A scheduled run started `seconds` after the earliest schedule slot it serves. */
  jobLag(job: string, seconds: number): void;
}

/** What the federation metadata poller records (shared/services/federation/metadata-poller.ts). */
export interface FederationPollObserver {
  /** A due trust source's poll started `seconds` after the source fell due (its nextRefreshAt). */
  federationPollLateness(seconds: number): void;
  /** Metadata polls in flight on this daemon now. */
  federationPollsInFlight(n: number): void;
}

/** The outbox rows still to deliver (or given up on), as the outbox service counts them. */
export interface OutboxBacklogRow {
  kind: string;
  status: 'pending' | 'sending' | 'failed';
  count: number;
  /** Seconds since the oldest row of this kind and status fell due (pending rows only; 0 if none is due). */
  oldestDueSeconds?: number;
}

/** A database connection pool at one instant (shared/db/pool-stats.ts). */
export interface PoolSnapshot {
  /** Connections open and idle, and open and in use. */
  idle: number;
  inUse: number;
  /** The most connections the pool opens. */
  max: number;
  /** Requests waiting for a connection (on SQLite: for the connection's gate). */
  waiting: number;
}

export class Metrics implements IntrospectionObserver, JobObserver, FederationPollObserver {
  readonly registry = new Registry();
  private readonly http = new HttpRouteTable();
  private cacheHits = 0;
  private cacheMisses = 0;
  private readonly revocations = new Map<string, number>([
    ['ok', 0],
    ['revoked', 0],
  ]);
  private readonly jobRuns: Counter<'job' | 'outcome'>;
  private readonly jobDuration: Histogram<'job'>;
  private readonly jobLagGauge: Gauge<'job'>;
  private readonly jobLastSuccess: Gauge<'job'>;
  private outboxSource: (() => Promise<OutboxBacklogRow[]>) | undefined;
  /** The count in flight: the two outbox gauges of one scrape share one query. */
  private outboxInFlight: Promise<OutboxBacklogRow[]> | undefined;
  private readonly onCollectError: (what: string, e: unknown) => void;
  private readonly pools = new Map<string, () => PoolSnapshot | undefined>();
  private readonly fedLateness: Histogram;
  private readonly fedInFlight: Gauge;
  private fedOverdueSource: (() => Promise<number>) | undefined;

  constructor(opts: { defaultMetrics?: boolean; onCollectError?: (what: string, e: unknown) => void } = {}) {
    const reg = this.registry;
    this.onCollectError = opts.onCollectError ?? (() => undefined);
    const add = (m: SnapshotMetric) => reg.registerMetric(m as unknown as Metric<string>);
    add(
      new SnapshotMetric(
        'iam_http_requests_total',
        'HTTP requests answered, by method, route template and status.',
        'counter',
        () => this.http.requestValues(),
      ),
    );
    add(
      new SnapshotMetric(
        'iam_http_request_duration_seconds',
        'Time from the request reaching the application to its response being ready, by method and route template.',
        'histogram',
        () => this.http.durationValues(),
      ),
    );
    add(
      new SnapshotMetric(
        'iam_introspection_cache_total',
        'Introspection response cache lookups (RFC 7662 requests with a token), by result: hit or miss.',
        'counter',
        () => [
          { metricName: 'iam_introspection_cache_total', labels: { result: 'hit' }, value: this.cacheHits },
          { metricName: 'iam_introspection_cache_total', labels: { result: 'miss' }, value: this.cacheMisses },
        ],
      ),
    );
    add(
      new SnapshotMetric(
        'iam_revocation_checks_total',
        'Revocation checks of presented access tokens (every introspection, cache hits included), by result: ' +
          'ok, or the reason the token is no longer good.',
        'counter',
        () =>
          [...this.revocations].map(([result, value]) => ({
            metricName: 'iam_revocation_checks_total',
            labels: { result },
            value,
          })),
      ),
    );
    this.jobRuns = new Counter({
      name: 'iam_job_runs_total',
      help: 'Background job runs, by job and outcome (ok, error, aborted, skipped: another daemon held the lease).',
      labelNames: ['job', 'outcome'],
      registers: [reg],
    });
    this.jobDuration = new Histogram({
      name: 'iam_job_duration_seconds',
      help: 'Duration of background job runs that started, by job.',
      labelNames: ['job'],
      buckets: [...JOB_BUCKETS],
      registers: [reg],
    });
    this.jobLagGauge = new Gauge({
      name: 'iam_job_lag_seconds',
      help:
        'How late the last scheduled run of a job started, against the earliest schedule slot it served ' +
        '(slots that passed while a run was still going included).',
      labelNames: ['job'],
      registers: [reg],
      aggregator: 'max',
    });
    this.jobLastSuccess = new Gauge({
      name: 'iam_job_last_success_timestamp_seconds',
      help: 'Unix time at which a run of the job last ended ok (on this daemon).',
      labelNames: ['job'],
      registers: [reg],
      aggregator: 'max',
    });
    this.fedLateness = new Histogram({
      name: 'iam_federation_poll_lateness_seconds',
      help:
        'How late due federation trust sources started their metadata poll, against their nextRefreshAt ' +
        '(docs/federation.md, "Polling": at most one slot, the document deadline, while every worker is busy).',
      buckets: [...FEDERATION_LATENESS_BUCKETS],
      registers: [reg],
    });
    this.fedInFlight = new Gauge({
      name: 'iam_federation_polls_in_flight',
      help: 'Federation metadata polls running now (at most IAM_FEDERATION_POLL_CONCURRENCY per daemon).',
      registers: [reg],
    });
    const overdue = () => this.fedOverdueSource?.() ?? Promise.resolve(0);
    const onCollectError = this.onCollectError;
    // A database-wide figure, the same in every worker: the supervisor takes the max.
    new Gauge({
      name: 'iam_federation_poll_overdue_seconds',
      help:
        'Age of the most overdue federation trust source that is due and not being polled (0 when none is); ' +
        'counted at scrape time.',
      registers: [reg],
      aggregator: 'max',
      async collect() {
        try {
          this.set(await overdue());
        } catch (e) {
          onCollectError('federation poll overdue', e);
          this.reset();
        }
      },
    });
    const outbox = () => this.outboxSnapshot();
    // The same rows are counted by every worker of a daemon: the supervisor takes the max.
    new Gauge({
      name: 'iam_outbox_backlog',
      help: 'Outbox entries not delivered, by kind and state (pending, sending, failed); counted at scrape time.',
      labelNames: ['kind', 'state'],
      registers: [reg],
      aggregator: 'max',
      async collect() {
        const rows = await outbox();
        this.reset();
        for (const r of rows) this.set({ kind: r.kind, state: r.status }, r.count);
      },
    });
    new Gauge({
      name: 'iam_outbox_oldest_due_seconds',
      help: 'Age of the oldest pending outbox entry that is due, by kind (0 when none is due); counted at scrape time.',
      labelNames: ['kind'],
      registers: [reg],
      aggregator: 'max',
      async collect() {
        const rows = await outbox();
        this.reset();
        for (const r of rows) if (r.status === 'pending') this.set({ kind: r.kind }, r.oldestDueSeconds ?? 0);
      },
    });
    const pools = this.pools;
    new Gauge({
      name: 'iam_db_pool_connections',
      help: 'Database connections by pool (app: requests, jobs: background jobs) and state (idle, in_use).',
      labelNames: ['pool', 'state'],
      registers: [reg],
      collect() {
        this.reset();
        for (const [pool, read] of pools) {
          const s = read();
          if (!s) continue;
          this.set({ pool, state: 'idle' }, s.idle);
          this.set({ pool, state: 'in_use' }, s.inUse);
        }
      },
    });
    // One gauge per figure of a pool, each read from the pools' stats at scrape time.
    const perPool = (name: string, help: string, pick: (s: PoolSnapshot) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['pool'],
        registers: [reg],
        collect() {
          this.reset();
          for (const [pool, read] of pools) {
            const s = read();
            if (s) this.set({ pool }, pick(s));
          }
        },
      });
    perPool('iam_db_pool_max_connections', 'The most connections a pool opens, by pool.', (s) => s.max);
    perPool(
      'iam_db_pool_waiting',
      'Queries or transactions waiting for a connection, by pool (SQLite: waiting for the connection gate).',
      (s) => s.waiting,
    );
    // Process and runtime series under their usual names (process_*, nodejs_*), so the
    // standard Node.js dashboards work too; nodejs_eventloop_lag_seconds is the event-loop lag.
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: reg });
  }

  /** The text format Prometheus scrapes. */
  get contentType(): string {
    return this.registry.contentType;
  }

  // ---- HTTP ----

  /**
   * The series of one (method, route template), made on first use and kept: a request after
   * the first finds it with two Map lookups. `route` must be a template (never a raw path), so
   * the set stays as small as the route table.
   */
  httpSeries(method: string, route: string | undefined): RouteSeries {
    return this.http.series(method, route);
  }

  // ---- introspection ----

  cacheHit(): void {
    this.cacheHits++;
  }

  cacheMiss(): void {
    this.cacheMisses++;
  }

  revocationCheck(reason: string | undefined): void {
    const result = reason ?? 'ok';
    this.revocations.set(result, (this.revocations.get(result) ?? 0) + 1);
  }

  // ---- jobs ----

  jobRun(job: string, outcome: JobOutcome, seconds: number | undefined): void {
    this.jobRuns.inc({ job, outcome });
    if (seconds !== undefined) this.jobDuration.observe({ job }, seconds);
    if (outcome === 'ok') this.jobLastSuccess.set({ job }, Date.now() / 1000);
  }

  jobLag(job: string, seconds: number): void {
    this.jobLagGauge.set({ job }, Math.max(0, seconds));
  }

  /** Each job's last lag as iam_job_lag_seconds shows it (the console's overview reads it). */
  async jobLags(): Promise<{ job: string; seconds: number }[]> {
    return (await this.jobLagGauge.get()).values.map((v) => ({ job: String(v.labels.job), seconds: v.value }));
  }

  // ---- federation metadata poller ----

  federationPollLateness(seconds: number): void {
    this.fedLateness.observe(Math.max(0, seconds));
  }

  federationPollsInFlight(n: number): void {
    this.fedInFlight.set(n);
  }

  // ---- read at scrape time ----

  /** How overdue the metadata poller's queue is, seconds, read when /metrics is scraped. */
  collectFederationOverdue(source: () => Promise<number>): void {
    this.fedOverdueSource = source;
  }

  /** The outbox's backlog, counted when /metrics is scraped. */
  collectOutbox(source: () => Promise<OutboxBacklogRow[]>): void {
    this.outboxSource = source;
  }

  /**
   * One count per scrape: the registry reads its metrics concurrently, so the second gauge
   * finds the first one's query in flight. A failed count is reported and leaves the gauges
   * empty for this scrape rather than failing the whole scrape.
   */
  private outboxSnapshot(): Promise<OutboxBacklogRow[]> {
    const source = this.outboxSource;
    if (!source) return Promise.resolve([]);
    this.outboxInFlight ??= source()
      .catch((e: unknown) => {
        this.onCollectError('outbox backlog', e);
        return [];
      })
      .finally(() => {
        this.outboxInFlight = undefined;
      });
    return this.outboxInFlight;
  }

  /** A connection pool, read when /metrics is scraped; `undefined` from `read` leaves it out. */
  collectPool(pool: string, read: () => PoolSnapshot | undefined): void {
    this.pools.set(pool, read);
  }

  /** The scrape: every series in the text format. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
