/**
 * The daemon: config → database (migrate) → keys → app → listen → graceful stop.
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
import { DirectoryService } from '../shared/services/directory.js';
import { KeyService } from '../shared/services/keys.js';
import { TokenService } from '../shared/services/tokens.js';
import { ArtifactService } from '../shared/services/auth/artifacts.js';
import { PasskeyService } from '../shared/services/auth/passkeys.js';
import { EmailCodeService } from '../shared/services/auth/codes.js';
import { Throttle } from '../shared/services/auth/throttle.js';
import { OAuthService } from '../shared/services/auth/oauth.js';
import { SessionService } from '../shared/services/auth/sessions.js';
import { SignInService } from '../shared/services/auth/sign-in.js';
import { Outbox } from '../shared/services/outbox.js';
import { IntrospectionService } from '../shared/services/introspection.js';
import { createEmailProviders } from '../shared/services/mail/index.js';
import { ProvisioningService } from '../shared/services/provisioning/index.js';
import { AccountService } from '../shared/services/auth/account.js';
import { AuditLog, setAuditSink } from '../shared/services/audit.js';
import { EmailSettingsService } from '../shared/services/email-settings.js';
import { IdempotencyService } from '../shared/services/idempotency.js';
import { outboundPolicyFromConfig } from '../shared/net/outbound.js';
import { AuditWebhookDeliverer, AuditWebhookSink } from '../shared/services/plugins/audit-webhook.js';
import { builtinPlugins, PluginRuntime, PluginService } from '../shared/services/plugins/index.js';
import { WebhookEmailProvider } from '../shared/services/plugins/webhook-email.js';
import { RecoveryService } from '../shared/services/recovery/index.js';
import { TenantLifecycleService } from '../shared/services/tenant-lifecycle.js';
import { IssuerKeys, JtiStore } from '../shared/services/token-exchange/id-jag.js';
import {
  createExternalTokenRefresh,
  ExternalTokenRefreshSettingsService,
} from '../shared/services/external-token-refresh/index.js';
import { TokenExchangeSettingsService } from '../shared/services/token-exchange/settings.js';
import { AgentGrantService } from '../shared/services/agents/grants.js';
import { AgentClientMetadataService } from '../shared/services/agents/metadata.js';
import { CustomClaimsService } from '../shared/services/custom-claims.js';
import { fieldMappingServices } from '../shared/services/federation/index.js';
import { ApprovalService } from '../shared/services/approvals.js';
import { RelationshipService } from '../shared/services/relationships.js';
import { ClientAuthenticator } from '../shared/services/client-auth.js';
import { ClaimRenameService } from '../shared/services/claim-rename.js';
import { ClaimsService } from '../shared/services/claims.js';
import { GrantService } from '../shared/services/grants/index.js';
import {
  UpstreamBroker,
  UpstreamClients,
  UpstreamIdpRegistry,
  UpstreamSealer,
} from '../shared/services/upstream-idp/index.js';
import { startJobs } from './jobs/index.js';
import { createMetadataPoller } from '../shared/services/federation/metadata-poller.js';
import { holderName } from '../shared/services/federation/holder.js';
import { buildApp, VERSION } from './app.js';
import type { AppDeps } from './context.js';
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
    },
  );
  const keys = new KeyService(ds, config.secretKey, config.keyRetireAfterSeconds);
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
    const key = await keys.ensureActive();
    logger.info({ kid: key.kid, alg: key.alg }, 'signing key ready');
    if (config.workers > 1) {
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

  const outbox = new Outbox(ds, config.secretKey);
  // The Prometheus series (docs/metrics.md), only when a metrics listener is configured: off,
  // nothing records and the HTTP middleware is not mounted.
  const metrics =
    config.metricsPort === undefined
      ? undefined
      : new Metrics({
          onCollectError: (what, e) => logger.warn({ err: e, what }, 'a metric could not be collected'),
        });
  if (metrics) {
    metrics.collectOutbox(() => outbox.backlog());
    metrics.collectPool('app', () => poolStats(ds));
    if (worker !== undefined) reportToSupervisor(metrics.registry);
  }
  const tokens = new TokenService(config.issuer, keys);
  // The one outbound client's policy (shared/net/outbound.ts), for every service that calls out.
  const outboundPolicy = outboundPolicyFromConfig(config);
  // Platform plugins: one runtime view per daemon (its cache checks the config generation on
  // every use); the webhook email provider joins the providers, the audit webhook hooks audit().
  const pluginRuntime = new PluginRuntime(
    ds,
    config.secretKey,
    builtinPlugins({ allowLoopback: config.outboundAllowLoopback }),
  );
  const mail = createEmailProviders(config, logger.child({ component: 'mail' }), [
    new WebhookEmailProvider(pluginRuntime, config.mailFrom, outboundPolicy),
  ]);
  const plugins = new PluginService(ds, pluginRuntime, outboundPolicy);
  setAuditSink(new AuditWebhookSink(pluginRuntime, outbox));
  // Once, at start: the log provider receives mail by default (no SMTP) or as SMTP's fallback,
  // and login mail carries one-time codes.
  logger.warn(
    { providerOrder: mail.defaultOrder() },
    config.smtpUrl
      ? 'the log email provider is the default fallback when SMTP fails: mail (login codes included) can be ' +
          'written to the log; for development only'
      : 'IAM_SMTP_URL is unset: mail (login codes included) is written to the log by the log email provider; for ' +
          'development only',
  );
  const directory = new DirectoryService(ds, config.secretKey, config.issuer);
  const provisioningOptions = {
    maxAttempts: config.provisioningMaxAttempts,
    retryBaseMs: config.provisioningRetryBaseMs,
  };
  const throttle = new Throttle(ds, config.throttle, config.emailCodeResendSeconds);
  const clientAuth = new ClientAuthenticator({
    directory,
    throttle,
    issuer: config.issuer,
    // A private_key_jwt client's jwks_uri: the ID-JAG key cache, fetching the URL itself,
    // under the same SSRF policy.
    remoteKeys: new IssuerKeys({
      policy: outboundPolicy,
      direct: true,
      cooldownMs: config.clientJwksCooldownSeconds * 1000,
      onFetchError: (url, detail) => logger.warn({ jwks_uri: url, detail }, 'a client jwks_uri could not be fetched'),
    }),
    // Client assertions' jti, in the database every daemon shares (prefix: never an ID-JAG's key).
    jtis: new JtiStore(ds, 'cla_'),
  });
  // Upstream OpenID providers: one sealer and one cache of discovered configurations per
  // daemon, shared by the registration and the sign-in.
  const upstreamSealer = new UpstreamSealer(config.secretKey);
  const upstreamClients = new UpstreamClients({ policy: outboundPolicy });
  const base: Omit<AppDeps, 'claims' | 'grants'> = {
    config,
    ds,
    logger,
    keys,
    directory,
    provisioning: new ProvisioningService(ds, {
      directory,
      keys,
      mail,
      options: provisioningOptions,
      logger: logger.child({ component: 'provisioning' }),
    }),
    tokens,
    introspection: new IntrospectionService(ds, tokens, { cacheEntries: config.introspectionCacheEntries, metrics }),
    throttle,
    codes: new EmailCodeService(ds, config.secretKey, outbox, new URL(config.issuer).host, throttle),
    sessions: new SessionService(ds),
    artifacts: new ArtifactService(ds),
    passkeys: new PasskeyService(ds, { issuer: config.issuer, secretKey: config.secretKey }),
    oauth: new OAuthService(ds),
    signIn: new SignInService(ds, () => deps),
    mail,
    recovery: new RecoveryService(ds, keys, config.issuer),
    tenantLifecycle: new TenantLifecycleService(ds),
    auditLog: new AuditLog(ds, config.secretKey),
    emailSettings: new EmailSettingsService(ds, mail),
    tokenExchangeSettings: new TokenExchangeSettingsService(ds, { allowLoopback: config.outboundAllowLoopback }),
    customClaims: new CustomClaimsService(ds),
    fieldMapping: fieldMappingServices(ds, {
      allowLoopback: config.outboundAllowLoopback,
      maxAutomaticSources: config.federationMaxAutomaticSources,
    }),
    externalTokenRefreshSettings: new ExternalTokenRefreshSettingsService(ds),
    issuerKeys: new IssuerKeys({
      policy: outboundPolicy,
      cooldownMs: config.idJagJwksCooldownSeconds * 1000,
      onFetchError: (iss, detail) =>
        logger.warn({ issuer: iss, detail }, 'ID-JAG issuer metadata or keys could not be fetched'),
    }),
    jtis: new JtiStore(ds),
    clientAuth,
    account: new AccountService(ds, config.secretKey),
    idempotency: new IdempotencyService(ds),
    claimRename: new ClaimRenameService(ds, {
      options: config.claimRename,
      logger: logger.child({ component: 'claim-rename' }),
    }),
    upstreamIdps: new UpstreamIdpRegistry(ds, {
      sealer: upstreamSealer,
      clients: upstreamClients,
      issuer: config.issuer,
      allowLoopback: config.outboundAllowLoopback,
    }),
    upstreamBroker: new UpstreamBroker(ds, { sealer: upstreamSealer, clients: upstreamClients, issuer: config.issuer }),
    plugins,
    relationships: new RelationshipService(ds),
    approvals: new ApprovalService(ds, outbox),
    agentGrants: new AgentGrantService(ds, outbox),
    agentClientMetadata: new AgentClientMetadataService(ds),
    metrics,
  };
  const claims = new ClaimsService(base);
  const { issuer, secretKey } = config;
  const deps: AppDeps = { ...base, claims, grants: new GrantService({ ...base, claims, issuer, secretKey }) };
  const { app, startDraining } = buildApp(deps);
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
  // The provisioning runner works on the jobs connection; requests only kick it.
  const provisioningRunner =
    jobsDs === ds
      ? deps.provisioning
      : new ProvisioningService(jobsDs, {
          directory,
          keys: new KeyService(jobsDs, config.secretKey, config.keyRetireAfterSeconds),
          mail,
          options: provisioningOptions,
          logger: logger.child({ component: 'provisioning' }),
        });
  // The claim rename runner too (its batches are writes on the jobs connection).
  const claimRenameRunner =
    jobsDs === ds
      ? deps.claimRename
      : new ClaimRenameService(jobsDs, {
          options: config.claimRename,
          logger: logger.child({ component: 'claim-rename' }),
        });
  // The same factory and configuration as `iam federation poll`.
  const federationPoller = createMetadataPoller(jobsDs, config, { holder: holderName('daemon'), metrics });
  metrics?.collectFederationOverdue(() => federationPoller.overdueSeconds());
  const jobs = startJobs({
    ds: jobsDs,
    logger,
    outbox,
    mail,
    provisioning: { runner: provisioningRunner, kicks: deps.provisioning },
    claimRename: { runner: claimRenameRunner, kicks: deps.claimRename },
    externalTokenRefresh: (holder) =>
      createExternalTokenRefresh(jobsDs, { secretKey: config.secretKey, policy: outboundPolicy, holder }),
    plugins: {
      auditWebhook: new AuditWebhookDeliverer(jobsDs, outbox, pluginRuntime, outboundPolicy),
      service: plugins,
    },
    federationPoller,
    approvalExpiry: new ApprovalService(jobsDs, outbox),
    agentGrants: deps.agentGrants,
    metrics,
  });

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
    await mail.close();
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
