/**
 * The daemon: config → database (migrate) → keys → app on the services of shared/container.ts → listen
 * → jobs → graceful stop. Building services is the container's; this file keeps the process.
 *
 * With IAM_WORKERS > 1 this process becomes a supervisor: it migrates the database and makes
 * sure a signing key exists (so workers never race each other doing it), then forks that many
 * worker processes that share the listening socket (node:cluster) and each run the whole
 * service. That is safe because a daemon keeps no state that matters outside the database:
 * several daemons already share one database, and workers are just daemons on one port.
 */
import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { ConfigError, loadConfig } from '../shared/config.js';
import { connect, createDataSource, migrate } from '../shared/db/data-source.js';
import { bindSecretKey } from '../shared/services/secret-key.js';
import { setAuditSink } from '../shared/services/audit.js';
import { buildServices } from '../shared/container.js';
import { startJobs } from './jobs/index.js';
import { buildApp, VERSION } from './app.js';
import { createLogger } from './log.js';
import { Metrics } from '../shared/metrics.js';
import { poolStats } from '../shared/db/index.js';
import { startMetricsListener, type MetricsListener } from './metrics/server.js';
import { clusterSource, reportToSupervisor } from './metrics/cluster.js';
import { bindEphemeral, listen, logListening, notReady } from './listen.js';

/** EX_CONFIG (sysexits.h): systemd's unit does not restart on it; a restart would not help. */
const EXIT_CONFIG = 78;

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`iam: configuration error: ${e.message}\n`);
      process.exit(EXIT_CONFIG);
    }
    throw e;
  }
  const worker = cluster.isWorker ? Number(process.env.IAM_WORKER_INDEX ?? cluster.worker?.id) : undefined;
  const logger = createLogger(config.logLevel, worker === undefined ? undefined : { worker, pid: process.pid });
  // IAM_PORT=0: bound now, so that the issuer naming port 0 gets the real one (daemon/listen.ts).
  let handle = notReady;
  const server = createServer((req, res) => handle(req, res));
  if (config.port === 0 && (worker !== undefined || config.workers <= 1)) config = await bindEphemeral(server, config);
  if (worker === undefined) {
    logger.info(
      {
        version: VERSION,
        database: config.database.kind,
        issuer: config.issuer,
        secretKey: config.secretKeySource,
        workers: config.workers,
      },
      'starting',
    );
  }

  // Group commit on SQLite only when this process is the file's one writer connection: with
  // worker processes each would hold the write lock for a whole event-loop turn, and the
  // others wait for it asleep (busy_timeout).
  const ds = await connect(
    createDataSource(config.database, 'app', { sqliteSynchronous: config.sqliteSynchronous, log: logger }),
    undefined,
    {
      groupCommit: config.workers <= 1,
      onCheckpointError: (e) =>
        logger.error({ err: e }, 'the SQLite checkpoint thread stopped; checkpoints run in COMMITs again'),
    },
  );
  // The Prometheus series (docs/metrics.md), only when a metrics listener is configured: off,
  // nothing records and the HTTP middleware is not mounted. A supervisor records nothing itself
  // (it sums its workers' series, below).
  const supervisor = worker === undefined && config.workers > 1;
  const metrics =
    config.metricsPort === undefined || supervisor
      ? undefined
      : new Metrics({
          onCollectError: (what, e) => logger.warn({ err: e, what }, 'a metric could not be collected'),
        });
  // Every service of the request side, built on first use (shared/container.ts).
  const services = buildServices(ds, config, logger, { metrics });
  if (worker === undefined) {
    const applied = await migrate(ds, {
      lock: { onWait: (holder) => logger.info({ holder }, 'waiting for another process to finish the migrations') },
    });
    if (applied.length) logger.info({ migrations: applied }, 'migrations applied');
    try {
      await bindSecretKey(ds, config.secretKey);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      process.stderr.write(`iam: configuration error: ${e.message}\n`);
      await ds.destroy();
      process.exit(EXIT_CONFIG);
    }
    const key = await services.keys.ensureActive();
    logger.info({ kid: key.kid, alg: key.alg }, 'signing key ready');
    if (supervisor) {
      if (config.database.kind === 'sqlite') {
        logger.warn(
          { workers: config.workers },
          'IAM_WORKERS > 1 on SQLite: the worker processes contend for one database file and are usually slower ' +
            'than one process; use several workers with MySQL/MariaDB',
        );
      }
      await ds.destroy();
      // The supervisor serves /metrics: one scrape sums every worker (daemon/metrics/cluster.ts).
      if (config.metricsPort !== undefined)
        await startMetricsListener(clusterSource(), { host: config.metricsHost, port: config.metricsPort, logger });
      return supervise(config.workers, config.shutdownTimeoutMs, logger);
    }
  }

  if (metrics) {
    metrics.collectOutbox(() => services.outbox.backlog());
    metrics.collectPool('app', () => poolStats(ds));
    if (worker !== undefined) reportToSupervisor(metrics.registry);
  }
  // An audit event reaches the audit webhook plugin (its outbox entry in the event's transaction).
  setAuditSink(services.auditSink);
  // Once, at start, when the log provider can receive mail by default (no SMTP, or IAM_MAIL_LOG
  // behind SMTP): login mail carries one-time codes. With SMTP alone, only a tenant whose own
  // order names `log` can reach it (docs/email.md).
  const defaultOrder = services.mail.defaultOrder();
  if (defaultOrder.includes('log'))
    logger.warn(
      { providerOrder: defaultOrder },
      config.smtpUrl
        ? 'IAM_MAIL_LOG is on: the log email provider is the default fallback when SMTP fails, so mail (login ' +
            'codes included) can be written to the log; for development only'
        : 'IAM_SMTP_URL is unset: mail (login codes included) is written to the log by the log email provider; ' +
            'for development only',
    );
  const { app, startDraining } = buildApp(services);
  // Koa serves every request. Its callback settles every request itself (errors go to the
  // error renderer, or to Koa's onerror), so the promise it returns needs no handler here.
  // eslint-disable-next-line @typescript-eslint/no-misused-promises
  handle = app.callback();
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;

  // The signal handlers go in before the socket listens: until a process has a handler, the
  // kernel's default action for SIGTERM ends it at once, without a drain or a log line, and a
  // worker that listens takes connections from then on. A signal that comes while the rest
  // starts is kept and acted on as soon as `stop` exists.
  const shutdown: { stop?: (signal: string) => Promise<void>; pending?: string } = {};
  const onSignal = (signal: string) => {
    if (shutdown.stop) void shutdown.stop(signal);
    else shutdown.pending ??= signal;
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));

  // One process: it serves its own /metrics, before the service port opens, so a scrape can
  // follow the 'listening' line. Workers report to the supervisor instead.
  let metricsListener: MetricsListener | undefined;
  if (metrics && worker === undefined && config.metricsPort !== undefined)
    metricsListener = await startMetricsListener(metrics, {
      host: config.metricsHost,
      port: config.metricsPort,
      logger,
    });

  if (!server.listening) await listen(server, config.port, config.host);
  logListening(logger, server, config);

  // Background jobs: on MySQL a pool of their own. On SQLite they share the request
  // connection, whose gate (shared/db/concurrency.ts) keeps them out of open transactions;
  // a second SQLite connection would only fight the first for the single writer lock.
  const jobsDs =
    config.database.kind === 'sqlite' ? ds : await connect(createDataSource(config.database, 'jobs', { log: logger }));
  if (metrics && jobsDs !== ds) metrics.collectPool('jobs', () => poolStats(jobsDs));
  // The jobs' services on that connection, sharing the request side's outbox, mail and plugin
  // runtime; on SQLite the request side's own.
  const jobServices = jobsDs === ds ? services : buildServices(jobsDs, config, logger, { metrics, requests: services });
  metrics?.collectFederationOverdue(() => jobServices.federationPoller.overdueSeconds());
  const jobs = startJobs({ jobs: jobServices, requests: services, logger, metrics });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(
      { signal, timeoutMs: config.shutdownTimeoutMs },
      'shutting down: no new connections, finishing in-flight requests',
    );
    startDraining();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const timedOut = await Promise.race([
      closed.then(() => false),
      new Promise<boolean>((r) => setTimeout(() => r(true), config.shutdownTimeoutMs).unref()),
    ]);
    if (timedOut) {
      logger.warn('in-flight requests did not finish in time; closing their connections');
      server.closeAllConnections();
      await closed;
    }
    // Jobs after requests (a request's last commit may have kicked the outbox), before the
    // database closes; anything they leave is picked up by the next daemon.
    await jobs.stop(5_000);
    await metricsListener?.close();
    await services.mail.close();
    if (jobsDs !== ds) await jobsDs.destroy();
    // Only now: every request that was going to commit has committed.
    await ds.destroy();
    logger.info('stopped');
    process.exit(0);
  };
  shutdown.stop = stop;
  if (shutdown.pending) void stop(shutdown.pending);
}

/**
 * The supervisor of IAM_WORKERS > 1: forks the workers, replaces one that dies (at most once a
 * second, so a worker that cannot start does not spin), and on SIGTERM/SIGINT passes the
 * signal on and exits once every worker has drained and stopped.
 */
function supervise(count: number, shutdownTimeoutMs: number, logger: ReturnType<typeof createLogger>): void {
  let stopping = false;
  const fork = (index: number) => {
    const w = cluster.fork({ IAM_WORKER_INDEX: String(index) });
    w.on('exit', (code, signal) => {
      if (stopping) return;
      logger.error({ worker: index, pid: w.process.pid, code, signal }, 'worker exited; starting a new one');
      setTimeout(() => {
        if (!stopping) fork(index);
      }, 1000);
    });
  };
  for (let i = 1; i <= count; i++) fork(i);
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping workers');
    const alive = Object.values(cluster.workers ?? {}).filter((w) => w && !w.isDead());
    let left = alive.length;
    if (left === 0) process.exit(0);
    for (const w of alive) {
      w!.once('exit', () => {
        if (--left === 0) {
          logger.info('stopped');
          process.exit(0);
        }
      });
      w!.process.kill(signal);
    }
    // Each worker bounds its own drain by the shutdown timeout; this is the backstop.
    setTimeout(() => {
      logger.warn('workers did not stop in time');
      process.exit(1);
    }, shutdownTimeoutMs + 10_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((e) => {
  process.stderr.write(`iam: failed to start: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
