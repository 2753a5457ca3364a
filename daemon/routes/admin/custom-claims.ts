import Router from '@koa/router';
import { z } from 'zod';
import {
  CreateCustomClaimInput,
  CustomClaimSchemaRecord,
  SetUserClaimsInput,
  UpdateCustomClaimInput,
} from '../../../shared/schemas/claims.js';
import { tenantId } from '../../../shared/schemas/common.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { TenantQuery } from '../../route-declarations.js';
import { actorOf } from './directory.js';

const IdParam = z.strictObject({ id: z.string().min(1).max(40) });
const UserParams = z.strictObject({ tenantId, id: z.string().min(1).max(40) });
const SchemaList = z.object({ schemas: z.array(CustomClaimSchemaRecord) });
const UserClaimsView = z.object({
  user_id: z.string(),
  claims: z.record(z.string(), z.unknown()),
  system_claims: z.record(z.string(), z.unknown()),
});

const errors = {
  400: { description: 'invalid input; the message names the field, the code the refusal', schema: ErrorObject },
  ...bearerErrors('tenant'),
  404: { description: 'no such tenant, schema or user', schema: ErrorObject },
};

/**
 * Custom claim schemas (docs/claims.md) under /api/admin/custom-claims, for the token's own
 * tenant or `?tenant_id=` for a platform admin, and a user's claim values under
 * /api/admin/tenants/{tenantId}/users/{id}/claims.
 */
export function customClaimsRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const service = deps.customClaims;
  const tags = ['admin: custom claims'];
  const base = '/api/admin/custom-claims';

  api.add(
    router,
    {
      method: 'post',
      path: base,
      summary: 'Define a custom claim schema (key, type, cardinality, flags, token bindings)',
      tags,
      security: 'bearer',
      tenant: 'query',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      query: TenantQuery,
      body: CreateCustomClaimInput,
      responses: {
        201: { description: 'the schema', schema: CustomClaimSchemaRecord },
        ...errors,
        409: {
          description: 'the key is taken in the tenant, or the tenant has its maximum of schemas',
          schema: ErrorObject,
        },
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.status = 201;
      ctx.body = await service.createSchema(id, ctx.state.guard.body, actorOf(ctx));
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: base,
      summary: "The tenant's claim schemas, system schemas first",
      tags,
      security: 'bearer',
      tenant: 'query',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      query: TenantQuery,
      responses: { 200: { description: 'the schemas', schema: SchemaList }, ...errors },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.body = { schemas: await service.listSchemas(id) };
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: `${base}/:id`,
      summary: 'One claim schema',
      tags,
      security: 'bearer',
      tenant: 'query',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: IdParam,
      query: TenantQuery,
      responses: { 200: { description: 'the schema', schema: CustomClaimSchemaRecord }, ...errors },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.body = await service.getSchema(id, ctx.state.guard.params.id);
    },
  );

  api.add(
    router,
    {
      method: 'patch',
      path: `${base}/:id`,
      summary: 'Change a claim schema’s label, flags or bindings (the key changes only by rename)',
      tags,
      security: 'bearer',
      tenant: 'query',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: IdParam,
      query: TenantQuery,
      body: UpdateCustomClaimInput,
      responses: {
        200: { description: 'the schema', schema: CustomClaimSchemaRecord },
        ...errors,
        409: { description: 'an operation (a rename) is under way on the schema', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.body = await service.updateSchema(id, ctx.state.guard.params.id, ctx.state.guard.body, actorOf(ctx));
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: `${base}/:id/deactivate`,
      summary: 'Deactivate a claim schema: its values are kept but no longer emitted or accepted',
      tags,
      security: 'bearer',
      tenant: 'query',
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: IdParam,
      query: TenantQuery,
      responses: {
        200: { description: 'the schema, is_active 0', schema: CustomClaimSchemaRecord },
        ...errors,
        409: { description: 'an operation (a rename) is under way on the schema', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const id = ctx.state.tenant;
      ctx.body = await service.deactivateSchema(id, ctx.state.guard.params.id, actorOf(ctx));
    },
  );

  const userPath = '/api/admin/tenants/:tenantId/users/:id/claims';
  api.add(
    router,
    {
      method: 'put',
      path: userPath,
      summary: "Replace a user's custom claim values, validated against the tenant's schemas",
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: UserParams,
      body: SetUserClaimsInput,
      responses: { 200: { description: "the user's values", schema: UserClaimsView }, ...errors },
    },
    async (ctx) => {
      const { tenantId: tid, id } = ctx.state.guard.params;
      ctx.body = await service.setUserClaims(tid, id, ctx.state.guard.body, actorOf(ctx));
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: userPath,
      summary: "A user's custom claim values (active schemas) and the system claims of the user record",
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: UserParams,
      responses: { 200: { description: "the user's values", schema: UserClaimsView }, ...errors },
    },
    async (ctx) => {
      const { tenantId: tid, id } = ctx.state.guard.params;
      ctx.body = await service.getUserClaims(tid, id);
    },
  );

  return router;
}
