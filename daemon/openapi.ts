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
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string }>;
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

export const ErrorObject = z.looseObject({
  error: z.string().optional(),
  message: z.string().optional(),
  error_description: z.string().optional(),
  error_code: z
    .string()
    .regex(/^[A-Z]{2}[0-9]{6}$/)
    .optional(),
  error_id: z.uuid().optional(),
});

/**
 * The answers of the bearer middleware (daemon/middleware/koa-bearer.ts) on an admin route:
 * 401 without a valid token; 403 without an accepted scope, or (`tenant`) for a tenant admin
 * naming another tenant. Every admin route documents them the same way.
 */
export function bearerErrors(reach: 'platform' | 'tenant') {
  return {
    401: { description: 'missing or invalid token', schema: ErrorObject },
    403: {
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

  /**
   * Registers the route on the router: its authentication first, then its guard, then the
   * handlers, which see `ctx.state.guard` typed from the spec's schemas. A route that declares
   * bearer, basic or cookie security without an `authenticate` middleware is a programming
   * error, refused here when the application is built.
   */
  add<S extends AppState, const R extends RouteSpec>(
    router: Router<S>,
    spec: R,
    ...handlers: Middleware<WithGuard<NoInfer<S>, R>>[]
  ): void {
    if (REQUIRED_AUTH.has(spec.security) && !spec.authenticate)
      throw new Error(`${spec.method.toUpperCase()} ${spec.path}: ${spec.security} security needs spec.authenticate`);
    this.routes.push(spec);
    // The guard sets what WithGuard promises before any handler runs; Koa's types cannot
    // follow a state that grows along the chain, hence the one cast here.
    const chain = [
      ...(spec.authenticate ? [spec.authenticate] : []),
      ...(declaresInput(spec) ? [guard(spec)] : []),
      ...(spec.headers ?? []).flatMap((h) => (h.middleware ? [h.middleware] : [])),
      ...handlers,
    ] as Middleware<S>[];
    (router[spec.method] as (path: string, ...mw: Middleware<S>[]) => unknown).call(router, spec.path, ...chain);
  }

  document(issuer: string, version: string): Record<string, unknown> {
    const paths: Record<string, Record<string, unknown>> = {};
    const schema = (s: z.ZodType, io: 'input' | 'output') =>
      z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-2020-12' });
    for (const r of this.routes) {
      const oaPath = r.path.replace(/:([A-Za-z_]+)/g, '{$1}');
      const parameters: unknown[] = [];
      for (const [where, s] of [
        ['path', r.params],
        ['query', r.query],
      ] as const) {
        if (!s) continue;
        const js = schema(s, 'input') as { properties?: Record<string, unknown>; required?: string[] };
        for (const [name, prop] of Object.entries(js.properties ?? {})) {
          parameters.push({
            name,
            in: where,
            required: where === 'path' || (js.required ?? []).includes(name),
            schema: prop,
          });
        }
      }
      for (const h of r.headers ?? []) {
        parameters.push({
          name: h.name,
          in: 'header',
          required: h.required ?? false,
          description: h.description,
          schema: schema(h.schema, 'input'),
        });
      }
      const op: Record<string, unknown> = {
        summary: r.summary,
        tags: r.tags,
        ...(parameters.length ? { parameters } : {}),
        ...(r.body
          ? {
              requestBody: {
                required: true,
                content: {
                  [r.bodyType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json']: {
                    schema: schema(r.body, 'input'),
                  },
                },
              },
            }
          : {}),
        responses: Object.fromEntries(
          Object.entries(r.responses).map(([status, resp]) => [
            status,
            {
              description: resp.description,
              ...(resp.schema
                ? { content: { [resp.contentType ?? 'application/json']: { schema: schema(resp.schema, 'output') } } }
                : {}),
            },
          ]),
        ),
        security:
          r.security === 'none'
            ? []
            : r.security === 'optional-cookie'
              ? [{ cookie: [] }, {}]
              : [{ [r.security]: r.scopes ?? [] }],
      };
      (paths[oaPath] ??= {})[r.method] = op;
    }
    return {
      openapi: '3.1.0',
      info: { title: 'Identity and Access Service', version },
      servers: [{ url: issuer }],
      paths,
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          basic: { type: 'http', scheme: 'basic' },
          cookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'service_session',
            // RFC 6265bis §4.1.3.2; docs/security.md, "Proxies and cookies".
            description:
              'The browser session. On an https issuer the cookie is named __Host-service_session ' +
              '(Secure, Path=/, no Domain); service_session on an http issuer.',
          },
        },
        schemas: { Error: schema(ErrorObject, 'output') },
      },
    };
  }
}
