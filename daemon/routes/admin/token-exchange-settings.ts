import Router from '@koa/router';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import { noteFor, TokenExchangeSettingsResult } from '../../../shared/services/token-exchange/settings.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { TenantQuery } from '../../route-declarations.js';
import { actorOf } from './directory.js';

const errors = {
  400: {
    description: 'invalid settings; the message names the field (e.g. body.idJag.allowedIssuers.0)',
    schema: ErrorObject,
  },
  ...bearerErrors('tenant'),
  404: { description: 'no such tenant', schema: ErrorObject },
};

/**
 * The spec's PUT /api/admin/settings/token-exchange (and a GET of the same path). Settings
 * are per tenant: the token's `tenant_id`, or `?tenant_id=` for a platform admin.
 */
export function tokenExchangeSettingsRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const service = deps.tokenExchangeSettings;
  const tags = ['admin: settings'];
  const path = '/api/admin/settings/token-exchange';

  api.add(
    router,
    {
      method: 'put',
      path,
      operationId: 'updateTokenExchangeSettings',
      summary:
        "Validate and store the tenant's token exchange (RFC 8693) and ID-JAG settings; fields left out keep their " +
        'value',
      tags,
      security: 'bearer',
      tenant: 'query',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      query: TenantQuery,
      body: service.input,
      responses: {
        200: {
          description: 'the stored settings, with a note on where and when they apply',
          schema: TokenExchangeSettingsResult,
        },
        ...errors,
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
      operationId: 'getTokenExchangeSettings',
      summary: "The tenant's token exchange settings in force (defaults: disabled)",
      tags,
      security: 'bearer',
      tenant: 'query',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      query: TenantQuery,
      responses: { 200: { description: 'the settings in force', schema: TokenExchangeSettingsResult }, ...errors },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      const settings = await service.get(id);
      ctx.body = { success: true, settings, note: noteFor(id, settings) };
    },
  );

  return router;
}
