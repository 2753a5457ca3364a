/**
 * Two error families, both following Koa's `status` / `expose` contract:
 * - OAuthError subclasses, named after their RFC 6749 §5.2 error code, for protocol endpoints.
 * - ApiError, with a stable snake_case `error` code, for the JSON management API.
 * The error-handler middleware turns either into the spec's error object. See
 * docs/errors.md for the full table of condition → status → code.
 */

export interface FieldIssue {
  field: string;
  message: string;
}

export class ApiError extends Error {
  readonly expose = true;
  constructor(
    public readonly status: number,
    public readonly error: string,
    message: string,
    public readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string, details?: FieldIssue[]) =>
  new ApiError(400, 'invalid_request', message, details ? { details } : {});
export const unauthorized = (message = 'A valid bearer access token is required.') =>
  new ApiError(401, 'invalid_token', message);
export const forbidden = (message: string) => new ApiError(403, 'insufficient_scope', message);
export const notFound = (what: string) => new ApiError(404, 'not_found', `${what} was not found.`);
export const conflict = (message: string, extra: Record<string, unknown> = {}) =>
  new ApiError(409, 'conflict', message, extra);

/** RFC 6749 §5.2 / RFC 6750 §3.1 error; `error` is the registered code. */
export class OAuthError extends Error {
  readonly expose = true;
  status = 400;
  /** Extra response headers, e.g. WWW-Authenticate for invalid_client (RFC 6749 §5.2). */
  headers: Record<string, string> = {};
  constructor(
    public readonly error: string,
    description: string,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

export class InvalidRequest extends OAuthError {
  constructor(d: string) {
    super('invalid_request', d);
  }
}
export class InvalidClient extends OAuthError {
  constructor(d = 'Client authentication failed.') {
    super('invalid_client', d);
    this.status = 401;
    this.headers['WWW-Authenticate'] = 'Basic realm="iam", charset="UTF-8"';
  }
}
export class InvalidGrant extends OAuthError {
  constructor(d: string) {
    super('invalid_grant', d);
  }
}
export class UnauthorizedClient extends OAuthError {
  constructor(d: string) {
    super('unauthorized_client', d);
  }
}
export class UnsupportedGrantType extends OAuthError {
  constructor(d: string) {
    super('unsupported_grant_type', d);
  }
}
export class InvalidScope extends OAuthError {
  constructor(d: string) {
    super('invalid_scope', d);
  }
}
export class InvalidTarget extends OAuthError {
  constructor(d: string) {
    super('invalid_target', d);
  } // RFC 8707 §2
}
export class AccessDenied extends OAuthError {
  constructor(d: string) {
    super('access_denied', d);
    this.status = 403;
  }
}
