/**
 * What every SCIM route shares (docs/scim.md): its authentication (a client_credentials token
 * with the `scim` scope; the tenant is the token's), its error style (RFC 7644 §3.12), its
 * body reader (application/scim+json and application/json), and the helpers that answer in
 * application/scim+json with an ETag.
 */
import type { Middleware, ParameterizedContext } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import { SCOPE_SCIM } from '../../../shared/scopes.js';
import type { ScimResource } from '../../../shared/services/scim/index.js';
import { etagOf, notModified } from '../../../shared/services/scim/index.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bodyDepthLimit } from '../../middleware/koa-body-depth.js';
import { bodyReadError } from '../../middleware/koa-body-errors.js';
import type { RouteSpec } from '../../openapi.js';

/** Where the SCIM service is mounted: `<issuer>/scim/v2` is the tenant URL an IdP is given. */
export const SCIM_PREFIX = '/scim/v2';
export const SCIM_MEDIA_TYPE = 'application/scim+json';

/** The SCIM error object (RFC 7644 §3.12), as /openapi.json documents the SCIM errors. */
export const ScimErrorObject = z
  .object({
    schemas: z.array(z.literal('urn:ietf:params:scim:api:messages:2.0:Error')),
    status: z.string().describe('The HTTP status, as a string'),
    scimType: z.string().optional().describe('RFC 7644 §3.12 Table 9 (invalidFilter, uniqueness, mutability, …)'),
    detail: z.string(),
  })
  .describe('The SCIM error object (RFC 7644 §3.12)');

/** A SCIM resource or message in a response (its shape is in /scim/v2/Schemas, not here). */
export const ScimBody = z.record(z.string(), z.unknown()).describe('A SCIM resource or message (see /scim/v2/Schemas)');

const err = (description: string) => ({ description, schema: ScimErrorObject, contentType: SCIM_MEDIA_TYPE });

/** The error answers every SCIM route documents; a route adds its own (404, 409, 412). */
export const SCIM_ERRORS = {
  400: err('invalid input (scimType invalidFilter, invalidSyntax, invalidValue, invalidPath, mutability, noTarget)'),
  401: err('missing or invalid bearer token (WWW-Authenticate: Bearer, RFC 6750 §3)'),
  403: err('a valid token without the scope scim'),
};
export const E404 = err("no such resource in the token's tenant");
export const E409 = err('uniqueness: another resource has this userName, externalId or displayName');
export const E412 = err('If-Match does not match the current ETag (RFC 7644 §3.14)');

/** A response of a SCIM route in application/scim+json. */
export const ok = (description: string, headers?: Record<string, string>) => ({
  description,
  schema: ScimBody,
  contentType: SCIM_MEDIA_TYPE,
  ...(headers ? { headers } : {}),
});

/** The ETag header SCIM resources carry (weak, RFC 7644 §3.14). */
export const SCIM_ETAG = { ETag: 'A weak entity tag (RFC 7644 §3.14), also in meta.version' };
export const SCIM_LOCATION = { Location: "The new resource's URI (RFC 7644 §3.3)", ...SCIM_ETAG };

/** If-Match and If-None-Match as the SCIM routes read them (the handler compares them). */
export const SCIM_IF_MATCH = {
  name: 'If-Match',
  description: 'Optional: a weak ETag from GET (or *); a mismatch is 412 (RFC 7644 §3.14)',
  required: false,
  schema: z.string().min(1).max(2048),
};
export const SCIM_IF_NONE_MATCH = {
  name: 'If-None-Match',
  description: 'Optional: the ETag of the copy the client holds; unchanged, the answer is 304 (RFC 7644 §3.14)',
  required: false,
  schema: z.string().min(1).max(2048),
};

/**
 * The body reader of the SCIM routes: koa-body (the same limits and 400/413/415 answers as the
 * other routes) reading application/scim+json as JSON (RFC 7644 §3.1), then the depth limit.
 * A body of any other media type is 415.
 */
function scimBodyReader(deps: AppDeps): Middleware<AppState> {
  const limit = deps.config.bodyLimitBytes;
  const read = koaBody({
    json: true,
    // Read (so a body that does not decode is 400, as on every route), then refused below.
    urlencoded: true,
    multipart: false,
    text: false,
    jsonLimit: limit,
    formLimit: limit,
    jsonStrict: true,
    jsonTypes: ['application/json', SCIM_MEDIA_TYPE],
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH],
    onError: (e) => {
      throw bodyReadError(e);
    },
  }) as unknown as Middleware<AppState>;
  const depth = bodyDepthLimit();
  return async function scimBody(ctx, next) {
    await read(ctx, async () => {
      if (ctx.request.length && !ctx.is('application/json', SCIM_MEDIA_TYPE))
        throw new ApiError(
          415,
          'unsupported_media_type',
          `The request body must be ${SCIM_MEDIA_TYPE} or application/json.`,
        );
      await depth(ctx, next);
    });
  };
}

/**
 * The admin API's bearer check (a client_credentials token of an active client in an active
 * tenant, RFC 6750 challenges) with the scope `scim`, and one more: a long-lived SCIM token
 * whose jti the operator revoked (`iam scim token revoke`) is 401 invalid_token.
 */
function scimBearer(deps: AppDeps): Middleware<AppState> {
  const check = bearer(deps, [SCOPE_SCIM]);
  return async function scimAuth(ctx, next) {
    await check(ctx, async () => {
      const claims = ctx.state.auth!;
      if (await deps.scim.tokens.isRevoked(String(claims.tenant_id), String(claims.jti))) {
        ctx.set('WWW-Authenticate', 'Bearer realm="iam", error="invalid_token"');
        throw new ApiError(401, 'invalid_token', 'The access token has been revoked.');
      }
      await next();
    });
  };
}

/** The declaration parts every SCIM route shares; the route adds method, path, summary, responses. */
export interface ScimDeclaration {
  security: 'bearer';
  tenant: 'token';
  scopes: string[];
  tags: string[];
  errors: 'scim';
  authenticate: Middleware<AppState>;
  parser: RouteSpec['parser'];
}

export function scimDeclaration(deps: AppDeps): ScimDeclaration {
  return {
    security: 'bearer',
    tenant: 'token',
    scopes: [SCOPE_SCIM],
    tags: ['scim'],
    errors: 'scim',
    authenticate: scimBearer(deps),
    parser: { read: scimBodyReader(deps) },
  };
}

type Ctx = ParameterizedContext<AppState>;

/** The SCIM base URL of this deployment (`meta.location`, Location). */
export const scimBase = (deps: AppDeps) => `${deps.config.issuer.replace(/\/$/, '')}${SCIM_PREFIX}`;

/** Answers `body` in application/scim+json. */
export function send(ctx: Ctx, status: number, body: unknown): void {
  ctx.status = status;
  ctx.type = SCIM_MEDIA_TYPE;
  ctx.body = body;
}

/**
 * Answers one resource with its ETag (and Location on 201); on GET, a matching If-None-Match
 * is 304 without a body (RFC 7644 §3.14).
 */
export function sendResource(ctx: Ctx, status: number, r: ScimResource, opts: { created?: boolean } = {}): void {
  const etag = etagOf(r);
  ctx.set('ETag', etag);
  if (opts.created) ctx.set('Location', String((r.meta as { location: string }).location));
  if (ctx.method === 'GET' && notModified(ctx.get('If-None-Match') || undefined, etag)) {
    ctx.status = 304;
    return;
  }
  send(ctx, status, r);
}

/** The caller named in audit events: the SCIM client. */
export const scimActor = (ctx: Ctx) => ({
  type: 'client' as const,
  id: String(ctx.state.auth?.client_id ?? 'unknown'),
  requestId: ctx.state.requestId,
});
