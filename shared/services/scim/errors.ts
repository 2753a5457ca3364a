/**
 * SCIM errors (RFC 7644 §3.12): an ApiError whose `extra.scimType` the error renderer puts in
 * the SCIM error object (daemon/middleware/koa-error-handler.ts, error style `scim`). Thrown
 * before anything is written, so a refused request changes nothing.
 */
import { ApiError } from '../../errors.js';

/** The scimType values of RFC 7644 §3.12, Table 9. */
export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

/** The `error` code an ApiError carries for each status (the admin log's category). */
const CATEGORY: Record<number, string> = {
  400: 'invalid_request',
  404: 'not_found',
  409: 'conflict',
  412: 'precondition_failed',
  413: 'request_too_large',
};

export function scimError(status: number, scimType: ScimType | undefined, detail: string): ApiError {
  return new ApiError(status, CATEGORY[status] ?? 'invalid_request', detail, scimType ? { scimType } : {});
}

export const invalidFilter = (detail: string) => scimError(400, 'invalidFilter', detail);
export const invalidValue = (detail: string) => scimError(400, 'invalidValue', detail);
export const invalidSyntax = (detail: string) => scimError(400, 'invalidSyntax', detail);
export const invalidPath = (detail: string) => scimError(400, 'invalidPath', detail);
export const mutability = (detail: string) => scimError(400, 'mutability', detail);
export const uniqueness = (detail: string) => scimError(409, 'uniqueness', detail);
export const noSuchResource = (kind: string, id: string) => scimError(404, undefined, `${kind} ${id} not found.`);
export const preconditionFailed = () =>
  scimError(412, undefined, 'If-Match does not match the current version of the resource (RFC 7644 §3.14).');
