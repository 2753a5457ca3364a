/**
 * SCIM discovery (RFC 7644 §4): /ServiceProviderConfig, /ResourceTypes, /Schemas. Behind the
 * same bearer check as the resources (RFC 7644 §4 lets a provider require authentication).
 */
import type Router from '@koa/router';
import { z } from 'zod';
import {
  noSuchResource,
  oneResourceType,
  oneSchema,
  resourceTypes,
  schemas,
  serviceProviderConfig,
} from '../../../shared/services/scim/index.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { E404, ok, SCIM_ERRORS, SCIM_PREFIX, scimBase, scimDeclaration, send } from './common.js';

export function scimDiscoveryRoutes(deps: AppDeps, api: ApiRegistry, router: Router<AppState>): void {
  const d = scimDeclaration(deps);
  const base = scimBase(deps);
  api.add(
    router,
    {
      ...d,
      method: 'get',
      path: `${SCIM_PREFIX}/ServiceProviderConfig`,
      operationId: 'scimServiceProviderConfig',
      summary: 'SCIM service provider configuration (RFC 7643 §5): patch, filter, etag; no bulk, sort, password change',
      responses: { 200: ok('the configuration'), ...SCIM_ERRORS },
    },
    (ctx) => send(ctx, 200, serviceProviderConfig(base)),
  );
  api.add(
    router,
    {
      ...d,
      method: 'get',
      path: `${SCIM_PREFIX}/ResourceTypes`,
      operationId: 'scimListResourceTypes',
      summary: 'SCIM resource types (RFC 7643 §6): User (with the enterprise extension) and Group',
      responses: { 200: ok('a ListResponse of resource types'), ...SCIM_ERRORS },
    },
    (ctx) => send(ctx, 200, resourceTypes(base)),
  );
  api.add(
    router,
    {
      ...d,
      method: 'get',
      path: `${SCIM_PREFIX}/ResourceTypes/:name`,
      operationId: 'scimGetResourceType',
      summary: 'One SCIM resource type',
      params: z.strictObject({ name: z.string().max(200) }),
      responses: { 200: ok('the resource type'), ...SCIM_ERRORS, 404: E404 },
    },
    (ctx) => {
      const r = oneResourceType(base, ctx.state.guard.params.name);
      if (!r) throw noSuchResource('ResourceType', ctx.state.guard.params.name);
      send(ctx, 200, r);
    },
  );
  api.add(
    router,
    {
      ...d,
      method: 'get',
      path: `${SCIM_PREFIX}/Schemas`,
      operationId: 'scimListSchemas',
      summary: 'SCIM schemas (RFC 7643 §7, §8.7.1): User, EnterpriseUser, Group, with their attribute definitions',
      responses: { 200: ok('a ListResponse of schemas'), ...SCIM_ERRORS },
    },
    (ctx) => send(ctx, 200, schemas(base)),
  );
  api.add(
    router,
    {
      ...d,
      method: 'get',
      path: `${SCIM_PREFIX}/Schemas/:id`,
      operationId: 'scimGetSchema',
      summary: 'One SCIM schema, by its URN',
      params: z.strictObject({ id: z.string().max(200) }),
      responses: { 200: ok('the schema'), ...SCIM_ERRORS, 404: E404 },
    },
    (ctx) => {
      const s = oneSchema(base, ctx.state.guard.params.id);
      if (!s) throw noSuchResource('Schema', ctx.state.guard.params.id);
      send(ctx, 200, s);
    },
  );
}
