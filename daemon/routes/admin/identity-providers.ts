/**
 * A tenant's upstream OpenID providers (docs/identity-providers.md, "Registering a provider"):
 * - POST  /api/admin/tenants/{tenantId}/identity-providers: register (discovery is fetched now);
 * - GET   /api/admin/tenants/{tenantId}/identity-providers: list;
 * - GET   /api/admin/tenants/{tenantId}/identity-providers/{idpId}: one (by id or slug);
 * - PATCH /api/admin/tenants/{tenantId}/identity-providers/{idpId}: `{status}` disables or
 *   enables it. A provider is not deleted: its links keep their users' upstream identities.
 * The client secret is accepted on POST and never returned.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { tenantId } from '../../../shared/schemas/common.js';
import { ADMIN_SCOPES } from '../../../shared/scopes.js';
import { UpstreamIdpStatusInput, UpstreamIdpView } from '../../../shared/services/upstream-idp/index.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { actorOf } from './directory.js';

const TenantParam = z.strictObject({ tenantId });
const IdpParam = z.strictObject({
  tenantId,
  idpId: z.string().min(1).max(64).describe('The provider id (uip_…) or its slug.'),
});
const notFound = { 404: { description: 'no such tenant or provider', schema: ErrorObject } };

export function identityProviderRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const registry = deps.upstreamIdps;
  const tags = ['admin: identity providers'];
  const path = '/api/admin/tenants/:tenantId/identity-providers';

  api.add(
    router,
    {
      method: 'post',
      path,
      summary: 'Register an upstream OpenID provider users may sign in through; its discovery document is fetched now',
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: TenantParam,
      body: registry.input,
      responses: {
        201: { description: 'registered; register `redirect_uri` at the upstream', schema: UpstreamIdpView },
        400: {
          description:
            'invalid input (the message names the field), or the discovery of the issuer failed ' +
            '(`upstream_discovery_failed`)',
          schema: ErrorObject,
        },
        ...bearerErrors('tenant'),
        ...notFound,
        409: { description: 'the tenant has this issuer + client_id, or this slug, already', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { tenantId: id } = ctx.state.guard.params;
      ctx.status = 201;
      ctx.body = await registry.create(id, ctx.state.guard.body, actorOf(ctx));
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path,
      summary: "List the tenant's upstream OpenID providers (never their secrets)",
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: TenantParam,
      responses: {
        200: { description: 'providers', schema: z.object({ identity_providers: z.array(UpstreamIdpView) }) },
        ...bearerErrors('tenant'),
        ...notFound,
      },
    },
    async (ctx) => {
      const { tenantId: id } = ctx.state.guard.params;
      ctx.body = { identity_providers: await registry.list(id) };
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: `${path}/:idpId`,
      summary: 'Read one upstream OpenID provider',
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: IdpParam,
      responses: {
        200: { description: 'the provider', schema: UpstreamIdpView },
        ...bearerErrors('tenant'),
        ...notFound,
      },
    },
    async (ctx) => {
      const { tenantId: id, idpId } = ctx.state.guard.params;
      ctx.body = await registry.get(id, idpId);
    },
  );

  api.add(
    router,
    {
      method: 'patch',
      path: `${path}/:idpId`,
      summary: 'Disable or enable an upstream OpenID provider (`{"status": "disabled"}`)',
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: IdpParam,
      body: UpstreamIdpStatusInput,
      responses: {
        200: { description: 'the provider', schema: UpstreamIdpView },
        400: { description: 'invalid input', schema: ErrorObject },
        ...bearerErrors('tenant'),
        ...notFound,
      },
    },
    async (ctx) => {
      const { tenantId: id, idpId } = ctx.state.guard.params;
      ctx.body = await registry.setStatus(id, idpId, ctx.state.guard.body, actorOf(ctx));
    },
  );

  return router;
}
