/**
 * Errors on the user-facing endpoints (data export, consents, devices) carry, besides the
 * usual error object, a stable `error_code` (^[A-Z]{2}[0-9]{6}$, one per category, listed in
 * docs/errors.md) a user can quote to support, and an `error_id` (a UUID) that also appears
 * in the log line for that request.
 */
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { ApiError, OAuthError } from '../../shared/errors.js';
import type { AppState } from '../context.js';

/** Category → stable code. Append only: support scripts match on these. */
export const USER_ERROR_CODES: Record<string, string> = {
  invalid_request: 'UR400001',
  unsupported_media_type: 'UR415001',
  request_too_large: 'UR413001',
  invalid_token: 'UA401001',
  insufficient_scope: 'UA403001',
  forbidden: 'UA403002',
  not_found: 'UR404001',
  conflict: 'UR409001',
  rate_limited: 'UR429001',
  server_error: 'US500001',
};

export function userFacingErrors(): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (e) {
      const errorId = randomUUID();
      let status = 500;
      let body: Record<string, unknown>;
      if (e instanceof ApiError) {
        status = e.status;
        body = { error: e.error, error_description: e.message, message: e.message, ...e.extra };
      } else if (e instanceof OAuthError) {
        status = e.status;
        body = { error: e.error, error_description: e.message, message: e.message };
        for (const [k, v] of Object.entries(e.headers)) ctx.set(k, v);
      } else if ((e as { status?: number }).status && (e as { status: number }).status < 500) {
        status = (e as { status: number }).status;
        const code =
          status === 413 ? 'request_too_large' : status === 415 ? 'unsupported_media_type' : 'invalid_request';
        body = { error: code, error_description: 'The request was refused.', message: 'The request was refused.' };
      } else {
        body = {
          error: 'server_error',
          error_description: 'An unexpected error occurred.',
          message: 'An unexpected error occurred.',
        };
      }
      const error = String(body.error);
      body.error_code =
        USER_ERROR_CODES[error] ??
        (status >= 500
          ? USER_ERROR_CODES.server_error
          : status === 401
            ? USER_ERROR_CODES.invalid_token
            : status === 403
              ? USER_ERROR_CODES.forbidden
              : USER_ERROR_CODES.invalid_request);
      body.error_id = errorId;
      // The same id in the log, so support can go from the user's screenshot to the log line.
      if (status >= 500) ctx.state.log.error({ err: e, error_id: errorId }, 'unhandled error');
      else ctx.state.log.info({ status, error, error_code: body.error_code, error_id: errorId }, 'request refused');
      ctx.status = status;
      ctx.type = 'application/json';
      ctx.body = body;
    }
  };
}
