/**
 * The body parser's depth limit, right after koa-body (daemon/app.ts): a JSON body nesting
 * objects or arrays more than MAX_JSON_DEPTH (64) levels is refused 400 `invalid_request`
 * before any route, guard or service sees it, on every endpoint (docs/errors.md). JSON.parse
 * reads any depth, but what comes after it (zod, JSON.stringify, RFC 8785 canonicalization)
 * recurses, and a body of 5,000 nested arrays overflowed the stack there: a 500, or the
 * engine's "Maximum call stack size exceeded" in a 400's message. The forms need no limit of
 * their own (/token, /revoke and /introspect are flat; koa-body's qs stops at 5 levels) but
 * pass through the same check, which costs one look at a flat object.
 */
import type { Middleware } from 'koa';
import { ApiError } from '../../shared/errors.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../shared/json-depth.js';
import type { AppState } from '../context.js';

export function bodyDepthLimit(): Middleware<AppState> {
  return async function bodyDepth(ctx, next) {
    if (nestsDeeperThan(ctx.request.body, MAX_JSON_DEPTH))
      throw new ApiError(
        400,
        'invalid_request',
        `The request body nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep; ` +
          `at most ${MAX_JSON_DEPTH} are accepted.`,
      );
    await next();
  };
}
