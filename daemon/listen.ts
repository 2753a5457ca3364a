/**
 * The service socket. A fixed IAM_PORT is bound once the app is ready. IAM_PORT=0 (tests) lets
 * the system pick the port, and an issuer naming port 0 (the default one does) means "the port
 * bound": that socket is bound first, before any service is built with the issuer, and answers
 * 503 until the app is ready. Workers of a supervisor each bind it too (node:cluster gives every
 * worker's listen(0) the same port).
 */
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from '../shared/config.js';

/** The request listener until the app is built. */
export const notReady: RequestListener = (_req, res) => void res.writeHead(503, { 'retry-after': '1' }).end();

export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
}

/** Binds port 0 now; returns the config with the issuer's port 0 made the port bound. */
export async function bindEphemeral(server: Server, config: Config): Promise<Config> {
  await listen(server, 0, config.host);
  const issuer = new URL(config.issuer);
  if (issuer.port !== '0') return config;
  issuer.port = String((server.address() as AddressInfo).port);
  return { ...config, issuer: issuer.toString().replace(/\/$/, '') };
}

/** The 'listening' line. A port the system picked is known only from it: written at any level. */
export function logListening(logger: Logger, server: Server, config: Config): void {
  const port = (server.address() as AddressInfo).port;
  const log = config.port === 0 && !logger.isLevelEnabled('info') ? logger.child({}, { level: 'info' }) : logger;
  log.info({ host: config.host, port }, 'listening');
}
