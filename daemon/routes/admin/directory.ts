import Router from '@koa/router';
import { z } from 'zod';
import { ApiError } from '../../../shared/errors.js';
import {
  ClientView,
  CreateClientInput,
  CreatedClientView,
  CreatedTenantView,
  CreateTenantInput,
  CreateUserInput,
  UserView,
} from '../../../shared/schemas/admin.js';
import { tenantId } from '../../../shared/schemas/common.js';
import { TenantDetailView, TenantListQuery, TenantListView } from '../../../shared/schemas/tenants.js';
import { toClientView, toTenantView } from '../../../shared/services/directory.js';
import { StandardClaimScopesInput, StandardClaimScopesView } from '../../../shared/schemas/standard-claims.js';
import type { Actor } from '../../../shared/services/audit.js';
import { ADMIN_SCOPES, SCOPE_PLATFORM } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, ETAG_HEADER, type ApiRegistry } from '../../openapi.js';
import type { ParameterizedContext } from 'koa';

type Ctx = ParameterizedContext<AppState>;

const isPlatform = (ctx: Ctx) =>
  String(ctx.state.auth?.scope ?? '')
    .split(' ')
    .includes(SCOPE_PLATFORM);

export const actorOf = (ctx: Ctx): Actor => ({
  type: 'client',
  id: String(ctx.state.auth?.client_id ?? 'unknown'),
  requestId: ctx.state.requestId,
});

const Paging = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  offset: z.coerce.number().int().min(0).optional(),
});
const TenantParam = z.strictObject({ tenantId });
const errors = {
  400: { description: 'invalid input', schema: ErrorObject },
  ...bearerErrors('tenant'),
};

/** Tenants, clients and users over HTTP: the same DirectoryService the `iam` CLI uses. */
export function directoryRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const platformOnly = bearer(deps, [SCOPE_PLATFORM]);
  const tags = ['admin: directory'];

  api.add(
    router,
    {
      method: 'post',
      path: '/api/admin/tenants',
      summary: 'Create a tenant (state provisioning) and start its provisioning operation',
      tags,
      security: 'bearer',
      authenticate: platformOnly,
      tenant: 'platform',
      scopes: [SCOPE_PLATFORM],
      body: CreateTenantInput,
      responses: {
        201: {
          description: 'created; `provisioning` is the operation that will activate it',
          schema: CreatedTenantView,
        },
        ...errors,
      },
    },
    async (ctx) => {
      // Not waited for: the provisioning job (kicked now) activates the tenant; poll
      // GET /api/admin/tenants/{id}/provisioning.
      const { tenant, operation } = await deps.provisioning.createTenant(ctx.state.guard.body, actorOf(ctx));
      ctx.status = 201;
      ctx.body = { ...toTenantView(tenant), provisioning: operation };
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: '/api/admin/tenants',
      summary:
        'List tenants (a tenant admin sees its own): filters lifecycle_state (comma-separated) and name_prefix, ' +
        'keyset paging with cursor / next_cursor (offset still accepted)',
      tags,
      security: 'bearer',
      // A platform admin lists every tenant (null); a tenant admin, its own.
      tenant: 'query-or-all',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      query: TenantListQuery,
      responses: {
        200: { description: 'tenants, and the cursor of the next page (null on the last)', schema: TenantListView },
        ...errors,
      },
    },
    async (ctx) => {
      // docs/directory.md, "Tenants": the filters, the cursor, and what a tenant admin sees.
      ctx.body = await deps.tenantDirectory.list(ctx.state.guard.query, ctx.state.tenant);
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: '/api/admin/tenants/:tenantId',
      summary:
        'Read a tenant (a tenant admin reads its own), with its counts; the ETag is what PATCH If-Match compares',
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: TenantParam,
      responses: {
        200: {
          description:
            'the tenant, with the lifecycle_state and updated_at a lifecycle move names as its precondition, and ' +
            'its counts (users, clients, active sessions)',
          schema: TenantDetailView,
          headers: ETAG_HEADER,
        },
        ...errors,
        404: { description: 'no such tenant', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: id } = ctx.state.guard.params;
      const { tenant, etag } = await deps.tenantDirectory.get(id);
      // A strong validator for If-Match on PATCH (RFC 9110 §8.8.3, §13.1.1).
      ctx.set('ETag', etag);
      ctx.body = tenant;
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/api/admin/tenants/:tenantId/clients',
      summary: "Register a client; a confidential client's secret is returned once",
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: TenantParam,
      body: CreateClientInput,
      responses: {
        201: { description: 'created', schema: CreatedClientView },
        ...errors,
        404: { description: 'no such tenant', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: id } = ctx.state.guard.params;
      const body = ctx.state.guard.body;
      // Only a platform admin may mint another platform-admin client.
      if (body.scopes.includes(SCOPE_PLATFORM) && !isPlatform(ctx)) {
        throw new ApiError(403, 'insufficient_scope', `Only a platform admin may grant the ${SCOPE_PLATFORM} scope.`);
      }
      const { client, client_secret } = await deps.directory.createClient(id, body, actorOf(ctx), 'body');
      ctx.status = 201;
      ctx.body = { ...client, ...(client_secret ? { client_secret } : {}) };
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: '/api/admin/tenants/:tenantId/clients',
      summary: "List a tenant's clients",
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: TenantParam,
      query: Paging,
      responses: { 200: { description: 'clients', schema: z.object({ clients: z.array(ClientView) }) }, ...errors },
    },
    async (ctx) => {
      const { tenantId: id } = ctx.state.guard.params;
      await deps.directory.requireTenant(id);
      const { limit, offset } = ctx.state.guard.query;
      ctx.body = { clients: (await deps.directory.scope(id).clients.list({ limit, offset })).map(toClientView) };
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/api/admin/tenants/:tenantId/users',
      summary: 'Create a user',
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: TenantParam,
      body: CreateUserInput,
      responses: {
        201: { description: 'created', schema: UserView },
        ...errors,
        409: { description: 'email taken', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: id } = ctx.state.guard.params;
      ctx.status = 201;
      ctx.body = await deps.directory.createUser(id, ctx.state.guard.body, actorOf(ctx));
    },
  );

  // The optional claim scopes of OIDC Core §5.4 (address, phone) a tenant offers; docs/claims.md.
  api.add(
    router,
    {
      method: 'get',
      path: '/api/admin/tenants/:tenantId/standard-claims',
      summary: 'The optional claim scopes (address, phone) the tenant offers',
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: TenantParam,
      responses: {
        200: { description: 'the scopes offered', schema: StandardClaimScopesView },
        ...errors,
        404: { description: 'no such tenant', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: id } = ctx.state.guard.params;
      await deps.directory.requireTenant(id);
      ctx.body = { tenantId: id, scopes: await deps.directory.standardClaimScopes(id) };
    },
  );

  api.add(
    router,
    {
      method: 'put',
      path: '/api/admin/tenants/:tenantId/standard-claims',
      summary: 'Turn the optional claim scopes (address, phone) on or off for the tenant',
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: TenantParam,
      body: StandardClaimScopesInput,
      responses: {
        200: { description: 'the scopes offered now', schema: StandardClaimScopesView },
        ...errors,
        404: { description: 'no such tenant', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: id } = ctx.state.guard.params;
      const scopes = await deps.directory.setStandardClaimScopes(id, ctx.state.guard.body, actorOf(ctx));
      ctx.body = { tenantId: id, scopes };
    },
  );

  return router;
}
