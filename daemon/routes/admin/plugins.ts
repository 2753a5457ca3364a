import Router from '@koa/router';
import { ApiError } from '../../../shared/errors.js';
import {
  PluginConfigBody,
  PluginDetailView,
  PluginIdParam,
  PluginListView,
  PluginScopeBody,
  PluginScopeQuery,
  PluginStateView,
} from '../../../shared/schemas/plugins.js';
import { ADMIN_SCOPES, SCOPE_PLATFORM } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry, type RouteSpec } from '../../openapi.js';
import { actorOf } from './directory.js';

/**
 * A change names its scope in the body: `tenant_id` (the tenant's admin or a platform admin,
 * checked by the route's tenant binding before any lookup so another tenant's admin learns
 * nothing), or, absent, the platform-level setting (null), which only iam.platform may change.
 */
function changeScope(named: string | undefined, tenant: string | null): string | null {
  if (named === undefined && tenant !== null)
    throw new ApiError(
      403,
      'insufficient_scope',
      `The platform-level plugin setting needs ${SCOPE_PLATFORM}; a tenant admin names its tenant_id.`,
    );
  return tenant;
}

const common = {
  400: { description: 'invalid input; the message names the field', schema: ErrorObject },
  ...bearerErrors('tenant'),
  404: { description: 'no such plugin (plugin_not_found) or tenant (not_found)', schema: ErrorObject },
};

/**
 * Platform plugins (docs/plugins.md): the registry with each plugin's state for a scope, its
 * config per platform or tenant (secrets never echoed in full), enable and disable. Every
 * change bumps the config generation in its transaction: every daemon sees it at its next use.
 */
export function pluginRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const service = deps.plugins;
  const tags = ['admin: platform plugins'];
  const base = '/api/admin/platform/plugins';

  api.add(
    router,
    {
      method: 'get',
      path: base,
      summary: 'Every built-in plugin with its fields and its state for a tenant or the platform',
      tags,
      security: 'bearer',
      // `?tenant_id=`, else the platform's for iam.platform, else the token's tenant.
      tenant: 'query-or-all',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      query: PluginScopeQuery,
      responses: { 200: { description: 'the plugins and their state', schema: PluginListView }, ...common },
    },
    async (ctx) => {
      ctx.body = await service.list(ctx.state.tenant);
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: `${base}/:id`,
      summary: "One plugin's state for a tenant or the platform, with its latest provisioning operation",
      tags,
      security: 'bearer',
      tenant: 'query-or-all',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: PluginIdParam,
      query: PluginScopeQuery,
      responses: { 200: { description: "the plugin's state", schema: PluginDetailView }, ...common },
    },
    async (ctx) => {
      ctx.body = await service.get(ctx.state.guard.params.id, ctx.state.tenant);
    },
  );

  api.add(
    router,
    {
      method: 'put',
      path: `${base}/:id/config`,
      summary:
        "Set (or, with null, remove) fields of a plugin's config for the platform or a tenant; partial configs are " +
        'accepted and their missing required fields reported',
      tags,
      security: 'bearer',
      tenant: 'body-or-all',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: PluginIdParam,
      body: PluginConfigBody,
      responses: {
        200: { description: 'the Plugin state result, config echoed with secrets masked', schema: PluginStateView },
        ...common,
      },
    },
    async (ctx) => {
      const { tenant_id, config } = ctx.state.guard.body;
      const scope = changeScope(tenant_id, ctx.state.tenant);
      ctx.body = await service.configure(ctx.state.guard.params.id, scope, config, actorOf(ctx));
    },
  );

  const disableResponses: RouteSpec['responses'] = {
    200: { description: 'the Plugin state result', schema: PluginStateView },
    ...common,
  };
  const enableResponses: RouteSpec['responses'] = {
    ...disableResponses,
    403: {
      description:
        'missing scope, a tenant admin naming another tenant (tenant_forbidden), or the tenant relies on the ' +
        'platform configuration and the platform disabled the plugin (plugin_disabled_by_platform)',
      schema: ErrorObject,
    },
    422: {
      description:
        'required configuration fields are missing (plugin_config_incomplete); `missingRequiredFields` lists every one',
      schema: ErrorObject,
    },
  };
  for (const action of ['enable', 'disable'] as const) {
    api.add(
      router,
      {
        method: 'put',
        path: `${base}/:id/${action}`,
        summary:
          action === 'enable'
            ? 'Enable a plugin for the platform or a tenant when its required config is present; runtime plugin ' +
              'caches see it at their next use; a plugin that needs setup returns its provisioning operation'
            : 'Disable a plugin for the platform or a tenant (a tenant disabled here overrides the platform)',
        tags,
        security: 'bearer',
        tenant: 'body-or-all',
        authenticate: auth,
        scopes: ADMIN_SCOPES,
        params: PluginIdParam,
        body: PluginScopeBody,
        responses: action === 'enable' ? enableResponses : disableResponses,
      },
      async (ctx) => {
        const scope = changeScope(ctx.state.guard.body.tenant_id, ctx.state.tenant);
        const id = ctx.state.guard.params.id;
        ctx.body =
          action === 'enable'
            ? await service.enable(id, scope, actorOf(ctx))
            : await service.disable(id, scope, actorOf(ctx));
      },
    );
  }

  return router;
}
