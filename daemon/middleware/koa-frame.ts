/**
 * The frame every request runs in, as one middleware: the request id and its access-log line
 * (koa-request-id.ts), the security headers (koa-security-headers.ts), the error renderer
 * (koa-error-handler.ts) and the shutdown drain. They were four middleware, each an async
 * function and a promise per request; one frame costs one, which matters on POST /introspect,
 * called by resource servers on every request they serve (bench/results/introspect-sqlite.md).
 * The order inside is the order they had as a chain: id, then headers, then the handler under
 * the error renderer, then the drain, then the log line with the final status.
 */
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { AppState } from '../context.js';
import { refuseEmpty, renderError } from './koa-error-handler.js';
import { logAccess, RequestState, requestIdOf } from './koa-request-id.js';
import { securityHeaderList } from './koa-security-headers.js';

export function requestFrame(logger: Logger, opts: { https: boolean; draining: () => boolean }): Middleware<AppState> {
  const headers = securityHeaderList(opts);
  return async function frame(ctx, next) {
    const started = process.hrtime.bigint();
    const id = requestIdOf(ctx.req.headers['x-request-id']);
    ctx.state = new RequestState(id, logger);
    // Headers are not sent before Koa's respond, after every middleware: set them directly.
    const res = ctx.res;
    res.setHeader('X-Request-Id', id);
    for (let i = 0; i < headers.length; i++) res.setHeader(headers[i][0], headers[i][1]);
    try {
      await next();
      refuseEmpty(ctx);
    } catch (raw) {
      renderError(ctx, raw);
    } finally {
      // Checked after the handler: a request that was in flight when SIGTERM came closes its
      // keep-alive connection so the client reconnects to another daemon.
      if (opts.draining()) ctx.set('Connection', 'close');
      logAccess(logger, ctx, started);
    }
  };
}
