/**
 * POST /api/admin/tenants/{id}/lifecycle/suspend and …/resume (iam.platform only). The move is
 * one conditional UPDATE guarded by the caller's observed (lifecycle_state, updated_at), so of
 * concurrent requests with the same precondition exactly one wins; the rest, and any stale
 * precondition, get 409 `precondition_failed` with the current values. `break_glass` skips the
 * updated_at check only. Which states each move applies to: LIFECYCLE_MOVES (a provisioning
 * tenant can be suspended; its provisioning pauses). Audited in the same transaction, as is the answer under an
 * Idempotency-Key (shared/services/tenant-lifecycle.ts). See docs/tenant-lifecycle.md.
 */
import Router from '@koa/router';
import { z } from 'zod';
import { tenantId } from '../../../shared/schemas/common.js';
import { SCOPE_PLATFORM } from '../../../shared/scopes.js';
import { LIFECYCLE_MOVES } from '../../../shared/services/tenant-lifecycle.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { idempotencyHeader } from '../../middleware/koa-idempotency.js';
import { bearerErrors, ErrorObject, type ApiRegistry } from '../../openapi.js';
import { actorOf } from './directory.js';

export const LifecycleInput = z.object({
  expected_state: z.string().min(1).max(32),
  expected_updated_at: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  reason: z.string().min(1).max(1000),
  break_glass: z.boolean().optional(),
});

export const TenantLifecycleJob = z.object({
  job_id: z.string(),
  status: z.string(),
  tenant_id: z.string(),
  lifecycle_state: z.string(),
  validation_required: z.boolean(),
  idempotent_replay: z.boolean().optional(),
});

const Params = z.strictObject({ id: tenantId });

export function tenantLifecycleRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const platformOnly = bearer(deps, [SCOPE_PLATFORM]);
  const idem = idempotencyHeader(deps.idempotency);
  const service = deps.tenantLifecycle;
  const tags = ['admin: tenant lifecycle'];

  for (const name of Object.keys(LIFECYCLE_MOVES) as (keyof typeof LIFECYCLE_MOVES)[]) {
    api.add(
      router,
      {
        method: 'post',
        path: `/api/admin/tenants/:id/lifecycle/${name}`,
        summary:
          `${name === 'suspend' ? 'Suspend' : 'Resume'} a tenant ` +
          '(optimistic precondition; optional Idempotency-Key)',
        tags,
        security: 'bearer',
        authenticate: platformOnly,
        tenant: 'platform',
        scopes: [SCOPE_PLATFORM],
        params: Params,
        body: LifecycleInput,
        headers: [idem],
        responses: {
          200: { description: 'the completed lifecycle job', schema: TenantLifecycleJob },
          400: { description: 'invalid input or Idempotency-Key', schema: ErrorObject },
          ...bearerErrors('platform'),
          404: { description: 'no such tenant', schema: ErrorObject },
          409: {
            description:
              'precondition_failed (current lifecycle_state and updated_at included), lifecycle_move_not_allowed ' +
              '(the values match but the move does not apply to that state), or idempotency_in_flight',
            schema: ErrorObject,
          },
          422: { description: 'idempotency_key_mismatch', schema: ErrorObject },
        },
      },
      async (ctx) => {
        const { id } = ctx.state.guard.params;
        const body = ctx.state.guard.body;
        const job = await service.move(id, name, body, actorOf(ctx), ctx.state.idempotency);
        ctx.status = 200;
        ctx.body = job;
      },
    );
  }
  return router;
}
