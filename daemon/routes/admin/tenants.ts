/**
 * The directory's tenant routes beyond create, list and read (those are in directory.ts):
 * PATCH /api/admin/tenants/{tenantId} under a strong ETag, and the offboarding (export,
 * offboard with a typed confirmation, restore within the grace). See docs/directory.md,
 * "Tenants", and docs/tenant-lifecycle.md, "Offboarding".
 */
import Router from '@koa/router';
import { z } from 'zod';
import { tenantId } from '../../../shared/schemas/common.js';
import {
  OffboardTenantInput,
  PatchTenantInput,
  TenantExportView,
  TenantListedView,
} from '../../../shared/schemas/tenants.js';
import { ADMIN_SCOPES, SCOPE_PLATFORM } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { idempotencyHeader } from '../../middleware/koa-idempotency.js';
import { bearerErrors, ErrorObject, ETAG_HEADER, type ApiRegistry, IF_MATCH_HEADER } from '../../openapi.js';
import { actorOf } from './directory.js';

const TenantParam = z.strictObject({ tenantId });
const e404 = { description: 'no such tenant (or another tenant, for a tenant admin)', schema: ErrorObject };

export function tenantDirectoryRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const platformOnly = bearer(deps, [SCOPE_PLATFORM]);
  const idem = idempotencyHeader(deps.idempotency);
  const tags = ['admin: directory'];
  const service = deps.tenantDirectory;

  api.add(
    router,
    {
      method: 'patch',
      path: '/api/admin/tenants/:tenantId',
      summary:
        "Change a tenant's name and/or allow_signup (a tenant admin its own); optional If-Match with the ETag " +
        'from GET (a mismatch is 412); the response carries the new ETag',
      tags,
      security: 'bearer',
      tenant: { path: 'tenantId' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: TenantParam,
      body: PatchTenantInput,
      headers: [IF_MATCH_HEADER],
      responses: {
        200: { description: 'the tenant as changed', schema: TenantListedView, headers: ETAG_HEADER },
        400: { description: 'invalid input', schema: ErrorObject },
        ...bearerErrors('tenant'),
        404: e404,
        409: { description: 'tenant_not_editable: offboarded, purged or recovering', schema: ErrorObject },
        412: {
          description: 'precondition_failed: If-Match does not match, or the tenant changed meanwhile',
          schema: ErrorObject,
        },
      },
    },
    async (ctx) => {
      const ifMatch = ctx.get('If-Match');
      const { tenant, etag } = await service.update(
        ctx.state.guard.params.tenantId,
        ctx.state.guard.body,
        actorOf(ctx),
        ifMatch ? { ifMatch } : {},
      );
      ctx.set('ETag', etag);
      ctx.body = tenant;
    },
  );

  api.add(
    router,
    {
      method: 'get',
      path: '/api/admin/tenants/:tenantId/export',
      summary:
        "The tenant's directory as one JSON document (users, clients, claim schemas, upstream identity " +
        'providers), without secrets: the offboarding export',
      tags,
      security: 'bearer',
      tenant: 'platform',
      authenticate: platformOnly,
      scopes: [SCOPE_PLATFORM],
      params: TenantParam,
      responses: {
        200: { description: 'the export (format iam.tenant-export.v1)', schema: TenantExportView },
        400: { description: 'invalid input', schema: ErrorObject },
        ...bearerErrors('platform'),
        404: e404,
        409: { description: 'tenant_purged: nothing is left to export', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const doc = await service.export(ctx.state.guard.params.tenantId, actorOf(ctx));
      ctx.set('Content-Disposition', `attachment; filename="tenant-${doc.tenant.id}.json"`);
      ctx.body = doc;
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/api/admin/tenants/:tenantId/offboard',
      summary:
        'Offboard a tenant: `confirm` must be its name; it moves to pending_deletion (sign-in and tokens refused) ' +
        'until purge_after, when the purge job deletes everything it owns; restorable until then',
      tags,
      security: 'bearer',
      tenant: 'platform',
      authenticate: platformOnly,
      scopes: [SCOPE_PLATFORM],
      params: TenantParam,
      body: OffboardTenantInput,
      headers: [idem],
      responses: {
        200: { description: 'the tenant, pending_deletion, with its purge_after', schema: TenantListedView },
        400: {
          description: "invalid input, or confirmation_mismatch (confirm is not the tenant's name)",
          schema: ErrorObject,
        },
        ...bearerErrors('platform'),
        404: e404,
        409: {
          description: 'lifecycle_move_not_allowed (only an active or suspended tenant), or idempotency_in_flight',
          schema: ErrorObject,
        },
        422: { description: 'idempotency_key_mismatch', schema: ErrorObject },
      },
    },
    async (ctx) => {
      ctx.body = await service.offboard(ctx.state.guard.params.tenantId, ctx.state.guard.body, actorOf(ctx));
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/api/admin/tenants/:tenantId/restore',
      summary: 'Restore an offboarded tenant within its grace period, to the state it was offboarded from',
      tags,
      security: 'bearer',
      tenant: 'platform',
      authenticate: platformOnly,
      scopes: [SCOPE_PLATFORM],
      params: TenantParam,
      headers: [idem],
      responses: {
        200: { description: 'the tenant, back in the state it was offboarded from', schema: TenantListedView },
        400: { description: 'invalid input', schema: ErrorObject },
        ...bearerErrors('platform'),
        404: e404,
        409: {
          description:
            'grace_period_over (purge_after has passed), lifecycle_move_not_allowed (not pending_deletion), or ' +
            'idempotency_in_flight',
          schema: ErrorObject,
        },
        422: { description: 'idempotency_key_mismatch', schema: ErrorObject },
      },
    },
    async (ctx) => {
      ctx.body = await service.restore(ctx.state.guard.params.tenantId, actorOf(ctx));
    },
  );

  return router;
}
