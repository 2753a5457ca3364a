/**
 * The metrics listener (docs/metrics.md): IAM_METRICS_PORT on IAM_METRICS_HOST, apart from the
 * service's port, as Keycloak's management port is, so the series (which show the shape of
 * the traffic) are not served to the internet with the service and need no credentials.
 *
 * A second small Koa application: `GET /metrics` (and HEAD) answers the Prometheus text format;
 * anything else is 404 in the error object every endpoint uses (daemon/middleware/
 * koa-error-handler.ts). It serves whatever `render` produces: this process's registry, or
 * with IAM_WORKERS > 1 the supervisor's sum over its workers (daemon/metrics/cluster.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type { Logger } from 'pino';
import { ApiError } from '../../shared/errors.js';
import { renderError } from '../middleware/koa-error-handler.js';
import type { AppState } from '../context.js';

export interface MetricsSource {
  /** The exposition, in the format `contentType` names. */
  render(): Promise<string>;
  contentType: string;
}

export function buildMetricsApp(source: MetricsSource, logger: Logger): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: false });
  // The error renderer logs through ctx.state.log. No request id or access-log line: a scrape
  // every few seconds would fill the log with them.
  app.use(async (ctx, next) => {
    ctx.state.log = logger;
    try {
      await next();
    } catch (raw) {
      renderError(ctx, raw);
    }
  });
  app.use(async (ctx) => {
    if (ctx.path !== '/metrics' || (ctx.method !== 'GET' && ctx.method !== 'HEAD'))
      throw new ApiError(
        404,
        'not_found',
        `No route for ${ctx.method} ${ctx.path}; this listener serves GET /metrics.`,
      );
    let text: string;
    try {
      text = await source.render();
    } catch (e) {
      // A worker that does not answer the supervisor in time, say: the scrape fails visibly
      // (Prometheus records `up` = 0) instead of serving partial sums.
      logger.warn({ err: e }, 'metrics could not be collected');
      throw new ApiError(503, 'metrics_unavailable', 'The metrics could not be collected; try the scrape again.');
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.type = source.contentType;
    ctx.body = text;
  });
  app.silent = true;
  return app;
}

export interface MetricsListener {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/** Listens on `host:port` (0: an ephemeral port) and logs the bound port, as the main listener does. */
export async function startMetricsListener(
  source: MetricsSource,
  opts: { host: string; port: number; logger: Logger },
): Promise<MetricsListener> {
  const app = buildMetricsApp(source, opts.logger);
  // eslint-disable-next-line @typescript-eslint/no-misused-promises
  const server = createServer(app.callback());
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  opts.logger.info({ host: opts.host, port }, 'metrics listening');
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
