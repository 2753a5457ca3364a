import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { ApiError, OAuthError } from '../../shared/errors.js';
import type { AppState } from '../context.js';

interface HttpishError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  message?: string;
  headers?: Record<string, string>;
}

/**
 * Turns every error into the spec's error object. Known errors keep their status and code;
 * errors from the HTTP layer (body parser, router) are mapped to stable codes; anything else
 * is a 500 with a generic message and an error_id that is also in the log line.
 * See docs/errors.md for the table.
 */
export function errorHandler(): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
      // The router answers 404/405/501 without a body; give them the error object too.
      if (ctx.body === undefined || ctx.body === null || ctx.body === '') {
        if (ctx.status === 404) throw new ApiError(404, 'not_found', `No route for ${ctx.method} ${ctx.path}.`);
        if (ctx.status === 405)
          throw new ApiError(
            405,
            'method_not_allowed',
            `${ctx.method} is not allowed on ${ctx.path}; see the Allow header.`,
          );
        if (ctx.status === 501) throw new ApiError(501, 'not_implemented', `${ctx.method} is not implemented.`);
      }
    } catch (raw) {
      const err = raw as HttpishError & Error;
      let status: number;
      let body: Record<string, unknown>;
      if (err instanceof OAuthError) {
        status = err.status;
        body = { error: err.error, error_description: err.message };
        for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
      } else if (err instanceof ApiError) {
        status = err.status;
        body = { error: err.error, error_description: err.message, message: err.message, ...err.extra };
      } else {
        const s = err.status ?? err.statusCode;
        if (s && s >= 400 && s < 500) {
          status = s;
          const [code, text] = httpError(s, err);
          body = { error: code, error_description: text, message: text };
          if (err.headers)
            for (const [k, v] of Object.entries(err.headers)) if (/^(allow|retry-after)$/i.test(k)) ctx.set(k, v);
        } else {
          status = 500;
          const errorId = randomUUID();
          ctx.state.log?.error({ err, error_id: errorId }, 'unhandled error');
          body = {
            error: 'server_error',
            error_description: 'An unexpected error occurred.',
            message: 'An unexpected error occurred.',
            error_id: errorId,
          };
        }
      }
      if (status < 500) ctx.state.log?.debug({ status, error: body.error }, 'request refused');
      ctx.status = status;
      ctx.type = 'application/json';
      ctx.body = body;
    }
  };
}

function httpError(status: number, err: HttpishError): [string, string] {
  switch (status) {
    case 400:
      if (err.type === 'entity.parse.failed' || /JSON|Unexpected token|invalid json/i.test(err.message ?? '')) {
        return ['invalid_request', 'The request body is not valid JSON.'];
      }
      return ['invalid_request', err.expose && err.message ? err.message : 'The request is malformed.'];
    case 404:
      return ['not_found', 'Not found.'];
    case 405:
      return ['method_not_allowed', 'This method is not allowed on this path.'];
    case 413:
      return ['request_too_large', 'The request body is larger than the service accepts.'];
    case 415:
      return ['unsupported_media_type', err.expose && err.message ? err.message : 'Unsupported content type.'];
    default:
      return ['invalid_request', err.expose && err.message ? err.message : 'The request was refused.'];
  }
}
