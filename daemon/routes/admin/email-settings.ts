import Router from '@koa/router';
import { z } from 'zod';
import { tenantId } from '../../../shared/schemas/common.js';
import { EmailSettingsView } from '../../../shared/schemas/email.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { actorOf } from './directory.js';

const TenantParam = z.strictObject({ tenantId });
const errors = {
  400: { description: 'invalid input; the message names the field', schema: ErrorObject },
  ...bearerErrors('tenant'),
  404: { description: 'no such tenant', schema: ErrorObject },
};

/**
 * A tenant's email notifier provider order (strategy `priority_failover`): which providers
 * the outbox tries for the tenant's mail, first to last.
 */
export function emailSettingsRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const service = deps.emailSettings;
  const tags = ['admin: email settings'];
  const path = '/api/admin/tenants/:tenantId/email-settings';

  api.add(
    router,
    {
      method: 'patch',
      path,
      summary: "Set the tenant's email notifier provider order for priority failover routing",
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: TenantParam,
      body: service.input,
      responses: {
        200: { description: 'the stored settings and every provider', schema: EmailSettingsView },
        ...errors,
      },
    },
    async (ctx) => {
      const { tenantId: id } = ctx.state.guard.params;
      ctx.body = await service.update(id, ctx.state.guard.body, actorOf(ctx));
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path,
      summary: "The tenant's email notifier settings in force (the default order if none was set)",
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: TenantParam,
      responses: {
        200: { description: 'the settings in force and every provider', schema: EmailSettingsView },
        ...errors,
      },
    },
    async (ctx) => {
      const { tenantId: id } = ctx.state.guard.params;
      ctx.body = await service.get(id);
    },
  );

  return router;
}
