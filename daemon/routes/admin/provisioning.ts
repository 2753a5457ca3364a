/**
 * Tenant provisioning over HTTP (docs/provisioning.md):
 * - GET  /api/admin/tenants/{id}/provisioning: the tenant's latest operation (iam.platform, or
 *   iam.admin for its own tenant).
 * - POST /api/admin/tenants/{id}/provisioning/retry: requeues a blocked operation (iam.platform
 *   only; no body; optional Idempotency-Key). One winner among concurrent retries; the retry is
 *   audited (`tenant.provisioning.retry`) in the same transaction, as is the answer under an
 *   Idempotency-Key; not blocked → 409 `provisioning_not_blocked` with the current status.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { tenantId } from '../../../shared/schemas/common.js';
import { ProvisioningOperationView } from '../../../shared/schemas/provisioning.js';
import { ADMIN_SCOPES, SCOPE_PLATFORM } from '../../../shared/scopes.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { idempotencyHeader } from '../../middleware/koa-idempotency.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { actorOf } from './directory.js';

const Params = z.strictObject({ id: tenantId });

export function provisioningRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const auth = bearer(deps, ADMIN_SCOPES);
  const platformOnly = bearer(deps, [SCOPE_PLATFORM]);
  const idem = idempotencyHeader(deps.idempotency);
  const tags = ['admin: tenant provisioning'];
  const notFound = { 404: { description: 'no such tenant, or it has no provisioning operation', schema: ErrorObject } };

  api.add(
    router,
    {
      method: 'get',
      path: '/api/admin/tenants/:id/provisioning',
      summary: "The tenant's latest provisioning operation",
      tags,
      security: 'bearer',
      tenant: { path: 'id' },
      authenticate: auth,
      scopes: ADMIN_SCOPES,
      params: Params,
      responses: {
        200: { description: 'the operation', schema: ProvisioningOperationView },
        400: { description: 'invalid tenant id', schema: ErrorObject },
        ...bearerErrors('tenant'),
        ...notFound,
      },
    },
    async (ctx) => {
      const { id } = ctx.state.guard.params;
      ctx.body = await deps.provisioning.latest(id);
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/api/admin/tenants/:id/provisioning/retry',
      summary: 'Requeue a blocked provisioning operation (keeps completed steps and history; optional Idempotency-Key)',
      tags,
      security: 'bearer',
      authenticate: platformOnly,
      tenant: 'platform',
      scopes: [SCOPE_PLATFORM],
      params: Params,
      headers: [idem],
      responses: {
        200: {
          description: 'the requeued operation (status queued, current step request_accepted)',
          schema: ProvisioningOperationView,
        },
        400: { description: 'invalid tenant id or Idempotency-Key', schema: ErrorObject },
        ...bearerErrors('platform'),
        ...notFound,
        409: {
          description: 'provisioning_not_blocked (operation_status and current_step included) or idempotency_in_flight',
          schema: ErrorObject,
        },
        422: { description: 'idempotency_key_mismatch', schema: ErrorObject },
      },
    },
    async (ctx) => {
      const { id } = ctx.state.guard.params;
      ctx.status = 200;
      ctx.body = await deps.provisioning.retry(id, actorOf(ctx), ctx.state.idempotency);
    },
  );

  return router;
}
