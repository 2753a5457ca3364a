import type { Middleware } from 'koa';
import { ApiError } from '../../shared/errors.js';
import { SESSION_COOKIE } from '../../shared/services/auth/policy.js';
import type { AppDeps, AppState } from '../context.js';
import { readCookie } from '../cookies.js';
import { signedOutPage } from '../routes/account/sign-in.js';

/**
 * Authenticates the browser by its session cookie (`service_session`) and puts the live
 * session and its user on ctx.state.session. Without a live session: a 401, as the JSON error
 * object on the account API, or (`page`) as the signed-out page on the server-rendered
 * account page, with its "Sign in". Registered as a route's `authenticate`, so it runs before the route's guard.
 */
export function sessionAuth(deps: AppDeps, opts: { page?: boolean } = {}): Middleware<AppState> {
  return async (ctx, next) => {
    const found = await deps.sessions.findSession(readCookie(ctx, SESSION_COOKIE));
    if (!found) {
      if (!opts.page) throw new ApiError(401, 'invalid_token', 'A valid session cookie is required.');
      // The signed-out page offers the account console's own sign-in (routes/account/sign-in.ts).
      return signedOutPage(deps, ctx);
    }
    ctx.state.session = found;
    await next();
  };
}
