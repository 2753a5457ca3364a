/**
 * Suspending and resuming a tenant (docs/tenant-lifecycle.md). A move is one conditional UPDATE
 * guarded by the caller's observed (lifecycle_state, updated_at), so of concurrent requests with
 * the same precondition exactly one wins; the rest, and any stale precondition, get 409
 * `precondition_failed` with the current values. `break_glass` skips the updated_at check only.
 * The move, its lifecycle job, its audit event and (with an Idempotency-Key) the answer commit
 * in one transaction; a refused move is audited too, with its answer.
 */
import { randomBytes } from 'node:crypto';
import { retryTransient, type Database } from '../db/index.js';
import { ApiError, notFound } from '../errors.js';
import { TenantRepository, TenantScope } from '../repositories/index.js';
import { audit, type Actor } from './audit.js';
import type { IdempotencyHandle } from './idempotency.js';

export const LIFECYCLE_MOVES = {
  suspend: { from: 'active', to: 'suspended', action: 'tenant.suspend' },
  resume: { from: 'suspended', to: 'active', action: 'tenant.resume' },
} as const;
export type LifecycleAction = keyof typeof LIFECYCLE_MOVES;

/** The request of a move: what the caller saw, and why it moves the tenant. */
export interface LifecycleRequest {
  expected_state: string;
  expected_updated_at: number;
  reason: string;
  break_glass?: boolean;
}

/** The spec's "Tenant lifecycle job" as answered: moves complete synchronously. */
export interface TenantLifecycleJobView {
  job_id: string;
  status: string;
  tenant_id: string;
  lifecycle_state: string;
  validation_required: boolean;
}

class PreconditionFailed extends Error {}

export class TenantLifecycleService {
  constructor(private readonly db: Database) {}

  /**
   * Moves the tenant (`suspend`: active → suspended, `resume`: suspended → active). 404 for an
   * unknown tenant; 409 `precondition_failed` (with the current lifecycle_state and updated_at)
   * when the tenant is not as the caller saw it.
   */
  async move(
    tenantId: string,
    action: LifecycleAction,
    req: LifecycleRequest,
    actor: Actor,
    idempotency?: IdempotencyHandle,
  ): Promise<TenantLifecycleJobView> {
    const move = LIFECYCLE_MOVES[action];
    const breakGlass = req.break_glass === true;
    const jobId = `tlj_${randomBytes(16).toString('hex')}`;
    try {
      return await retryTransient(
        () =>
          this.db.transaction(async (tx) => {
            const tenants = new TenantRepository(tx);
            const before = await tenants.lifecycle(tenantId);
            if (!before) throw notFound('Tenant');
            if (req.expected_state !== move.from) throw new PreconditionFailed();
            const now = Date.now();
            const changed = await tenants.moveLifecycle(tenantId, {
              from: move.from,
              to: move.to,
              now,
              expectedUpdatedAt: breakGlass ? undefined : req.expected_updated_at,
            });
            if (changed !== 1) throw new PreconditionFailed();
            await new TenantScope(tx, tenantId).lifecycleJobs.insert({
              id: jobId,
              action,
              status: 'completed',
              lifecycle_state: move.to,
              reason: req.reason,
              break_glass: breakGlass,
              actor_id: actor.id,
              created_at: now,
            });
            await audit(tx, actor, {
              tenantId,
              action: move.action,
              targetType: 'tenant',
              targetId: tenantId,
              summary: {
                job_id: jobId,
                before: { lifecycle_state: before.lifecycle_state, updated_at: before.updated_at },
                after: { lifecycle_state: move.to, updated_at: now },
                expected_state: req.expected_state,
                expected_updated_at: req.expected_updated_at,
                reason: req.reason,
                break_glass: breakGlass,
                request_id: actor.requestId ?? null,
              },
            });
            const job: TenantLifecycleJobView = {
              job_id: jobId,
              status: 'completed',
              tenant_id: tenantId,
              lifecycle_state: move.to,
              validation_required: false,
            };
            await idempotency?.complete(tx, 200, job);
            return job;
          }),
        10_000,
      );
    } catch (e) {
      if (!(e instanceof PreconditionFailed)) throw e;
    }
    // Read after the transaction ended, so the values are the committed ones.
    const cur = await new TenantRepository(this.db).lifecycle(tenantId);
    if (!cur) throw notFound('Tenant');
    const refused = new ApiError(
      409,
      'precondition_failed',
      `The tenant is not in the expected state (${move.from}, at the expected updated_at); re-read and retry.`,
      { lifecycle_state: cur.lifecycle_state, updated_at: cur.updated_at },
    );
    // A refused move is recorded too: during an incident the log shows who tried what, and why it did not happen.
    await this.db.transaction(async (tx) => {
      await audit(tx, actor, {
        tenantId,
        action: move.action,
        targetType: 'tenant',
        targetId: tenantId,
        outcome: 'failure',
        summary: {
          error: 'precondition_failed',
          current: { lifecycle_state: cur.lifecycle_state, updated_at: cur.updated_at },
          expected_state: req.expected_state,
          expected_updated_at: req.expected_updated_at,
          reason: req.reason,
          break_glass: breakGlass,
          request_id: actor.requestId ?? null,
        },
      });
      await idempotency?.fail(tx, refused);
    });
    throw refused;
  }
}
