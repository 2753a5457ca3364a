/**
 * POST /api/admin/tenants/{id}/lifecycle/suspend and …/resume (iam.platform only). The move is
 * one conditional UPDATE guarded by the caller's observed (lifecycle_state, updated_at), so of
 * concurrent requests with the same precondition exactly one wins; the rest, and any stale
 * precondition, get 409 `precondition_failed` with the current values. `break_glass` skips the
 * updated_at check only. Audited in the same transaction. See docs/tenant-lifecycle.md.
 */
import { randomBytes } from 'node:crypto';
import Router from '@koa/router';
import { z } from 'zod';
import { ApiError, notFound } from '../../../shared/errors.js';
import { tenantId } from '../../../shared/schemas/common.js';
import { audit } from '../../../shared/services/audit.js';
import { SCOPE_PLATFORM } from '../../../shared/scopes.js';
import { exec, num, one } from '../../../shared/db/sql.js';
import { retryTransient } from '../../../shared/db/retry.js';
import type { AppDeps, AppState } from '../../context.js';
import { bearer } from '../../middleware/koa-bearer.js';
import { idempotency } from '../../middleware/koa-idempotency.js';
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

class PreconditionFailed extends Error {}

const MOVES = {
  suspend: { from: 'active', to: 'suspended', action: 'tenant.suspend' },
  resume: { from: 'suspended', to: 'active', action: 'tenant.resume' },
} as const;

export function tenantLifecycleRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  const router = new Router<AppState>();
  const platformOnly = bearer(deps, [SCOPE_PLATFORM]);
  const idem = idempotency(deps.ds);
  const tags = ['admin: tenant lifecycle'];

  for (const [name, move] of Object.entries(MOVES)) {
    api.add(
      router,
      {
        method: 'post',
        path: `/api/admin/tenants/:id/lifecycle/${name}`,
        summary: `${name === 'suspend' ? 'Suspend' : 'Resume'} a tenant (optimistic precondition; optional Idempotency-Key)`,
        tags,
        security: 'bearer',
        scopes: [SCOPE_PLATFORM],
        params: Params,
        body: LifecycleInput,
        responses: {
          200: { description: 'the completed lifecycle job', schema: TenantLifecycleJob },
          400: { description: 'invalid input or Idempotency-Key', schema: ErrorObject },
          ...bearerErrors('platform'),
          404: { description: 'no such tenant', schema: ErrorObject },
          409: {
            description:
              'precondition_failed (current lifecycle_state and updated_at included) or idempotency_in_flight',
            schema: ErrorObject,
          },
          422: { description: 'idempotency_key_mismatch', schema: ErrorObject },
        },
      },
      platformOnly,
      idem,
      async (ctx) => {
        const { id } = ctx.state.guard!.params as z.output<typeof Params>;
        const body = ctx.state.guard!.body as z.output<typeof LifecycleInput>;
        const breakGlass = body.break_glass === true;
        const actor = actorOf(ctx);
        const jobId = `tlj_${randomBytes(16).toString('hex')}`;
        try {
          await retryTransient(
            () =>
              deps.ds.transaction(async (em) => {
                const before = await one<{ lifecycle_state: string; updated_at: unknown }>(
                  em,
                  'SELECT lifecycle_state, updated_at FROM tenants WHERE id = ?',
                  [id],
                );
                if (!before) throw notFound('Tenant');
                if (body.expected_state !== move.from) throw new PreconditionFailed();
                const now = Date.now();
                const changed = breakGlass
                  ? await exec(
                      em,
                      'UPDATE tenants SET lifecycle_state = ?, updated_at = ? WHERE id = ? AND lifecycle_state = ?',
                      [move.to, now, id, move.from],
                    )
                  : await exec(
                      em,
                      'UPDATE tenants SET lifecycle_state = ?, updated_at = ? WHERE id = ? AND lifecycle_state = ? AND updated_at = ?',
                      [move.to, now, id, body.expected_state, body.expected_updated_at],
                    );
                if (changed !== 1) throw new PreconditionFailed();
                await exec(
                  em,
                  `INSERT INTO tenant_lifecycle_jobs (id, tenant_id, action, status, lifecycle_state, reason, break_glass, actor_id, created_at)
            VALUES (?, ?, ?, 'completed', ?, ?, ?, ?, ?)`,
                  [jobId, id, name, move.to, body.reason, breakGlass ? 1 : 0, actor.id, now],
                );
                await audit(em, actor, {
                  tenantId: id,
                  action: move.action,
                  targetType: 'tenant',
                  targetId: id,
                  summary: {
                    job_id: jobId,
                    before: { lifecycle_state: before.lifecycle_state, updated_at: num(before.updated_at) },
                    after: { lifecycle_state: move.to, updated_at: now },
                    expected_state: body.expected_state,
                    expected_updated_at: body.expected_updated_at,
                    reason: body.reason,
                    break_glass: breakGlass,
                    request_id: actor.requestId ?? null,
                  },
                });
              }),
            10_000,
          );
        } catch (e) {
          if (!(e instanceof PreconditionFailed)) throw e;
          // Read after the transaction ended, so the values are the committed ones.
          const cur = await one<{ lifecycle_state: string; updated_at: unknown }>(
            deps.ds,
            'SELECT lifecycle_state, updated_at FROM tenants WHERE id = ?',
            [id],
          );
          if (!cur) throw notFound('Tenant');
          // A refused move is recorded too: during an incident the log shows who tried what, and why it did not happen.
          await deps.ds.transaction((em) =>
            audit(em, actor, {
              tenantId: id,
              action: move.action,
              targetType: 'tenant',
              targetId: id,
              outcome: 'failure',
              summary: {
                error: 'precondition_failed',
                current: { lifecycle_state: cur.lifecycle_state, updated_at: num(cur.updated_at) },
                expected_state: body.expected_state,
                expected_updated_at: body.expected_updated_at,
                reason: body.reason,
                break_glass: breakGlass,
                request_id: actor.requestId ?? null,
              },
            }),
          );
          throw new ApiError(
            409,
            'precondition_failed',
            `The tenant is not in the expected state (${move.from}, at the expected updated_at); re-read and retry.`,
            { lifecycle_state: cur.lifecycle_state, updated_at: num(cur.updated_at) },
          );
        }
        ctx.status = 200;
        ctx.body = {
          job_id: jobId,
          status: 'completed',
          tenant_id: id,
          lifecycle_state: move.to,
          validation_required: false,
        };
      },
    );
  }
  return router;
}
