import Router from '@koa/router';
import { z } from 'zod';
import { tenantId } from '../../../shared/schemas/common.js';
import { ScimSettingsInput, ScimSettingsView } from '../../../shared/schemas/scim.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { actorOf } from './directory.js';

const Params = z.strictObject({ tenantId });

/**
 * A tenant's SCIM settings (docs/scim.md, "What DELETE does"): whether DELETE
 * /scim/v2/Users/{id} erases the user or disables them. Admin scopes, like the other
 * settings; the SCIM client's own token (`scim`) cannot change them.
 */
export function scimSettingsRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const common = {
    path: '/api/admin/tenants/:tenantId/scim-settings',
    tags: ['admin: settings'],
    security: 'bearer' as const,
    tenant: { path: 'tenantId' },
    authenticate: auth,
    scopes: ADMIN_SCOPES,
    params: Params,
  };
  const errors = { ...bearerErrors('tenant'), 404: { description: 'no such tenant', schema: ErrorObject } };

  api.add(
    router,
    {
      ...common,
      method: 'get',
      operationId: 'getTenantScimSettings',
      summary: "The tenant's SCIM settings (scim_delete: erase by default)",
      responses: { 200: { description: 'the settings', schema: ScimSettingsView }, ...errors },
    },
    async (ctx) => {
      ctx.body = await deps.scim.users.settings(ctx.state.tenant);
    },
  );

  api.add(
    router,
    {
      ...common,
      method: 'put',
      operationId: 'updateTenantScimSettings',
      summary: "Replace the tenant's SCIM settings; audited (tenant.scim_settings.update)",
      body: ScimSettingsInput,
      responses: {
        200: { description: 'the stored settings', schema: ScimSettingsView },
        400: { description: 'invalid settings; the message names the field', schema: ErrorObject },
        ...errors,
      },
    },
    async (ctx) => {
      ctx.body = await deps.scim.users.setSettings(ctx.state.tenant, ctx.state.guard.body, actorOf(ctx));
    },
  );
  return router;
}
