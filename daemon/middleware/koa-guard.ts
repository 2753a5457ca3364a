import type { ParsedUrlQuery } from 'node:querystring';
import type { Middleware } from 'koa';
import type {} from 'koa-body';
import { z } from 'zod';
import { ApiError } from '../../shared/errors.js';
import { parseInput } from '../../shared/schemas/validate.js';
import type { AppState } from '../context.js';

export interface GuardSpec {
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /** Form-encoded bodies (OAuth endpoints) instead of JSON. */
  bodyType?: 'json' | 'form';
}

/** The output of the schema declared under `K`, or `Otherwise` when the spec declares none. */
type Validated<G, K extends keyof GuardSpec, Otherwise> = G extends { [P in K]: infer S extends z.ZodType }
  ? z.output<S>
  : Otherwise;

/**
 * What the guard puts on ctx.state.guard for a route declared with `G`: each part validated by
 * its schema, or what Koa gives when the route declares no schema for it (the raw path
 * parameters and query; no body).
 */
export interface Guarded<G extends GuardSpec> {
  params: Validated<G, 'params', Record<string, string>>;
  query: Validated<G, 'query', ParsedUrlQuery>;
  body: Validated<G, 'body', undefined>;
}

/**
 * The ctx.state that the handlers of a route declared with `G` see: when the spec declares a
 * schema the guard runs before them, so `guard` is set and typed; without one it does not run.
 */
export type WithGuard<S extends AppState, G extends GuardSpec> = G extends
  { params: z.ZodType } | { query: z.ZodType } | { body: z.ZodType }
  ? Omit<S, 'guard'> & { guard: Guarded<G> }
  : S;

export function declaresInput(spec: GuardSpec): boolean {
  return Boolean(spec.params || spec.query || spec.body);
}

/**
 * Validates params, query and body against the route's declared schemas (the same ones that
 * generate /openapi.json) and puts the typed result on ctx.state.guard. Failure is a 400 that
 * names the field; a body of the wrong media type is a 415.
 */
export function guard(spec: GuardSpec): Middleware<AppState> {
  return async (ctx, next) => {
    const params: unknown = spec.params ? parseInput(spec.params, ctx.params ?? {}, 'path') : ctx.params;
    const query = spec.query ? parseInput(spec.query, { ...ctx.query }, 'query') : ctx.query;
    let body: unknown = undefined;
    if (spec.body) {
      const wanted = spec.bodyType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
      if (ctx.request.length && !ctx.is(wanted)) {
        throw new ApiError(415, 'unsupported_media_type', `The request body must be ${wanted}.`);
      }
      body = parseInput(spec.body, (ctx.request.body as unknown) ?? {}, 'body');
    }
    ctx.state.guard = { params, query, body } as NonNullable<AppState['guard']>;
    await next();
  };
}
