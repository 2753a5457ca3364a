/**
 * The one error renderer: every error body the daemon sends is made here, whatever raised it —
 * an OAuthError, an ApiError, the body parser's or the router's HTTP errors, or a failure
 * nobody expected. The request frame (koa-frame.ts), first in the application, calls it
 * around the body parser, the introspection chain and the router, so an error raised before
 * routing is rendered the same way as one raised by a handler. docs/errors.md has the table.
 *
 * The user-facing endpoints (`/api/user/…`, `/api/account/…`: data export, consents, devices)
 * add a stable `error_code` a user can quote to support and an `error_id` that is also in the
 * log. Which endpoints those are is declared by the route (`errors: 'user'`,
 * route-declarations.ts), which sets ctx.state.errorStyle first in its chain, ahead of its body
 * parser; a request no route matches takes the style of its declared area (ApiRegistry.area).
 */
import { randomUUID } from 'node:crypto';
import type { ParameterizedContext } from 'koa';
import { ApiError, OAuthError } from '../../shared/errors.js';
import { isDatabaseUnavailable } from '../../shared/db/index.js';
import type { AppState } from '../context.js';

interface HttpishError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  message?: string;
  headers?: Record<string, string>;
}

/** Category → stable code of the user-facing endpoints. Append only: support scripts match on these. */
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
  method_not_allowed: 'UR405001',
  temporarily_unavailable: 'US503001',
};

/** Seconds a client is asked to wait when the database is unreachable (a restart takes seconds). */
export const DB_UNAVAILABLE_RETRY_AFTER_S = 2;

/** The code of an error category; unknown categories fall back to their status class. */
export function userErrorCode(error: string, status: number): string {
  return (
    USER_ERROR_CODES[error] ??
    (status >= 500
      ? USER_ERROR_CODES.server_error
      : status === 401
        ? USER_ERROR_CODES.invalid_token
        : status === 403
          ? USER_ERROR_CODES.forbidden
          : USER_ERROR_CODES.invalid_request)
  );
}

/**
 * The router answers 404/405/501 without a body; this gives them the error object too (throws
 * the ApiError for renderError). Called by the request frame (koa-frame.ts) after the chain.
 */
export function refuseEmpty(ctx: ParameterizedContext<AppState>): void {
  if (ctx.body !== undefined && ctx.body !== null && ctx.body !== '') return;
  if (ctx.status === 404) throw new ApiError(404, 'not_found', `No route for ${ctx.method} ${ctx.path}.`);
  if (ctx.status === 405)
    throw new ApiError(405, 'method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; see the Allow header.`);
  if (ctx.status === 501) throw new ApiError(501, 'not_implemented', `${ctx.method} is not implemented.`);
}

/** Renders whatever was thrown as the error object (docs/errors.md). */
export function renderError(ctx: ParameterizedContext<AppState>, raw: unknown): void {
  const err = raw as HttpishError & Error;
  let status: number;
  let body: Record<string, unknown>;
  const userFacing = ctx.state.errorStyle === 'user';
  if (err instanceof OAuthError) {
    status = err.status;
    body = { error: err.error, error_description: err.message };
    // The JSON API's error object has `message` too; the OAuth endpoints keep RFC 6749 §5.2's.
    if (userFacing) body.message = err.message;
    for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
  } else if (err instanceof ApiError) {
    status = err.status;
    body = { error: err.error, error_description: err.message, message: err.message, ...err.extra };
    // A spent throttling budget (shared/services/auth/throttle.ts): RFC 6585 §4 / RFC 9110 §10.2.3.
    if (status === 429 && typeof err.extra.retry_after === 'number')
      ctx.set('Retry-After', String(err.extra.retry_after));
  } else {
    const s = err.status ?? err.statusCode;
    if (s && s >= 400 && s < 500) {
      status = s;
      const [code, text] = httpError(s, err);
      body = { error: code, error_description: text, message: text };
      if (err.headers)
        for (const [k, v] of Object.entries(err.headers)) if (/^(allow|retry-after)$/i.test(k)) ctx.set(k, v);
    } else if (isDatabaseUnavailable(raw)) {
      // The database is restarting or unreachable: nothing is wrong with the request, and
      // retrying it shortly will work (RFC 9110 §15.6.4, §10.2.3). The connection pool drops
      // the dead connections, so the daemon recovers by itself once the server answers.
      status = 503;
      const text = 'The service is temporarily unavailable; retry the request shortly.';
      body = { error: 'temporarily_unavailable', error_description: text, message: text };
      ctx.set('Retry-After', String(DB_UNAVAILABLE_RETRY_AFTER_S));
    } else {
      status = 500;
      body = {
        error: 'server_error',
        error_description: 'An unexpected error occurred.',
        message: 'An unexpected error occurred.',
      };
    }
  }
  // RFC 9110 §15.5.14: the rest of a body too large to read is not read; the connection closes
  // instead, so the next request on it does not start in the middle of this one's body.
  if (status === 413) ctx.set('Connection', 'close');
  if (status >= 500 || userFacing) {
    const errorId = randomUUID();
    body.error_id = errorId;
    ctx.state.errorId = errorId;
    if (userFacing) body.error_code = userErrorCode(String(body.error), status);
    // The same id in the log, so support can go from the user's screenshot to the log line.
    if (status === 503) ctx.state.log.warn({ err: raw, error_id: errorId }, 'database unavailable');
    else if (status >= 500) ctx.state.log.error({ err: raw, error_id: errorId }, 'unhandled error');
    else
      ctx.state.log.info(
        { status, error: body.error, error_code: body.error_code, error_id: errorId },
        'request refused',
      );
  } else {
    ctx.state.log.debug({ status, error: body.error }, 'request refused');
  }
  ctx.status = status;
  if (ctx.state.errorStyle === 'scim') {
    // RFC 7644 §3.12: the SCIM endpoints answer every error in the SCIM error schema, status
    // as a string; `scimType` is set by shared/services/scim/errors.ts (an ApiError's extra).
    ctx.type = 'application/scim+json';
    ctx.body = scimErrorBody(status, raw, body);
    return;
  }
  ctx.type = 'application/json';
  ctx.body = body;
}

/** The SCIM error object (RFC 7644 §3.12) of what renderError made of the error. */
function scimErrorBody(status: number, raw: unknown, body: Record<string, unknown>): Record<string, unknown> {
  const scimType = raw instanceof ApiError ? raw.extra.scimType : undefined;
  return {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
    status: String(status),
    ...(typeof scimType === 'string' ? { scimType } : status === 400 ? { scimType: 'invalidSyntax' } : {}),
    detail: typeof body.error_description === 'string' ? body.error_description : 'The request was refused.',
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
