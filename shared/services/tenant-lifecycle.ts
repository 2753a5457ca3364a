/**
 * Suspending and resuming a tenant (docs/tenant-lifecycle.md). A move is one conditional UPDATE
 * guarded by the caller's observed (lifecycle_state, updated_at), so of concurrent requests with
 * the same precondition exactly one wins; the rest, and any stale precondition, get 409
 * `precondition_failed` with the current values. `break_glass` skips the updated_at check only.
 * A matching precondition on a state the move does not apply to (LIFECYCLE_MOVES) is 409
 * `lifecycle_move_not_allowed`.
 * The move, its lifecycle job, its audit event and (with an Idempotency-Key) the answer commit
 * in one transaction; a refused move is audited too, with its answer.
 */
import { randomBytes } from 'node:crypto';
import type { TenantLifecycleState } from '../db/entities.js';
import { retryTransient, type Database, type Tx } from '../db/index.js';
import { ApiError, notFound } from '../errors.js';
import { TenantRepository, TenantScope } from '../repositories/index.js';
import { audit, type Actor } from './audit.js';
import type { IdempotencyHandle } from './idempotency.js';

/**
 * The states each move applies to (docs/tenant-lifecycle.md, "Moves"). The interface
 * specification's only condition for a suspend is a matching (expected_state,
 * expected_updated_at); which states make sense is ours:
 * - suspend from `active`, and from `provisioning`: the provisioning operation pauses (its
 *   runner skips a suspended tenant and never activates it) until the tenant is resumed;
 * - resume from `suspended`: back to `provisioning` when the tenant's provisioning operation
 *   has not completed (it was suspended while being provisioned; the runner carries on), else
 *   to `active`;
 * - neither from `recovering` (a disaster-recovery operation owns the state until it reactivates
 *   or cancels, docs/recovery.md), nor suspend from `suspended` (nothing to do; the caller sees
 *   the state it asked for in the 409's `lifecycle_state`).
 */
export const LIFECYCLE_MOVES = {
  suspend: { from: ['active', 'provisioning'], action: 'tenant.suspend' },
  resume: { from: ['suspended'], action: 'tenant.resume' },
} as const satisfies Record<string, { from: readonly TenantLifecycleState[]; action: string }>;
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
/** The precondition matched, but the move does not apply to the tenant's state. */
class MoveNotAllowed extends Error {}

/** Where a move takes a tenant that is in one of its `from` states. */
async function target(tx: Tx, tenantId: string, action: LifecycleAction): Promise<TenantLifecycleState> {
  if (action === 'suspend') return 'suspended';
  // A tenant suspended while being provisioned goes back to provisioning, and its runner resumes.
  const op = await new TenantScope(tx, tenantId).provisioning.latest();
  return op && op.status !== 'completed' ? 'provisioning' : 'active';
}

export class TenantLifecycleService {
  constructor(private readonly db: Database) {}

  /**
   * Moves the tenant (LIFECYCLE_MOVES). 404 for an unknown tenant; 409 `precondition_failed`
   * (with the current lifecycle_state and updated_at) when the tenant is not as the caller saw
   * it; 409 `lifecycle_move_not_allowed` (the same fields) when it is, in a state the move does
   * not apply to.
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
    let notAllowed: boolean;
    try {
      return await retryTransient(
        () =>
          this.db.transaction(async (tx) => {
            const tenants = new TenantRepository(tx);
            const before = await tenants.lifecycle(tenantId);
            if (!before) throw notFound('Tenant');
            // The spec's condition: the caller's values are the tenant's current ones.
            if (req.expected_state !== before.lifecycle_state) throw new PreconditionFailed();
            if (!breakGlass && req.expected_updated_at !== before.updated_at) throw new PreconditionFailed();
            if (!(move.from as readonly string[]).includes(before.lifecycle_state)) throw new MoveNotAllowed();
            const to = await target(tx, tenantId, action);
            const now = Date.now();
            // Still the one-winner statement: a concurrent move since the read above changes no row.
            const changed = await tenants.moveLifecycle(tenantId, {
              from: before.lifecycle_state,
              to,
              now,
              expectedUpdatedAt: breakGlass ? undefined : req.expected_updated_at,
            });
            if (changed !== 1) throw new PreconditionFailed();
            await new TenantScope(tx, tenantId).lifecycleJobs.insert({
              id: jobId,
              action,
              status: 'completed',
              lifecycle_state: to,
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
                after: { lifecycle_state: to, updated_at: now },
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
              lifecycle_state: to,
              validation_required: false,
            };
            await idempotency?.complete(tx, 200, job);
            return job;
          }),
        10_000,
      );
    } catch (e) {
      if (!(e instanceof PreconditionFailed) && !(e instanceof MoveNotAllowed)) throw e;
      notAllowed = e instanceof MoveNotAllowed;
    }
    // Read after the transaction ended, so the values are the committed ones.
    const cur = await new TenantRepository(this.db).lifecycle(tenantId);
    if (!cur) throw notFound('Tenant');
    const current = { lifecycle_state: cur.lifecycle_state, updated_at: cur.updated_at };
    const refused = notAllowed
      ? new ApiError(
          409,
          'lifecycle_move_not_allowed',
          `A ${cur.lifecycle_state} tenant cannot be ${action === 'suspend' ? 'suspended' : 'resumed'} ` +
            `(only from ${move.from.join(' or ')}).`,
          current,
        )
      : new ApiError(
          409,
          'precondition_failed',
          'The tenant is not in the expected state (expected_state, at the expected updated_at); re-read and retry.',
          current,
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
          error: refused.error,
          current,
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
