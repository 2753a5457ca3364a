/**
 * POST /api/user/data-export and GET /api/user/data-export/:id (docs/data-export.md): the
 * authenticated end user's own data. Small exports are answered completed; larger ones are
 * answered 202 pending and built by the `data-export` job. Both need a token with the `account`
 * scope (docs/scopes.md).
 */
import Router from '@koa/router';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import {
  EXPORT_SECTIONS,
  INLINE_ROW_LIMIT,
  buildExport,
  completedBody,
  countExportRows,
  createPendingExport,
  estimateWaitSeconds,
  findExport,
  pendingBody,
} from '../../../shared/services/data-export.js';
import type { AppDeps, AppState } from '../../context.js';
import { userBearer } from '../../middleware/koa-user-bearer.js';
import { ErrorObject, type ApiRegistry } from '../../openapi.js';

const ExportRequest = z.strictObject({
  sections: z.array(z.enum(EXPORT_SECTIONS)).min(1).optional(),
  format: z.enum(['json', 'csv']).optional(),
});
const Completed = z.object({
  status: z.literal('completed'),
  requestId: z.string(),
  format: z.enum(['json', 'csv']),
  data: z.looseObject({}),
  exportedAt: z.number().int(),
});
const Pending = z.object({
  status: z.literal('pending'),
  requestId: z.string(),
  message: z.string(),
  estimatedWaitSeconds: z.number().int(),
});
const Failed = z.object({ status: z.literal('failed'), requestId: z.string(), message: z.string() });
const IdParam = z.strictObject({ id: z.string().min(1).max(64) });
const errors = {
  400: { description: 'invalid input; the message names the field', schema: ErrorObject },
  401: { description: 'missing, invalid or revoked user access token', schema: ErrorObject },
  403: {
    description: 'the token lacks the account scope (first-party clients only): insufficient_scope',
    schema: ErrorObject,
  },
};

export function dataExportRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  // Errors on these paths carry error_code and error_id: the error renderer decides by path.
  // The export holds the user's sessions, addresses and passkeys: only a token with the account
  // scope from a first-party client (docs/scopes.md, "The account scope"); others are 403.
  const auth = userBearer(deps, { requireAccount: true });
  const tags = ['user: data export'];
  const who = (ctx: { state: AppState }) => ({
    tenantId: ctx.state.auth!.tenant_id,
    userId: String(ctx.state.auth!.sub),
  });

  api.add(
    router,
    {
      method: 'post',
      path: '/api/user/data-export',
      summary: "Export the authenticated user's personal data",
      tags,
      security: 'bearer',
      tenant: 'token',
      errors: 'user',
      authenticate: auth,
      body: ExportRequest,
      responses: {
        200: { description: 'small export, built inline (completed shape)', schema: Completed },
        202: { description: 'large export, built in the background (pending shape)', schema: Pending },
        ...errors,
      },
    },
    async (ctx) => {
      const { tenantId, userId } = who(ctx);
      const body = ctx.state.guard.body;
      const sections = EXPORT_SECTIONS.filter((s) => !body.sections || body.sections.includes(s));
      const format = body.format ?? 'json';
      const rows = await countExportRows(deps.ds, tenantId, userId, sections);
      if (rows <= INLINE_ROW_LIMIT) {
        const data = await buildExport(deps.ds, tenantId, userId, sections, format);
        // Not stored: an inline export is answered once; its id only names it in logs.
        const requestId = `dex_inline_${ctx.state.requestId}`;
        ctx.state.log.info({ requestId, rows, format }, 'data export built inline');
        ctx.type = 'application/json';
        ctx.body = completedBody(requestId, format, data, Date.now());
        return;
      }
      const id = await createPendingExport(deps.ds, { tenantId, userId, sections, format });
      ctx.state.log.info({ requestId: id, rows, format }, 'data export queued');
      ctx.status = 202;
      ctx.body = pendingBody(id, estimateWaitSeconds(rows));
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: '/api/user/data-export/:id',
      summary: 'Poll a data export by request id',
      tags,
      security: 'bearer',
      tenant: 'token',
      errors: 'user',
      authenticate: auth,
      params: IdParam,
      responses: {
        200: { description: 'completed, pending or failed', schema: z.union([Completed, Pending, Failed]) },
        ...errors,
        404: {
          description: "no such export for this user (another user's id, unknown, or expired)",
          schema: ErrorObject,
        },
      },
    },
    async (ctx) => {
      const { tenantId, userId } = who(ctx);
      const { id } = ctx.state.guard.params;
      const rec = await findExport(deps.ds, tenantId, userId, id);
      if (!rec) throw new ApiError(404, 'not_found', 'No such data export.');
      ctx.set('Cache-Control', 'no-store');
      if (rec.status === 'completed' && rec.result !== null) {
        ctx.type = 'application/json';
        ctx.body = completedBody(rec.id, rec.format, rec.result, rec.completed_at ?? Date.now());
      } else if (rec.status === 'failed') {
        ctx.body = {
          status: 'failed',
          requestId: rec.id,
          message: 'The export could not be built; request a new one.',
        };
      } else {
        ctx.body = pendingBody(rec.id, 2);
      }
    },
  );

  return router;
}
