/**
 * One registry of routes: each route's schemas validate its input (koa-guard) and produce
 * its entry in the OpenAPI 3.1 document at /openapi.json, so the two cannot drift apart.
 */
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { SCOPE_PLATFORM } from '../shared/scopes.js';
import { declaresInput, guard, type GuardSpec, type WithGuard } from './middleware/koa-guard.js';
import type { AppState } from './context.js';
import { ErrorObject, openApiDocument, operationIdOf, type ResponseSpec } from './openapi-document.js';
import {
  checkTenantBinding,
  errorStyle,
  tenantCheck,
  type BodyParser,
  type CorsPolicy,
  type ErrorStyle,
  type RouteMounts,
  type TenantBinding,
  type TenantOf,
} from './route-declarations.js';

export { ErrorObject } from './openapi-document.js';

/**
 * How a route authenticates its caller. `optional-cookie`: the session cookie is read when
 * present but not required (GET /authorize shows the login page without one, /logout has
 * nothing to end); OpenAPI lists it as the cookie scheme or none.
 */
export type Security = 'none' | 'bearer' | 'basic' | 'cookie' | 'optional-cookie';

/** The schemes whose routes must refuse an unauthenticated caller (401) before anything else. */
const REQUIRED_AUTH: ReadonlySet<Security> = new Set(['bearer', 'basic', 'cookie']);

export interface RouteSpec extends GuardSpec {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Koa router syntax, e.g. /api/admin/tenants/:id */
  path: string;
  summary: string;
  tags: string[];
  security: Security;
  scopes?: string[];
  /**
   * The middleware that authenticates the caller (bearer token, client credentials, session
   * cookie): required when `security` is `bearer`, `basic` or `cookie`. ApiRegistry.add runs
   * it before the guard, so an unauthenticated request is answered 401 before its input is
   * validated (a 400 would tell an anonymous caller which fields the route takes).
   */
  authenticate?: Middleware<AppState>;
  /**
   * The request headers the route reads, each declared with the middleware that reads it
   * (e.g. `idempotencyHeader()` of koa-idempotency.ts): ApiRegistry.add runs that middleware
   * after the guard, before the handlers, and lists the header in the OpenAPI document as a
   * parameter `in: header`. One declaration, so the route cannot accept a header the
   * document does not name, nor the document name one the route ignores.
   */
  headers?: HeaderParameter[];
  responses: Record<number, ResponseSpec>;
  /**
   * The operation's operationId in /openapi.json, when the one derived from method and path
   * (openapi-document.ts, operationIdOf) reads poorly; unique among the documented routes.
   */
  operationId?: string;
  /**
   * The application/x-www-form-urlencoded body of an endpoint that reads and checks its form
   * itself (the OAuth endpoints answer RFC 6749 §5.2 errors, not the guard's): listed in the
   * document as the request body, never validated by the guard.
   */
  form?: z.ZodType;
  /** The body parser (route-declarations.ts); default `none` for GET, `json` for the other methods. */
  parser?: BodyParser;
  /** The style of the error answers (route-declarations.ts); default `oauth`. */
  errors?: ErrorStyle;
  /** CORS (route-declarations.ts); default `none`. */
  cors?: CorsPolicy;
  /**
   * The tenant the route acts on (route-declarations.ts): required on a `bearer` route (the
   * application refuses to build without it); the registry checks it after the guard and the
   * handlers read it as `ctx.state.tenant`.
   */
  tenant?: TenantBinding;
  /**
   * false: the route is served but not listed in /openapi.json (the HTML pages and their
   * forms, the scripts they load).
   */
  document?: boolean;
}

/** The ctx.state a route's handlers see: the guard's typed input, and its resolved tenant. */
export type RouteState<S extends AppState, R extends RouteSpec> = R extends { tenant: infer B extends TenantBinding }
  ? Omit<WithGuard<S, R>, 'tenant'> & { tenant: TenantOf<B> }
  : WithGuard<S, R>;

/**
 * A part of the path space whose unmatched requests (404, 405) are answered in an error style,
 * as the routes under it are (the user API's `error_code`): the registry's one place that
 * reasons about path prefixes, declared in app.ts next to the routers.
 */
interface Area {
  prefix: string;
  errors: ErrorStyle;
}

/**
 * A request header of a route (OpenAPI 3.1 §4.8.12, `in: header`). `middleware` acts on it;
 * a header the handler reads itself (e.g. If-Match) is declared without one.
 */
export interface HeaderParameter {
  /** As the client sends it, e.g. `Idempotency-Key`. */
  name: string;
  description: string;
  required?: boolean;
  schema: z.ZodType;
  middleware?: Middleware<AppState>;
}

/** If-Match on a PATCH or PUT that compares the ETag its GET set (the handler reads it). */
export const IF_MATCH_HEADER: HeaderParameter = {
  name: 'If-Match',
  description: 'Optional: a strong ETag from GET, or *; a mismatch is 412 (RFC 9110 §13.1.1)',
  required: false,
  schema: z.string().min(1).max(2048),
};

/** The ETag a route sets on its answer (ResponseSpec.headers), which its PATCH compares to If-Match. */
export const ETAG_HEADER = {
  ETag: 'A strong validator (RFC 9110 §8.8.3): send it as If-Match to change only what was read (§13.1.1)',
};

/**
 * The answers of the bearer middleware (daemon/middleware/koa-bearer.ts) on an admin route:
 * 401 without a valid token; 403 without an accepted scope, or (`tenant`) for a tenant admin
 * naming another tenant. Every admin route documents them the same way.
 */
export function bearerErrors(reach: 'platform' | 'tenant') {
  return {
    401: { description: 'missing or invalid token', schema: ErrorObject, shared: 'Unauthorized' },
    403: {
      shared: reach === 'platform' ? 'PlatformForbidden' : 'TenantForbidden',
      description:
        reach === 'platform'
          ? `requires ${SCOPE_PLATFORM} (a tenant admin may not, even for its own tenant)`
          : 'missing scope, or a tenant admin naming another tenant (tenant_forbidden)',
      schema: ErrorObject,
    },
  };
}

export class ApiRegistry {
  readonly routes: RouteSpec[] = [];
  private readonly areas: Area[] = [];
  /** Each route's chain, by the router it was added to (for `ahead`). */
  private readonly chains = new WeakMap<object, Map<string, Middleware<AppState>[]>>();
  /** The paths whose preflight (OPTIONS) is registered, per router. */
  private readonly preflights = new WeakMap<object, Set<string>>();
  /** The operationIds of the documented routes so far, each with its route. */
  private readonly operationIds = new Map<string, string>();

  /**
   * `mounts` builds the body parsers and CORS middleware (app.ts); without it (a unit test's
   * registry) routes get no parser and no CORS.
   */
  constructor(private readonly mounts?: RouteMounts) {}

  /** Declares the error style of the requests under `prefix` that no route matches. */
  area(prefix: string, errors: ErrorStyle): void {
    this.areas.push({ prefix, errors });
  }

  /**
   * Mounted after the router: a request no route matched (404, or 405 from allowedMethods,
   * which answers after this returns) gets the error style of its area.
   */
  unmatched(): Middleware<AppState> {
    return async (ctx, next) => {
      if (ctx.state.errorStyle === undefined) {
        const area = this.areas.find((a) => ctx.path === a.prefix || ctx.path.startsWith(`${a.prefix}/`));
        if (area) ctx.state.errorStyle = area.errors;
      }
      await next();
    };
  }

  /**
   * Registers the route on the router: its authentication first, then its guard, then the
   * handlers, which see `ctx.state.guard` typed from the spec's schemas. A route that declares
   * bearer, basic or cookie security without an `authenticate` middleware is a programming
   * error, refused here when the application is built.
   */
  add<S extends AppState, const R extends RouteSpec>(
    router: Router<S>,
    spec: R,
    ...handlers: Middleware<RouteState<NoInfer<S>, R>>[]
  ): void {
    const where = `${spec.method.toUpperCase()} ${spec.path}`;
    if (REQUIRED_AUTH.has(spec.security) && !spec.authenticate)
      throw new Error(`${where}: ${spec.security} security needs spec.authenticate`);
    checkTenantBinding(where, spec);
    const style = spec.errors ?? 'oauth';
    const area = this.areas.find((a) => spec.path === a.prefix || spec.path.startsWith(`${a.prefix}/`));
    if (area && area.errors !== style)
      throw new Error(
        `${where}: declares errors '${style}' under ${area.prefix}, whose error style is '${area.errors}'`,
      );
    if (
      spec.cors &&
      spec.cors !== 'none' &&
      spec.cors !== 'open' &&
      spec.security !== 'basic' &&
      spec.security !== 'bearer'
    )
      throw new Error(`${where}: client-origins CORS names its client by Basic/form (basic) or by the token (bearer)`);
    if (spec.document !== false) {
      const id = operationIdOf(spec);
      if (!/^[a-z][A-Za-z0-9]*$/.test(id)) throw new Error(`${where}: operationId ${id} is not camelCase`);
      const other = this.operationIds.get(id);
      if (other) throw new Error(`${where}: operationId ${id} is ${other}'s already (declare spec.operationId)`);
      this.operationIds.set(id, where);
    }
    this.routes.push(spec);
    // In this order: the error style (so everything after renders in it), the body parser,
    // CORS (which may read the client from the form), authentication, the guard, the tenant
    // check (which reads the validated path or query), the headers' middleware, the handlers.
    // The guard and the tenant check set what RouteState promises before any handler runs;
    // Koa's types cannot follow a state that grows along the chain, hence the one cast here.
    const chain = [
      ...(style !== 'oauth' ? [errorStyle(style)] : []),
      ...this.parserOf(spec),
      ...this.corsOf(router, spec),
      ...(spec.authenticate ? [spec.authenticate] : []),
      ...(declaresInput(spec) ? [guard(spec)] : []),
      ...(spec.tenant ? [tenantCheck(spec.tenant)] : []),
      ...(spec.headers ?? []).flatMap((h) => (h.middleware ? [h.middleware] : [])),
      ...handlers,
    ] as Middleware<S>[];
    (router[spec.method] as (path: string, ...mw: Middleware<S>[]) => unknown).call(router, spec.path, ...chain);
    let chains = this.chains.get(router);
    if (!chains) this.chains.set(router, (chains = new Map<string, Middleware<AppState>[]>()));
    chains.set(`${spec.method.toUpperCase()} ${spec.path}`, chain as Middleware<AppState>[]);
  }

  /**
   * The middleware of a router mounted ahead of the root router, for the route resource
   * servers call on every request they serve (POST /introspect): a request for exactly the
   * method and declared path of one of its routes runs that route's chain (the same chain the
   * router holds) directly, without the router's matching and its per-request composition;
   * any other request (a trailing slash, another method) goes through the router, and from
   * there to the root router, whose allowedMethods answers 405.
   */
  ahead<S extends AppState>(router: Router<S>): Middleware<S> {
    const direct = new Map<string, Middleware<AppState>[]>();
    for (const [key, chain] of this.chains.get(router) ?? []) if (!key.includes(':')) direct.set(key, chain);
    return shortcut(direct, router.routes() as Middleware<S>);
  }

  /**
   * The root router's middleware, with the same shortcut for every route without a path
   * parameter (/authorize, /token, the direct sign-in API: every request of a login): @koa/router
   * tests a request against each of its hundreds of routes' expressions and composes the
   * matched chain per request, measured at 4 % of a login's event loop. A route is taken
   * directly only when it is the one layer the router itself would match for its method and
   * path, so what runs is exactly what the router would run; anything else goes through it.
   */
  direct<S extends AppState>(root: Router<S>, routers: Router<S>[]): Middleware<S> {
    const direct = new Map<string, Middleware<AppState>[]>();
    for (const router of routers) {
      for (const [key, chain] of this.chains.get(router) ?? []) {
        if (key.includes(':')) continue;
        const [method, path] = key.split(' ');
        const layers = root.match(path, method).pathAndMethod;
        if (layers.length === 1 && layers[0].path === path) direct.set(key, chain);
      }
    }
    return shortcut(direct, root.routes() as Middleware<S>);
  }

  /**
   * A page, a page's form or a script it loads: served, declared with its parser (default as
   * for `add`) and its session check if any, and not listed in /openapi.json (HTML, not API).
   * The same chain as `add`; the handler renders its own error pages (views/html.ts).
   */
  page<S extends AppState>(
    router: Router<S>,
    decl: Pick<RouteSpec, 'method' | 'path' | 'parser'> & { authenticate?: Middleware<AppState> },
    ...handlers: Middleware<S, { params: Record<string, string> }>[]
  ): void {
    this.add(
      router,
      {
        ...decl,
        summary: 'page',
        tags: ['pages'],
        security: decl.authenticate ? 'cookie' : 'none',
        document: false,
        responses: {},
      },
      ...(handlers as Middleware<S>[]),
    );
  }

  private parserOf(spec: RouteSpec): Middleware<AppState>[] {
    const p = spec.parser ?? (spec.method === 'get' ? 'none' : 'json');
    if (p === 'none') return [];
    if (typeof p === 'object') return [p.read];
    return this.mounts?.parser(p) ?? [];
  }

  /** The route's CORS middleware; the first CORS route of a path also registers its preflight. */
  private corsOf<S extends AppState>(router: Router<S>, spec: RouteSpec): Middleware<AppState>[] {
    const policy = spec.cors ?? 'none';
    if (policy === 'none' || !this.mounts) return [];
    const methods = () =>
      [
        ...new Set(
          this.routes
            .filter((r) => r.path === spec.path && (r.cors ?? 'none') !== 'none')
            .map((r) => r.method.toUpperCase()),
        ),
      ].join(',');
    const from = spec.security === 'bearer' ? 'token' : 'form';
    const mw = this.mounts.cors(policy, from, methods);
    let paths = this.preflights.get(router);
    if (!paths) this.preflights.set(router, (paths = new Set()));
    if (!paths.has(spec.path)) {
      paths.add(spec.path);
      // A preflight carries no body and no credentials: answered by the same policy.
      router.options(spec.path, this.mounts.cors(policy, from, methods) as Middleware<S>);
    }
    return [mw];
  }

  /** The OpenAPI 3.1 document of the documented routes (openapi-document.ts). */
  document(issuer: string, version: string): Record<string, unknown> {
    return openApiDocument(this.routes, issuer, version);
  }
}

/** Runs the chain of `${method} ${path}` when there is one, else `fallback` (the router). */
function shortcut<S extends AppState>(
  direct: Map<string, Middleware<AppState>[]>,
  fallback: Middleware<S>,
): Middleware<S> {
  return async (ctx, next) => {
    const chain = direct.get(`${ctx.method} ${ctx.path}`);
    if (!chain) {
      await fallback(ctx, next);
      return;
    }
    // What @koa/router sets on a request a route served: the request metrics label by it.
    (ctx as { _matchedRoute?: string })._matchedRoute = ctx.path;
    (ctx as { params?: Record<string, string> }).params = {};
    const run = async (i: number): Promise<void> => {
      if (i === chain.length) {
        await next();
        return;
      }
      await chain[i](ctx, () => run(i + 1));
    };
    await run(0);
  };
}
