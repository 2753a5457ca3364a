/**
 * What a failure to read a request body becomes, for koa-body (daemon/app.ts) and the
 * introspection route's own form reader alike: both read through co-body, raw-body and
 * inflation, whose errors are not all HTTP errors. An HTTP error (400 malformed JSON, 413 too
 * large) passes through unchanged. An unknown Content-Encoding is a 415 (RFC 9110 §15.5.16);
 * a body that does not decode with the encoding it names (bad gzip or deflate data, bad
 * brotli) surfaces as a bare zlib error, which is the client's fault, hence a 400 rather than
 * the 500 an unexpected error gets. A JSON body with a `__proto__` member anywhere is a 400
 * naming it. docs/errors.md has the table.
 */
import { ApiError } from '../../shared/errors.js';

interface ReadError {
  status?: number;
  statusCode?: number;
  message?: string;
}

export function bodyReadError(raw: unknown): Error {
  const e = (raw ?? {}) as ReadError;
  const status = e.status ?? e.statusCode;
  if (status === 415 && /content-encoding/i.test(e.message ?? ''))
    return new ApiError(
      415,
      'unsupported_media_type',
      'The request body has an unsupported Content-Encoding; use gzip, deflate, br or identity.',
    );
  // co-body parses JSON with bourne, which refuses any member named `__proto__` (prototype
  // poisoning of whatever later copies the object): the client's body, so a 400 that says why.
  if (status === 400 && /forbidden prototype property/i.test(e.message ?? ''))
    return new ApiError(400, 'invalid_request', 'The request body has a member named "__proto__", which is refused.');
  if (status !== undefined && status >= 400 && status < 500) return raw as Error;
  return new ApiError(
    400,
    'invalid_request',
    'The request body could not be read: it does not decode with its Content-Encoding.',
  );
}
