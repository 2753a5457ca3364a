import Router from '@koa/router';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import { ExternalTokenRefreshResult } from '../../../shared/services/external-token-refresh/config.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { TenantQuery } from '../../route-declarations.js';
import { actorOf } from './directory.js';

const errors = {
  400: {
    description: 'a field out of its bounds or of the wrong type; the message names it (e.g. body.batchSize)',
    schema: ErrorObject,
  },
  ...bearerErrors('tenant'),
  404: { description: 'no such tenant', schema: ErrorObject },
};

/**
 * The spec's PUT /api/admin/external-token-refresh/config (and a GET of the same path): the
 * tenant's external token refresh configuration (docs/identity-providers.md, "Keeping upstream
 * tokens fresh"). Per tenant: the token's `tenant_id`, or `?tenant_id=` for a platform admin.
 */
export function externalTokenRefreshRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const service = deps.externalTokenRefreshSettings;
  const tags = ['admin: settings'];
  const path = '/api/admin/external-token-refresh/config';

  api.add(
    router,
    {
      method: 'put',
      path,
      summary:
        "Validate and store the tenant's external token refresh configuration (fields left out keep their value); " +
        'forwarded to the upstream identity-provider bridge, so a tenant without an active upstream provider gets 503',
      tags,
      security: 'bearer',
      tenant: 'query',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      query: TenantQuery,
      body: service.input,
      responses: {
        200: {
          description: 'the configuration in force (all five fields) and the scan status',
          schema: ExternalTokenRefreshResult,
        },
        ...errors,
        503: {
          description: 'bridge_unavailable: the tenant has no active upstream identity provider; nothing was stored',
          schema: ErrorObject,
        },
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.body = await service.update(id, ctx.state.guard.body, actorOf(ctx));
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path,
      summary: "The tenant's external token refresh configuration in force (defaults: disabled) and the scan status",
      tags,
      security: 'bearer',
      tenant: 'query',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      query: TenantQuery,
      responses: { 200: { description: 'the configuration in force', schema: ExternalTokenRefreshResult }, ...errors },
    },
    async (ctx) => {
      ctx.body = await service.get(ctx.state.tenant);
    },
  );

  return router;
}
