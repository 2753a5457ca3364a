/**
 * Several processes refreshing one tenant's upstream tokens at the same moment on one MariaDB
 * database: two real daemons, each with the `external-token-refresh` job, and two
 * `iam external-tokens refresh` runs started at the job's tick. The per-link lease (a
 * conditional UPDATE with its row count checked) lets exactly one of them call the upstream for
 * each link, and each link ends up with the tokens the upstream issued for it, sealed.
 *
 * The job runs every 30 s (on the wall clock's :00 and :30) under a job lease, so of the two
 * daemons one scans and the other skips the tick: a second daemon never scans beside the first.
 * The scanners that overlap with the daemon's scan are therefore the CLI processes, started
 * just before the tick so they are scanning while the daemon is. The upstream is a real
 * node-oidc-provider that holds each refresh a while, so one scanner alone would take several
 * seconds over all the links; its own log of refreshes in flight at once proves the overlap
 * (each scanner refreshes one link at a time, so two in flight means two processes), and the
 * run records name the process of each run.
 */
import test from 'ava';
import { createExternalTokenRefresh } from '../../shared/services/external-token-refresh/index.js';
import { ExternalTokenRefreshSettingsService } from '../../shared/services/external-token-refresh/config.js';
import type { RunSummary } from '../../shared/services/external-token-refresh/scan.js';
import { DEFAULT_OUTBOUND_POLICY } from '../../shared/net/outbound.js';
import { iam } from '../helpers/cli.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { TEST_SECRET_KEY, testDatabase, usingMysql } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';
import { startRefreshUpstream, type UpstreamTokens } from '../helpers/refresh-upstream.js';
import { linkUser, openLinkToken, rawLink, registerUpstream } from '../helpers/refresh-links.js';
import { until } from '../helpers/poll.js';

const actor = { type: 'system' as const, id: 'test' };
const JOB = 'external-token-refresh';
/** Enough links, each held HOLD_MS by the upstream, that one scanner alone takes some 10 s. */
const LINKS = 24;
const HOLD_MS = 400;
const CLI_RUNS = 2;
/** The job's schedule (daemon/jobs/external-token-refresh.ts): every 30 s on the wall clock. */
const SLOT_MS = 30_000;

/** A clock to reach: the test is arranged around the job's next tick. */
const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

test('two daemons and two `iam external-tokens refresh` processes scanning at once call the upstream once per link', async (t) => {
  t.timeout(170_000);
  // This file is in the MariaDB lane's file list only; running it elsewhere is a mistake, not a skip.
  t.true(usingMysql(), 'IAM_TEST_DATABASE_URL must name a MariaDB/MySQL server (npm run test:mariadb)');
  const db = await testDatabase(t);
  const up = await startRefreshUpstream({ accessTtlSeconds: 3600, refreshDelayMs: HOLD_MS });
  t.teardown(() => up.close());
  const main = await openServices(db.url, db.dir);
  t.teardown(() => main.ds.destroy());
  const tenant = await activeTenant(main.provisioning, { name: 'Daemons' }, actor);
  const providerId = await registerUpstream(main.ds, tenant.id, up);
  const links: { id: string; tokens: UpstreamTokens }[] = [];
  for (let i = 0; i < LINKS; i++) {
    const user = await main.directory.createUser(tenant.id, { email: `d${i}@example.com`, name: 'D' }, actor);
    const tokens = await up.signIn(`d-${i}`);
    const id = await linkUser(main.ds, {
      tenantId: tenant.id,
      providerId,
      userId: user.id,
      upstream: up,
      sub: `d-${i}`,
      tokens,
      accessExpiresAt: Date.now() + 30_000,
    });
    links.push({ id, tokens });
  }
  t.is(up.tokenCalls.refresh_token ?? 0, 0);

  // Two daemons of one service (same issuer) on the same database, both running the job. The
  // tenant's scheduled scanning stays disabled until just before the chosen tick, so no earlier
  // tick refreshes anything on its own.
  const env = { IAM_OUTBOUND_ALLOW_LOOPBACK: 'true', IAM_OUTBOUND_CA_FILE: up.cert.certFile };
  // One service: the second daemon takes the first one's issuer (and port-0 daemons learn
  // their port only once up, so they start one after the other).
  const daemonEnv = { ...env, IAM_LOG_LEVEL: 'debug', IAM_WORKERS: '1' };
  const first = await startDaemon(db.url, db.dir, daemonEnv);
  const daemons: Daemon[] = [first, await startDaemon(db.url, db.dir, { ...daemonEnv, IAM_ISSUER: first.url })];
  t.teardown(() => Promise.all(daemons.map((d) => d.stop())).then(() => undefined));
  const holderOf = (d: Daemon) => {
    const h = d.logs.find((l) => l.msg === 'scheduler started')?.holder;
    return typeof h === 'string' ? h : '';
  };
  t.true(
    await until(() => daemons.every((d) => holderOf(d) !== ''), { timeoutMs: 10_000, what: 'both schedulers started' }),
  );
  const holders = daemons.map(holderOf);
  t.true(
    daemons.every((d) => d.logs.some((l) => l.msg === 'scheduler started' && (l.jobs as string[]).includes(JOB))),
    'both daemons run the external-token-refresh job',
  );
  const jobLines = (d: Daemon) => d.logs.filter((l) => l.job === JOB).length;

  // The next tick at least 3 s away. Scanning is enabled 1.5 s before it (the previous tick,
  // 28.5 s earlier, has long found nothing enabled) and the CLI runs start 1 s before it: they
  // load and connect meanwhile, and take their first links about when the daemon takes its own.
  const tick = Math.ceil((Date.now() + 3_000) / SLOT_MS) * SLOT_MS;
  await sleepUntil(tick - 1_500);
  await new ExternalTokenRefreshSettingsService(main.ds).update(tenant.id, { enabled: true }, actor);
  const linesBefore = daemons.map(jobLines);
  await sleepUntil(tick - 1_000);
  const cliRuns = await Promise.all(
    Array.from({ length: CLI_RUNS }, () =>
      iam(db, ['external-tokens', 'refresh', '--tenant', tenant.id, '--json'], env),
    ),
  );
  for (const r of cliRuns) t.is(r.code, 0, r.stderr + r.stdout);
  // --json prints times as ISO 8601 (docs/cli.md, "Times in --json"): back to epoch ms to compare.
  const manual = cliRuns.map((r) => {
    const s = JSON.parse(r.stdout) as Record<string, unknown>;
    const times = { startedAt: Date.parse(String(s.startedAt)), finishedAt: Date.parse(String(s.finishedAt)) };
    return { ...s, ...times } as unknown as RunSummary;
  });

  // The daemon that won the job lease records its scheduled run once its scan is over.
  const scan = createExternalTokenRefresh(main.ds, {
    secretKey: TEST_SECRET_KEY,
    policy: { ...DEFAULT_OUTBOUND_POLICY, allowLoopback: true, extraCaPem: up.cert.cert },
    holder: 'test-reader',
  });
  const scheduledRuns = async () =>
    (await scan.recentRuns(50)).filter((r) => r.trigger_kind === 'scheduled' && r.tenants.includes(tenant.id));
  await until(async () => (await scheduledRuns()).length > 0, {
    timeoutMs: 30_000,
    intervalMs: 200,
    what: 'a scheduled run recorded',
  });
  const scheduled = await scheduledRuns();
  t.true(scheduled.length >= 1, 'a daemon ran the scheduled scan at the tick');
  // Both daemons' jobs fired at the tick: one took the job lease and scanned, the other was
  // turned away by it (or, had it come late, found nothing left to do).
  t.true(
    await until(() => daemons.every((d, i) => jobLines(d) > linesBefore[i]), {
      timeoutMs: 10_000,
      what: 'both daemons ran the job at the tick',
    }),
  );
  const scanner = scheduled.map((r) => holders.findIndex((h) => h.endsWith(r.holder)));
  t.true(
    scanner.every((i) => i >= 0),
    `the scheduled runs are the daemons' own: ${scheduled.map((r) => r.holder).join(', ')} of ${holders.join(', ')}`,
  );

  // Exactly one upstream refresh per link, each presenting that link's refresh token, and every
  // link refreshed.
  t.is(up.tokenCalls.refresh_token, LINKS, 'one upstream call per link, whatever the number of scanners');
  for (const l of links)
    t.is(
      up.refreshes.filter((c) => c.presented === l.tokens.refresh_token).length,
      1,
      `link ${l.id}: its refresh token was presented once`,
    );
  t.true(
    up.refreshes.every((c) => c.status === 200 && c.issued?.access_token),
    'the upstream answered every refresh with new tokens',
  );
  const runs = [...scheduled, ...manual];
  t.is(
    runs.reduce((n, r) => n + r.refreshed, 0),
    LINKS,
    'the runs together refreshed every link once',
  );
  t.is(
    runs.reduce((n, r) => n + r.invalid_grant + r.errors + r.backoff + r.circuit_open, 0),
    0,
    'no scanner used a refresh token another had already rotated',
  );

  // They overlapped: the upstream had refreshes of several processes in flight at once, and the
  // daemon's scan and the CLI runs each refreshed links while the others were running.
  t.true(
    up.refreshInFlight.max >= 2,
    `refreshes from several processes were in flight at once (at most ${up.refreshInFlight.max})`,
  );
  const daemonRun = scheduled.find((r) => r.refreshed > 0);
  t.truthy(daemonRun, 'the daemon refreshed links');
  const busyManual = manual.filter((r) => r.refreshed > 0);
  t.true(busyManual.length >= 1, 'a CLI run refreshed links');
  t.true(
    busyManual.some((m) => m.startedAt < daemonRun!.finished_at && daemonRun!.started_at < m.finishedAt),
    'a CLI run refreshed links while the daemon was scanning',
  );
  t.log(
    `upstream refreshes in flight at most ${up.refreshInFlight.max}; refreshed per run: ` +
      `daemon ${scanner.join('/')} ${scheduled.map((r) => r.refreshed).join('/')}, ` +
      `CLI ${manual.map((r) => r.refreshed).join('/')}`,
  );

  // What is at rest: each link holds, sealed, exactly the tokens the upstream issued for it.
  for (const l of links) {
    const call = up.refreshes.find((c) => c.presented === l.tokens.refresh_token)!;
    const row = await rawLink(main.ds, tenant.id, l.id);
    const access = openLinkToken(tenant.id, row, 'access');
    t.not(access, l.tokens.access_token);
    t.is(access, call.issued?.access_token ?? '(none issued)', 'the access token the upstream issued');
    t.is(
      openLinkToken(tenant.id, row, 'refresh'),
      call.issued?.refresh_token ?? '(none issued)',
      'the refresh token the upstream rotated to',
    );
    t.false(row.access_token_sealed.includes(access), 'sealed, not in clear');
    t.is(row.lease_holder, null);
    t.is(row.state, 'active');
    t.is(row.refresh_failures, 0);
  }
});
