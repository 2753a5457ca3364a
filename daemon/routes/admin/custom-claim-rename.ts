import Router from '@koa/router';
import { z } from 'zod';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import { INLINE_RENAME_MAX_USERS, RenameInput, RenameResult } from '../../../shared/services/claim-rename.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { TenantQuery } from '../../route-declarations.js';
import { actorOf } from './directory.js';

const SchemaParam = z.strictObject({
  id: z.string().min(1).max(64).describe('The custom claim schema id'),
});

/**
 * The spec's PATCH /api/admin/custom-claims/{id}/rename (two-phase, crash-safe; docs/claims.md,
 * "Rename") and a GET of the same path that shows the schema's latest rename, for polling.
 * Tenant: the token's `tenant_id`, or `?tenant_id=` for a platform admin.
 */
export function customClaimRenameRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const service = deps.claimRename;
  const tags = ['admin: custom claims'];
  const path = '/api/admin/custom-claims/:id/rename';

  api.add(
    router,
    {
      method: 'patch',
      path,
      operationId: 'renameCustomClaim',
      summary:
        'Rename a custom claim: the stored values are copied to the new key in checkpointed batches, then the key ' +
        `switches in one transaction; at most ${INLINE_RENAME_MAX_USERS} stored values finish within the request ` +
        '(200), a larger rename answers 202 once accepted',
      tags,
      security: 'bearer',
      tenant: 'query',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: SchemaParam,
      query: TenantQuery,
      body: RenameInput,
      responses: {
        200: {
          description:
            `a rename of at most ${INLINE_RENAME_MAX_USERS} stored values, completed: the schema under its new key ` +
            '(`active`), `affected_users` the users whose value moved',
          schema: RenameResult,
        },
        202: {
          description:
            `a larger rename, accepted: the schema is \`renaming\` until the operation completes (poll GET on this ` +
            'path); `affected_users` counts the users with a stored value',
          schema: RenameResult,
        },
        400: {
          description:
            'invalid body (invalid_request), a key that does not match the pattern (invalid_claim_key), a reserved ' +
            'claim name (reserved_claim_key) or the current key (same_field_key)',
          schema: ErrorObject,
        },
        ...bearerErrors('tenant'),
        404: { description: 'no such custom claim schema in the tenant', schema: ErrorObject },
        409: {
          description:
            'a system schema (system_claim_schema), a key another claim of the tenant has or a running rename ' +
            'holds (claim_key_conflict), a rename of this schema already running (rename_in_progress), or a ' +
            'small rename whose switch was refused as it ran (claim_key_conflict, rename_failed)',
          schema: ErrorObject,
        },
      },
    },
    async (ctx) => {
      const tenant = ctx.state.tenant;
      const result = await service.start(tenant, ctx.state.guard.params.id, ctx.state.guard.body, actorOf(ctx));
      ctx.body = result;
      // Finished within the request (INLINE_RENAME_MAX_USERS), or accepted for the job.
      ctx.status = result.operation.state === 'completed' ? 200 : 202;
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path,
      operationId: 'getCustomClaimRename',
      summary: "The custom claim schema's latest rename: its state and progress (copied_count of affected_users)",
      tags,
      security: 'bearer',
      tenant: 'query',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: SchemaParam,
      query: TenantQuery,
      responses: {
        200: { description: 'the schema as it is now, and its latest rename operation', schema: RenameResult },
        400: { description: 'invalid parameter', schema: ErrorObject },
        ...bearerErrors('tenant'),
        404: { description: 'no such schema in the tenant, or it has never been renamed', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const tenant = ctx.state.tenant;
      ctx.body = await service.status(tenant, ctx.state.guard.params.id);
    },
  );

  return router;
}
