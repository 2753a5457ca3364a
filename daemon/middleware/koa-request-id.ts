import { randomUUID } from 'node:crypto';
import type { ParameterizedContext } from 'koa';
import type { Logger } from 'pino';
import type { AppState } from '../context.js';

export const SAFE_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * What every request's ctx.state starts as, in place of Koa's empty object. A child logger
 * costs an object and a serialisation of its bindings, so `log` makes it on first use: most
 * requests never log. A class rather than a getter defined on each request's object: defining
 * one turns the object into a slow dictionary; the class took 5–8 % off the daemon's CPU per
 * introspection request in alternating runs.
 */
export class RequestState implements AppState {
  #log: Logger | undefined;
  constructor(
    public requestId: string,
    private readonly logger: Logger,
  ) {}
  get log(): Logger {
    return (this.#log ??= this.logger.child({ reqId: this.requestId }));
  }
}

/** A well-formed inbound X-Request-Id is kept, so a proxy's id follows the request; else a new one. */
export function requestIdOf(inbound: string | string[] | undefined): string {
  return typeof inbound === 'string' && SAFE_ID.test(inbound) ? inbound : randomUUID();
}

/**
 * The request's one access-log line, with the error_id when the error renderer handed one out,
 * so one line ties the two. Path only, never the query string: it may carry codes or tokens.
 */
export function logAccess(logger: Logger, ctx: ParameterizedContext<AppState>, started: bigint): void {
  if (!logger.isLevelEnabled('info')) return;
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const line = {
    reqId: ctx.state.requestId,
    method: ctx.method,
    path: ctx.path,
    status: ctx.status,
    ms: Math.round(ms * 100) / 100,
  };
  logger.info(ctx.state.errorId ? { ...line, error_id: ctx.state.errorId } : line, 'request');
}
