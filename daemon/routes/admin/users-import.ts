/**
 * POST /api/admin/tenants/{tenantId}/users/import: one batch of user records (at most
 * MAX_IMPORT_BATCH), applied in one transaction, a result per record (docs/directory.md,
 * "Users: import and export"). A record the rules refuse is reported in its result with the
 * reason and does not fail the request: 200 whenever the body is a batch. No Idempotency-Key:
 * the import is idempotent by email, so a retried batch reports the users it made as unchanged.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { tenantId } from '../../../shared/schemas/common.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import { MAX_IMPORT_BATCH } from '../../../shared/services/user-transfer/index.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { actorOf } from './directory.js';

const ImportBody = z.strictObject({
  users: z.array(z.unknown()).min(1).max(MAX_IMPORT_BATCH),
  dry_run: z.boolean().optional(),
});

const ImportResult = z.object({
  index: z.number().int(),
  email: z.string().optional(),
  result: z.enum(['created', 'updated', 'unchanged', 'rejected']),
  user_id: z.string().optional(),
  reason: z.string().optional(),
  changed: z.array(z.string()).optional(),
});

const ImportView = z.object({
  dry_run: z.boolean(),
  created: z.number().int(),
  updated: z.number().int(),
  unchanged: z.number().int(),
  rejected: z.number().int(),
  results: z.array(ImportResult),
});

export function userImportRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  api.add(
    router,
    {
      method: 'post',
      path: '/api/admin/tenants/:tenantId/users/import',
      summary: `Import a batch of users (at most ${MAX_IMPORT_BATCH}; idempotent by email; dry_run writes nothing)`,
      tags: ['admin: directory'],
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: bearer(deps, ADMIN_SCOPES),
      scopes: ADMIN_SCOPES,
      params: z.strictObject({ tenantId }),
      body: ImportBody,
      responses: {
        200: { description: 'a result per record, in the order given', schema: ImportView },
        400: { description: 'not a batch (users missing, empty or too many; unknown field)', schema: ErrorObject },
        ...bearerErrors('tenant'),
        404: { description: 'no such tenant', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: id } = ctx.state.guard.params;
      const { users, dry_run } = ctx.state.guard.body;
      const dryRun = dry_run === true;
      const out = await deps.userTransfer.importBatch(id, users, { actor: actorOf(ctx), dryRun });
      ctx.body = {
        dry_run: dryRun,
        created: out.created,
        updated: out.updated,
        unchanged: out.unchanged,
        rejected: out.rejected,
        results: out.results.map(({ position, ...r }) => ({ index: position, ...r })),
      };
    },
  );
  return router;
}
