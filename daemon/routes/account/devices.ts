/**
 * The account page's devices: the user's live browser sessions, cursor-paginated, and
 * signing one of them out. Authenticated by the session cookie; the state-changing DELETE
 * also refuses a cross-origin request (Origin present and not the issuer's origin).
 */
import Router from '@koa/router';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import type { AppDeps, AppState } from '../../context.js';
import { refuseCrossOrigin } from '../../csrf.js';
import { sessionAuth } from '../../middleware/koa-session.js';
import { ErrorObject, type ApiRegistry } from '../../openapi.js';

export const DeviceRecord = z.object({
  id: z.string(),
  display_name: z.string(),
  fallback_display_name: z.string().optional(),
  platform: z.string(),
  current: z.boolean(),
  last_seen_at: z.string().nullable().optional(),
  last_seen_at_unix: z.int().nullable().optional(),
  client_id: z.string().optional(),
  app_display_name: z.string().optional(),
});

const DevicesQuery = z.object({
  cursor: z.string().min(1).max(600).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

const errors = {
  401: { description: 'no valid session cookie', schema: ErrorObject },
};

export function accountDeviceRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const service = deps.account;
  const tags = ['account: devices'];
  const issuerOrigin = new URL(deps.config.issuer).origin;
  // Errors on these paths carry error_code and error_id: the error renderer decides by path.

  const authenticate = sessionAuth(deps);

  api.add(
    router,
    {
      method: 'get',
      path: '/api/account/devices',
      summary: 'The devices signed in to the account (live sessions)',
      tags,
      security: 'cookie',
      errors: 'user',
      authenticate,
      query: DevicesQuery,
      responses: {
        200: {
          description: 'one page of devices',
          schema: z.object({ devices: z.array(DeviceRecord), next_cursor: z.string().optional() }),
        },
        400: { description: 'invalid limit or cursor', schema: ErrorObject },
        ...errors,
      },
    },
    async (ctx) => {
      const s = ctx.state.session!.session;
      const { cursor, limit } = ctx.state.guard.query;
      // A cursor that does not verify is the service's 400 invalid_request (shared/cursor.ts).
      ctx.body = await service.listDevices(s.tenant_id, s.user_id, s.id, limit, cursor);
      ctx.set('Cache-Control', 'no-store');
    },
  );

  api.add(
    router,
    {
      method: 'delete',
      path: '/api/account/devices/:id',
      summary: 'Sign a device out (revoke its session and tokens)',
      tags,
      security: 'cookie',
      errors: 'user',
      authenticate,
      params: z.strictObject({ id: z.string().min(1).max(64) }),
      responses: {
        204: { description: 'signed out' },
        400: { description: 'invalid id', schema: ErrorObject },
        ...errors,
        403: { description: 'cross-origin request', schema: ErrorObject },
        404: { description: 'no such device of this user', schema: ErrorObject },
      },
    },
    async (ctx) => {
      refuseCrossOrigin(ctx.get('Origin'), issuerOrigin);
      const s = ctx.state.session!.session;
      const target = await service.findDeviceSession(s.tenant_id, s.user_id, ctx.state.guard.params.id);
      if (!target) throw new ApiError(404, 'not_found', 'No such device.');
      await deps.sessions.revokeSession(s.tenant_id, target, 'device_signed_out');
      ctx.status = 204;
    },
  );

  return router;
}
