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

/**
 * Validates params, query and body against the route's declared schemas (the same ones that
 * generate /openapi.json) and puts the typed result on ctx.state.guard. Failure is a 400 that
 * names the field; a body of the wrong media type is a 415.
 */
export function guard(spec: GuardSpec): Middleware<AppState> {
  return async (ctx, next) => {
    const params = spec.params ? parseInput(spec.params, ctx.params ?? {}, 'path') : ctx.params;
    const query = spec.query ? parseInput(spec.query, { ...ctx.query }, 'query') : ctx.query;
    let body: unknown = undefined;
    if (spec.body) {
      const wanted = spec.bodyType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
      if (ctx.request.length && !ctx.is(wanted)) {
        throw new ApiError(415, 'unsupported_media_type', `The request body must be ${wanted}.`);
      }
      body = parseInput(spec.body, ctx.request.body ?? {}, 'body');
    }
    ctx.state.guard = { params, query, body };
    await next();
  };
}
