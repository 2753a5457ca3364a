/**
 * The user's own recent sign-ins as JSON (GET /api/account/sign-ins), beside the account page's
 * table of them (page.ts): authenticated by the session cookie like /api/account/devices,
 * cursor-paginated with a cursor of its own (not an operator's).
 */
import Router from '@koa/router';
import { z } from 'zod';
import { OwnSignInsQuery, SignInRecord } from '../../../shared/schemas/sign-ins.js';
import type { AppDeps, AppState } from '../../context.js';
import { sessionAuth } from '../../middleware/koa-session.js';
import { ErrorObject, type ApiRegistry } from '../../openapi.js';

export function accountSignInRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  api.add(
    router,
    {
      method: 'get',
      path: '/api/account/sign-ins',
      summary: "The account's own recent sign-in attempts, newest first",
      tags: ['account: sign-ins'],
      security: 'cookie',
      errors: 'user',
      authenticate: sessionAuth(deps),
      query: OwnSignInsQuery,
      responses: {
        200: {
          description: 'one page of sign-ins',
          schema: z.object({ sign_ins: z.array(SignInRecord), next_cursor: z.string().optional() }),
        },
        400: { description: 'invalid limit or cursor', schema: ErrorObject },
        401: { description: 'no valid session cookie', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const s = ctx.state.session!.session;
      const { cursor, limit } = ctx.state.guard.query;
      ctx.body = await deps.signIns.mine(s.tenant_id, s.user_id, limit, cursor);
      ctx.set('Cache-Control', 'no-store');
    },
  );
  return router;
}
