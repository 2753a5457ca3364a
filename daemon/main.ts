/**
 * The daemon: config → database (migrate) → keys → app → listen → graceful stop.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, loadConfig } from '../shared/config.js';
import { connect, createDataSource, migrate } from '../shared/db/data-source.js';
import { bindSecretKey } from '../shared/db/secret-key-check.js';
import { DirectoryService } from '../shared/services/directory.js';
import { KeyService } from '../shared/services/keys.js';
import { TokenService } from '../shared/services/tokens.js';
import { buildApp, VERSION } from './app.js';
import type { AppDeps } from './context.js';
import { createLogger } from './log.js';

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
  const logger = createLogger(config.logLevel);
  logger.info({ version: VERSION, database: config.database.kind, issuer: config.issuer, secretKey: config.secretKeySource }, 'starting');

  const ds = await connect(createDataSource(config.database));
  const applied = await migrate(ds);
  if (applied.length) logger.info({ migrations: applied }, 'migrations applied');
  try {
    await bindSecretKey(ds, config.secretKey);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`iam: configuration error: ${e.message}\n`);
    await ds.destroy();
    process.exit(EXIT_CONFIG);
  }
  const keys = new KeyService(ds, config.secretKey, config.keyRetireAfterSeconds);
  const key = await keys.ensureActive();
  logger.info({ kid: key.kid, alg: key.alg }, 'signing key ready');

  const deps: AppDeps = {
    config, ds, logger, keys,
    directory: new DirectoryService(ds, config.secretKey),
    tokens: new TokenService(config.issuer, keys),
  };
  const { app, startDraining } = buildApp(deps);
  const server = createServer(app.callback());
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  logger.info({ host: config.host, port }, 'listening');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutting down: no new connections, finishing in-flight requests');
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
    // Only now: every request that was going to commit has committed.
    await ds.destroy();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((e) => {
  process.stderr.write(`iam: failed to start: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
