/**
 * What a route declares about its own behaviour, beside its schemas (daemon/openapi.ts): its
 * body parser, the style of its error answers, its CORS policy and the tenant it acts on.
 * ApiRegistry.add mounts each on the route itself, so no middleware decides behaviour by
 * matching the request path (docs/architecture.md, "Route declarations").
 */
import type { Middleware, ParameterizedContext } from 'koa';
import { z } from 'zod';
import { tenantId } from '../shared/schemas/common.js';
import { ApiError } from '../shared/errors.js';
import { SCOPE_PLATFORM } from '../shared/scopes.js';
import type { AppState } from './context.js';

/**
 * The body parser mounted ahead of the route (after its error style, before everything else):
 * - `json`: koa-body (JSON and, for the HTML forms, urlencoded), then the depth limit
 *   (koa-body-depth.ts); the default of every method but GET, as the global parser was.
 * - `form`: the same reader, for the pages' HTML forms; the name says what the route reads.
 * - `oauth-form`: the OAuth endpoints' flat form (RFC 6749 §3.2, RFC 7009 §2.1) read by
 *   co-body and node:querystring when the request sends exactly that media type, koa-body
 *   otherwise (koa-oauth-form.ts).
 * - `none`: the body is not read; the default of GET (koa-body never parsed GET).
 * - `{ read }`: the route's own reader (POST /introspect's form, daemon/routes/oauth/introspect.ts).
 * Each refuses the same way: 400 for a body that does not decode, 413 over the limit, 415 for
 * an unknown Content-Encoding (koa-body-errors.ts).
 */
export type BodyParser = 'json' | 'form' | 'oauth-form' | 'none' | { read: Middleware<AppState> };

/**
 * How errors raised on the route are rendered (koa-error-handler.ts): `oauth` is the error
 * object of RFC 6749 §5.2 with `message` beside it for ApiErrors (every endpoint but the user
 * API); `user` adds the stable `error_code` and an `error_id` that is also in the log (the end
 * user's API, /api/user and /api/account); `scim` is RFC 7644 §3.12's SCIM error object in
 * application/scim+json (/scim/v2, docs/scim.md). The pages render their own HTML error pages
 * in the handler (views/html.ts); what they throw is rendered as `oauth`.
 */
export type ErrorStyle = NonNullable<AppState['errorStyle']>;

/**
 * CORS (koa-cors.ts): `none` sends no CORS header (the default); `open` lets every origin read,
 * without credentials (discovery, JWKS); `client-origins` answers only the origins registered
 * for the client the request is made for: the client of the form or Basic header on a `basic`
 * route (/token, /revoke), the access token's client on a `bearer` route (/userinfo). A route
 * with CORS also gets its preflight (OPTIONS) answered on its path.
 */
export type CorsPolicy = 'none' | 'open' | 'client-origins';

/**
 * The tenant a bearer route acts on, checked by the registry before the handler runs, which
 * reads it as `ctx.state.tenant`:
 * - `{ path: 'tenantId' }`: the tenant named by that path parameter;
 * - `query`: `?tenant_id=`, default the token's own tenant;
 * - `query-or-all`: `?tenant_id=` when named; when not, every tenant (null) for a platform
 *   admin and the token's own tenant for a tenant admin (the tenant list, the audit log);
 * - `body-or-all`: the same with the body's `tenant_id` (plugin settings, where null is the
 *   platform-level setting);
 * - `token`: the token's own tenant (the user's own API, /userinfo);
 * - `platform`: platform-wide, no tenant (null); the token must carry iam.platform.
 * A named tenant other than the token's needs iam.platform: 403 `tenant_forbidden`, before any
 * lookup, so another tenant's admin learns nothing, not even whether the thing exists.
 */
export type TenantBinding = { path: string } | 'query' | 'query-or-all' | 'body-or-all' | 'token' | 'platform';

/** The resolved tenant's type for a route declared with binding `B`. */
export type TenantOf<B> = B extends 'query-or-all' | 'body-or-all' | 'platform' ? string | null : string;

/** What the registry needs from the application to mount parsers and CORS (built in app.ts). */
export interface RouteMounts {
  parser(kind: 'json' | 'form' | 'oauth-form'): Middleware<AppState>[];
  /** `methods`: every method declared with CORS on the path, read when the first request comes. */
  cors(policy: 'open' | 'client-origins', clientFrom: 'form' | 'token', methods: () => string): Middleware<AppState>;
}

type Ctx = ParameterizedContext<AppState>;

const hasPlatformScope = (ctx: Ctx) =>
  String(ctx.state.auth?.scope ?? '')
    .split(' ')
    .includes(SCOPE_PLATFORM);

/** The check the registry runs after the guard; the handler gets the tenant as ctx.state.tenant. */
export function resolveTenant(ctx: Ctx, binding: TenantBinding): string | null {
  const own = String(ctx.state.auth!.tenant_id);
  const platform = hasPlatformScope(ctx);
  if (binding === 'token') return own;
  if (binding === 'platform') {
    if (!platform) throw new ApiError(403, 'insufficient_scope', `This operation needs the scope ${SCOPE_PLATFORM}.`);
    return null;
  }
  const named =
    typeof binding === 'object'
      ? ((ctx.state.guard?.params ?? ctx.params ?? {}) as Record<string, unknown>)[binding.path]
      : binding === 'body-or-all'
        ? (ctx.state.guard?.body as { tenant_id?: unknown } | undefined)?.tenant_id
        : (ctx.state.guard?.query ?? ctx.query).tenant_id;
  if (named === undefined) return binding !== 'query' && platform ? null : own;
  if (typeof named !== 'string' || (!platform && named !== own))
    throw new ApiError(403, 'tenant_forbidden', 'This token is confined to another tenant.');
  return named;
}

export function tenantCheck(binding: TenantBinding): Middleware<AppState> {
  return async function tenant(ctx, next) {
    ctx.state.tenant = resolveTenant(ctx, binding);
    await next();
  };
}

export function errorStyle(style: ErrorStyle): Middleware<AppState> {
  return async function errors(ctx, next) {
    ctx.state.errorStyle = style;
    await next();
  };
}

/** The keys of a zod object schema (`shape`), or undefined for another kind of schema. */
function keysOf(schema: unknown): string[] | undefined {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape && typeof shape === 'object' ? Object.keys(shape) : undefined;
}

/**
 * A bearer route that declares no tenant binding, or one its schemas cannot satisfy, is a
 * programming error: refused when the application is built, so the daemon does not start.
 */
export function checkTenantBinding(
  where: string,
  spec: { security: string; tenant?: TenantBinding; params?: unknown; query?: unknown; body?: unknown },
): void {
  const b = spec.tenant;
  if (spec.security === 'bearer' && b === undefined)
    throw new Error(`${where}: a bearer route declares its tenant binding (spec.tenant: path, query, token, platform)`);
  if (b === undefined) return;
  if (spec.security !== 'bearer') throw new Error(`${where}: a tenant binding needs bearer security`);
  if (typeof b === 'object' && !(keysOf(spec.params) ?? []).includes(b.path))
    throw new Error(`${where}: the tenant binding names the path parameter ${b.path}, which spec.params lacks`);
  if (b === 'query' && !(keysOf(spec.query) ?? []).includes('tenant_id'))
    throw new Error(`${where}: the tenant binding 'query' needs tenant_id in spec.query (TenantQuery)`);
  if (b === 'body-or-all' && !(keysOf(spec.body) ?? []).includes('tenant_id'))
    throw new Error(`${where}: the tenant binding 'body-or-all' needs tenant_id in spec.body`);
}

/**
 * The query of the admin endpoints bound to `query` (settings, custom claims, field mapping,
 * approvals, agent grants): they act on the token's own tenant, or on `?tenant_id=` for a
 * platform admin.
 */
export const TenantQuery = z.strictObject({
  tenant_id: tenantId
    .optional()
    .describe("The tenant to act on; default the token's own tenant. Another tenant needs iam.platform."),
});
