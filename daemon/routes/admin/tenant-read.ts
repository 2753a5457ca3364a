/**
 * GET /api/admin/tenants/{id}: one tenant, with the `lifecycle_state` and `updated_at` a
 * lifecycle move must name as its precondition (docs/tenant-lifecycle.md). A platform admin
 * reads any tenant; a tenant admin only its own (403 `tenant_forbidden`); unknown id 404.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { TenantView } from '../../../shared/schemas/admin.js';
import { tenantId } from '../../../shared/schemas/common.js';
import { toTenantView } from '../../../shared/services/directory.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { requireTenantAccess } from './directory.js';

const Params = z.strictObject({ id: tenantId });

export function tenantReadRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  api.add(router, {
    method: 'get', path: '/api/admin/tenants/:id', summary: 'Read a tenant (a tenant admin reads its own)',
    tags: ['admin: directory'], security: 'bearer', scopes: ADMIN_SCOPES, params: Params,
    responses: {
      200: { description: 'the tenant', schema: TenantView },
      400: { description: 'invalid tenant id', schema: ErrorObject },
      ...bearerErrors('tenant'),
      404: { description: 'no such tenant', schema: ErrorObject },
    },
  }, bearer(deps, ADMIN_SCOPES), async (ctx) => {
    const { id } = ctx.state.guard!.params as z.output<typeof Params>;
    // Checked before the lookup, so a tenant admin cannot probe which tenant ids exist.
    requireTenantAccess(ctx, id);
    ctx.body = toTenantView(await deps.directory.requireTenant(id));
  });
  return router;
}
