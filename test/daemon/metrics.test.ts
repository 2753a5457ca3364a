/**
 * Prometheus /metrics (docs/metrics.md): a listener of its own (IAM_METRICS_PORT), scraped
 * before and after real requests, a job run and an outbox entry, checking that each series
 * moved by what was done; the route label is the router's template; the service port does not
 * serve /metrics; wrong settings stop the start; with IAM_WORKERS=2 the supervisor's scrape sums
 * the workers; and the Grafana dashboard in docs/ queries only series a real scrape exports.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../shared/config.js';
import { ConfigError } from '../../shared/config.js';
import { createTestDatabase, TEST_SECRET_KEY, usingMysql, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon, healthz } from '../helpers/daemon.js';
import { clientCredentialsToken, introspectAs, seed, type Seeded } from '../helpers/seed.js';
import { sql } from '../helpers/oauth.js';
import { projectRoot } from '../helpers/architecture.js';
import { fileURLToPath } from 'node:url';
import { until } from '../helpers/poll.js';
import { api } from '../helpers/api.js';

type Samples = Map<string, number>;

/** `name{a="x",b="y"}` with the labels sorted, so a lookup does not depend on their order. */
function key(name: string, labels: Record<string, string> = {}): string {
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k]}"`);
  return parts.length ? `${name}{${parts.join(',')}}` : name;
}

/** Parses the text format (version 0.0.4) into samples, and the metric families its TYPE lines declare. */
function parse(text: string): { samples: Samples; types: Map<string, string> } {
  const samples: Samples = new Map();
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1], type[2]);
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    samples.set(key(m[1], labels), Number(m[3]));
  }
  return { samples, types };
}

async function scrape(port: number): Promise<{ samples: Samples; types: Map<string, string>; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (res.status !== 200) throw new Error(`scrape: ${res.status} ${await res.text()}`);
  const contentType = res.headers.get('content-type') ?? '';
  if (!contentType.startsWith('text/plain; version=0.0.4')) throw new Error(`scrape content type: ${contentType}`);
  const text = await res.text();
  return { ...parse(text), text };
}

const at = (s: Samples, name: string, labels: Record<string, string> = {}) => s.get(key(name, labels)) ?? 0;

/** The metrics listener's port, from its log line (which may come a moment after readiness). */
async function metricsPort(d: Daemon): Promise<number> {
  await until(() => d.logs.some((l) => l.msg === 'metrics listening'), { timeoutMs: 10_000 });
  const line = d.logs.find((l) => l.msg === 'metrics listening');
  if (!line || typeof line.port !== 'number') throw new Error(`no 'metrics listening' line:\n${d.output()}`);
  return line.port;
}

// A form post with client_secret_basic (RFC 6749 section 2.3.1) to a full URL.
const post = (url: string, auth: { clientId: string; secret: string }, form: Record<string, string>) =>
  api(url, 'POST', '', {
    raw: new URLSearchParams(form).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic ' + Buffer.from(`${auth.clientId}:${auth.secret}`).toString('base64'),
    },
  });

let db: TestDb;
let seeded: Seeded;
let daemon: Daemon;

test.before(async () => {
  db = await createTestDatabase();
  seeded = await seed(db.url, db.dir);
  daemon = await startDaemon(db.url, db.dir, { IAM_METRICS_PORT: '0' });
});

test.after.always(async () => {
  await daemon?.stop('SIGKILL');
  await db?.drop();
});

test.serial('the series move by what the requests, a job run and the outbox did', async (t) => {
  const port = await metricsPort(daemon);
  t.not(port, daemon.port);
  const before = (await scrape(port)).samples;

  // A token, then introspection: a miss (verified, then cached), a hit, and after revocation a
  // hit whose revocation check says revoked (the cache never saves that check).
  const caller = seeded.platform;
  const token = await clientCredentialsToken(daemon.url, caller.clientId, caller.secret);
  t.is((await introspectAs(daemon.url, caller, token)).body.active, true);
  t.is((await introspectAs(daemon.url, caller, token)).body.active, true);
  t.is((await post(`${daemon.url}/revoke`, caller, { token })).status, 200);
  t.deepEqual((await introspectAs(daemon.url, caller, token)).body, { active: false });
  // Failing requests: 401 on a route with a path parameter (its template is the label, never
  // the tenant id), and a path no route matches.
  t.is((await fetch(`${daemon.url}/api/admin/tenants/${seeded.tenantId}`)).status, 401);
  t.is((await fetch(`${daemon.url}/no/such/path`)).status, 404);

  // An outbox entry of a kind no deliverer takes, due 5 s ago: the backlog counts it.
  const now = Date.now();
  await sql(
    db.url,
    db.dir,
    'INSERT INTO outbox (id, tenant_id, kind, payload_sealed, status, attempts, next_attempt_at, claimed_by, ' +
      'claimed_until, last_error, delivered_via, created_at, updated_at) ' +
      "VALUES (?, NULL, 'metrics-test', 'x', 'pending', 0, ?, NULL, NULL, NULL, NULL, ?, ?)",
    ['obx_metrics_test', now - 5_000, now - 5_000, now - 5_000],
  );

  // The provisioning job runs every second: wait for a run after the first scrape, and for a
  // scheduled one (a run a kick started sets no lag; on a loaded machine the first may be one).
  const provisioningRuns = (s: Samples) => at(s, 'iam_job_runs_total', { job: 'provisioning', outcome: 'ok' });
  const lagKey = key('iam_job_lag_seconds', { job: 'provisioning' });
  let after = (await scrape(port)).samples;
  await until(
    async () => {
      after = (await scrape(port)).samples;
      return provisioningRuns(after) > provisioningRuns(before) && after.has(lagKey);
    },
    { timeoutMs: 30_000, intervalMs: 250, what: 'a scheduled provisioning run counted' },
  );
  t.true(provisioningRuns(after) > provisioningRuns(before), 'a provisioning job run was counted');

  const delta = (name: string, labels: Record<string, string>) => at(after, name, labels) - at(before, name, labels);
  t.is(delta('iam_http_requests_total', { method: 'POST', route: '/token', status: '200' }), 1);
  t.is(delta('iam_http_requests_total', { method: 'POST', route: '/introspect', status: '200' }), 3);
  t.is(delta('iam_http_requests_total', { method: 'POST', route: '/revoke', status: '200' }), 1);
  t.is(delta('iam_http_requests_total', { method: 'GET', route: '/api/admin/tenants/:tenantId', status: '401' }), 1);
  t.is(delta('iam_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }), 1);
  t.is(delta('iam_http_request_duration_seconds_count', { method: 'POST', route: '/introspect' }), 3);
  t.is(delta('iam_http_request_duration_seconds_bucket', { method: 'POST', route: '/introspect', le: '+Inf' }), 3);
  t.true(delta('iam_http_request_duration_seconds_sum', { method: 'POST', route: '/introspect' }) > 0);
  t.is(delta('iam_introspection_cache_total', { result: 'miss' }), 1);
  t.is(delta('iam_introspection_cache_total', { result: 'hit' }), 2);
  t.is(delta('iam_revocation_checks_total', { result: 'ok' }), 2);
  t.is(delta('iam_revocation_checks_total', { result: 'revoked' }), 1);
  // No raw path in any label: the tenant id never appears.
  const text = (await scrape(port)).text;
  t.false(text.includes(seeded.tenantId), 'no id in a label');
  t.false(text.includes('/no/such/path'));

  t.true(delta('iam_job_duration_seconds_count', { job: 'provisioning' }) >= 1);
  t.true(after.has(lagKey), 'the job lag is reported');
  t.true(at(after, 'iam_job_lag_seconds', { job: 'provisioning' }) >= 0);
  t.true(at(after, 'iam_job_last_success_timestamp_seconds', { job: 'provisioning' }) * 1000 > now - 60_000);
  t.is(at(after, 'iam_outbox_backlog', { kind: 'metrics-test', state: 'pending' }), 1);
  t.true(at(after, 'iam_outbox_oldest_due_seconds', { kind: 'metrics-test' }) >= 5);
  // The request pool: SQLite's one connection, or the MySQL pool of 20.
  t.is(at(after, 'iam_db_pool_max_connections', { pool: 'app' }), usingMysql() ? 20 : 1);
  t.true(after.has(key('iam_db_pool_connections', { pool: 'app', state: 'idle' })));
  t.true(after.has(key('iam_db_pool_waiting', { pool: 'app' })));
  if (usingMysql()) t.is(at(after, 'iam_db_pool_max_connections', { pool: 'jobs' }), 5);
  // The federation poller's series (docs/metrics.md): no trust source here, so nothing is
  // overdue, nothing in flight, and no poll started late.
  for (const name of [
    'iam_federation_poll_overdue_seconds',
    'iam_federation_polls_in_flight',
    'iam_federation_poll_lateness_seconds_count',
  ]) {
    t.true(after.has(name), `${name} is exported`);
    t.is(at(after, name), 0);
  }
  // prom-client's default Node.js series, the event-loop lag among them.
  t.true(after.has('nodejs_eventloop_lag_seconds'));
  t.true(after.has('process_resident_memory_bytes'));
});

test.serial('the service port does not serve /metrics, and the metrics port serves nothing else', async (t) => {
  const port = await metricsPort(daemon);
  const onService = await fetch(`${daemon.url}/metrics`);
  t.is(onService.status, 404);
  t.is(((await onService.json()) as { error: string }).error, 'not_found');
  for (const [method, path] of [
    ['GET', '/'],
    ['GET', '/healthz'],
    ['POST', '/metrics'],
  ]) {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method });
    t.is(res.status, 404, `${method} ${path}`);
    const body = (await res.json()) as { error: string; message: string };
    t.is(body.error, 'not_found');
    t.regex(body.message, /GET \/metrics/);
  }
  // A scrape is not a request of the service: it does not count itself.
  const a = (await scrape(port)).samples;
  const b = (await scrape(port)).samples;
  const total = (s: Samples) =>
    [...s].filter(([k]) => k.startsWith('iam_http_requests_total{')).reduce((n, [, v]) => n + v, 0);
  t.is(total(b), total(a));
});

test.serial('the Grafana dashboard queries only series a real scrape exports', async (t) => {
  const root = projectRoot(fileURLToPath(import.meta.url));
  const dashboard = JSON.parse(readFileSync(join(root, 'docs', 'grafana-dashboard.json'), 'utf8')) as {
    title: string;
    panels: { title: string; type: string; targets?: { expr: string; datasource?: unknown }[] }[];
    templating: { list: { name: string; type: string; query?: string }[] };
  };
  t.truthy(dashboard.title);
  const ds = dashboard.templating.list.find((v) => v.type === 'datasource');
  t.is(ds?.name, 'datasource');
  t.is(ds?.query, 'prometheus');

  const { types } = await scrape(await metricsPort(daemon));
  const exported = new Set<string>();
  for (const [name, type] of types) {
    exported.add(name);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) exported.add(name + s);
  }
  const queried = new Set<string>();
  const panels = dashboard.panels.filter((p) => p.type !== 'row');
  t.true(panels.length >= 10);
  for (const p of panels) {
    t.true((p.targets ?? []).length > 0, `panel "${p.title}" has a query`);
    for (const target of p.targets ?? []) {
      t.deepEqual(target.datasource, { type: 'prometheus', uid: '${datasource}' }, p.title);
      for (const m of target.expr.matchAll(/\b((?:iam|nodejs|process)_[a-z0-9_]+)\b/g)) queried.add(m[1]);
    }
  }
  const missing = [...queried].filter((n) => !exported.has(n));
  t.deepEqual(missing, [], 'every series the dashboard queries is exported');
  // And every series of ours has a panel.
  const ours = [...types.keys()].filter((n) => n.startsWith('iam_'));
  const shown = (n: string) => [...queried].some((q) => q === n || q.startsWith(n + '_'));
  t.deepEqual(
    ours.filter((n) => !shown(n)),
    [],
    'every iam_ series is on the dashboard',
  );
});

test('wrong metrics settings stop the start, naming the variable', async (t) => {
  const env = { IAM_SECRET_KEY: TEST_SECRET_KEY, IAM_DATABASE_URL: 'sqlite::memory:', IAM_PORT: '8080' };
  const refused = (extra: Record<string, string>, variable: string, pattern: RegExp) => {
    const e = t.throws<ConfigError>(() => loadConfig({ ...env, ...extra }), { instanceOf: ConfigError });
    t.is(e?.variable, variable);
    t.regex(e?.message ?? '', pattern);
  };
  refused({ IAM_METRICS_PORT: 'abc' }, 'IAM_METRICS_PORT', /port number/);
  refused({ IAM_METRICS_PORT: '70000' }, 'IAM_METRICS_PORT', /0 to 65535/);
  refused({ IAM_METRICS_PORT: '-1' }, 'IAM_METRICS_PORT', /port number/);
  refused({ IAM_METRICS_PORT: '8080' }, 'IAM_METRICS_PORT', /differ from IAM_PORT/);
  refused({ IAM_METRICS_PORT: '9464', IAM_METRICS_HOST: 'bad host!' }, 'IAM_METRICS_HOST', /not a host/);
  refused({ IAM_METRICS_HOST: '0.0.0.0' }, 'IAM_METRICS_HOST', /IAM_METRICS_PORT is not/);
  const off = loadConfig(env);
  t.is(off.metricsPort, undefined);
  const on = loadConfig({ ...env, IAM_METRICS_PORT: '9464' });
  t.deepEqual([on.metricsPort, on.metricsHost], [9464, '127.0.0.1']);
  t.is(loadConfig({ ...env, IAM_METRICS_PORT: '0', IAM_METRICS_HOST: '::' }).metricsHost, '::');

  // The daemon itself: configuration error, exit 78, the variable named on stderr.
  const err = await t.throwsAsync(startDaemon(db.url, db.dir, { IAM_METRICS_PORT: 'nine' }));
  t.regex(err?.message ?? '', /exited with 78/);
  t.regex(err?.message ?? '', /IAM_METRICS_PORT: must be a port number/);
});

test('with two workers the supervisor serves /metrics and sums them', async (t) => {
  const wdb = await createTestDatabase();
  t.teardown(() => wdb.drop());
  await seed(wdb.url, wdb.dir);
  const d = await startDaemon(wdb.url, wdb.dir, { IAM_WORKERS: '2', IAM_METRICS_PORT: '0' });
  t.teardown(() => d.stop('SIGKILL'));
  const listening = () => d.logs.filter((l) => l.msg === 'listening' && typeof l.worker === 'number');
  t.true(await until(() => listening().length === 2, { timeoutMs: 20_000, what: () => d.output() }));
  // The supervisor (no worker field) listens on the metrics port; the workers do not.
  const port = await metricsPort(d);
  const metricsLines = d.logs.filter((l) => l.msg === 'metrics listening');
  t.is(metricsLines.length, 1);
  t.is(metricsLines[0].worker, undefined);

  const healthzCount = (s: Samples) =>
    at(s, 'iam_http_requests_total', { method: 'GET', route: '/healthz', status: '200' });
  const first = (await scrape(port)).samples;
  const before = healthzCount(first);
  const durationsBefore = at(first, 'iam_http_request_duration_seconds_count', { method: 'GET', route: '/healthz' });
  for (let i = 0; i < 20; i++) t.is(await healthz(d.url), 200);
  const served = () => new Set(d.logs.filter((l) => l.msg === 'request' && l.path === '/healthz').map((l) => l.pid));
  t.true(
    await until(() => served().size === 2, { timeoutMs: 5_000, what: 'both workers served some of the requests' }),
  );

  const { samples } = await scrape(port);
  t.is(healthzCount(samples) - before, 20, 'every request counted once, whichever worker served it');
  t.is(
    at(samples, 'iam_http_request_duration_seconds_count', { method: 'GET', route: '/healthz' }) - durationsBefore,
    20,
  );
  // Node's series come from the workers too (summed or averaged by prom-client's rules).
  t.true(samples.has('nodejs_eventloop_lag_seconds'));
  t.true(samples.has(key('iam_introspection_cache_total', { result: 'hit' })));
});
