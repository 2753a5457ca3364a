/**
 * The last step of a recovery (docs/recovery.md): the reactivation, which checks the
 * operator's confirmation and the preconditions and then, in one transaction, publishes the
 * tenant's route active again. Apart from service.ts because it is the step with the
 * confirmation, the precondition gate and the idempotent answer (POST …/reactivate); the
 * service looks the operation up and hands it here.
 */
import type { Database } from '../../db/index.js';
import { ApiError } from '../../errors.js';
import { TenantRepository, type RecoveryOperationRow, type TenantScope } from '../../repositories/index.js';
import { audit, type Actor } from '../audit.js';
import type { IdempotencyHandle } from '../idempotency.js';
import type { KeyService } from '../keys.js';
import type { RecoveryEffects } from './effects.js';
import { CONFIRMATION_FORMAT, confirmationFor, leaseActive, unmetPreconditions } from './state-machine.js';
import { toRecoveryView, type RecoveryView } from './views.js';

/**
 * Reactivates a recovered tenant: checks the confirmation, then the preconditions, then in
 * one transaction (a conditional UPDATE on the operation picks one winner) publishes the
 * pinned route generation as active with a signed route publication, gives the tenant its
 * previous lifecycle state back, retires the pre-deny registry, writes the audit event and
 * (under an Idempotency-Key) the answer.
 */
export async function reactivateOperation(
  deps: { ds: Database; keys: KeyService; effects: RecoveryEffects },
  scope: TenantScope,
  id: string,
  r: RecoveryOperationRow,
  confirmation: string,
  actor: Actor,
  stabilizationFloorSeconds: number,
  idempotency?: IdempotencyHandle,
): Promise<{ recovery: RecoveryView; auditId: string }> {
  if (confirmation !== confirmationFor(r.tenant_id)) {
    throw new ApiError(
      422,
      'confirmation_mismatch',
      `confirmation must equal ${CONFIRMATION_FORMAT} with the recovered tenant's identifier substituted.`,
      { expectedFormat: CONFIRMATION_FORMAT, field: 'confirmation' },
    );
  }
  const check = (row: RecoveryOperationRow, now: number) => {
    if (row.state === 'reactivated' || row.state === 'cancelled') {
      throw new ApiError(409, 'recovery_not_reactivatable', `The operation is already ${row.state}.`, {
        state: row.state,
      });
    }
    if (leaseActive(row, now))
      throw new ApiError(409, 'verify_in_progress', 'A verify run is in progress; reactivate after it finishes.', {
        leaseExpiresAt: row.lease_expires_at,
      });
    const unmet = unmetPreconditions(row, now, stabilizationFloorSeconds);
    if (unmet.length) {
      const first = unmet[0];
      throw new ApiError(409, first.code, first.message, {
        state: row.state,
        unmetPreconditions: unmet.map((u) => u.code),
        ...(first.details ?? {}),
      });
    }
  };
  check(r, Date.now());
  const signer = await deps.keys.signingKey();
  return deps.ds.transaction(async (tx) => {
    const s = scope.in(tx);
    const now = Date.now();
    const cur = (await s.recoveryOperations.get(id))!;
    check(cur, now);
    // The registry the digest was pinned over must still describe the tenant.
    const sources = await s.lookupRows.sourceCount();
    if (sources !== cur.lookup_projected_rows) {
      throw new ApiError(
        409,
        'lookup_not_reprojected',
        `The tenant now has ${sources} clients and users but ${cur.lookup_projected_rows} were reprojected: ` +
          'run `iam recovery verify` again.',
        {
          state: cur.state,
          unmetPreconditions: ['lookup_not_reprojected'],
          projectedRows: cur.lookup_projected_rows,
          sourceRows: sources,
        },
      );
    }
    const route = await s.routes.get();
    if (!route || route.route_generation !== cur.pinned_route_generation) {
      throw new ApiError(
        409,
        'route_conflict',
        "The tenant's route is no longer at the pinned generation; cancel and start a new recovery.",
      );
    }
    const runtime = route.runtime_generation + 1;
    if ((await s.recoveryOperations.reactivated(id, runtime, cur.binding_smoke_verified_at!, now)) !== 1)
      throw new ApiError(
        409,
        'recovery_not_reactivatable',
        'Another request reactivated (or changed) this operation at the same time.',
      );
    const published = await deps.effects.publish(
      s,
      signer,
      route,
      {
        state: 'active',
        registryGeneration: cur.lookup_registry_generation,
        registryDigest: cur.registry_digest,
        operationId: id,
      },
      now,
    );
    if (published !== runtime) throw new Error('runtime generation drifted inside the transaction');
    const moved = await new TenantRepository(tx).moveLifecycle(cur.tenant_id, {
      from: 'recovering',
      to: cur.previous_lifecycle_state,
      now,
    });
    if (moved !== 1)
      throw new ApiError(409, 'tenant_not_recovering', 'The tenant is no longer in the recovering state.');
    // The pre-deny registry is replaced by the verified one.
    await s.lookupRows.deleteAllBut(cur.lookup_registry_generation);
    const auditId = await audit(tx, actor, {
      tenantId: cur.tenant_id,
      action: 'tenant.recovery.reactivate',
      targetType: 'tenant_recovery',
      targetId: id,
      summary: {
        before: {
          state: cur.state,
          lifecycle_state: 'recovering',
          route_state: route.state,
          runtime_generation: route.runtime_generation,
        },
        after: {
          state: 'reactivated',
          lifecycle_state: cur.previous_lifecycle_state,
          route_state: 'active',
          runtime_generation: runtime,
        },
        pinned_route_generation: cur.pinned_route_generation,
        registry_generation: cur.lookup_registry_generation,
        registry_digest: cur.registry_digest,
        restore_reference: cur.restore_reference,
        request_id: actor.requestId ?? null,
      },
    });
    // The answer, read inside the transaction: what the change committed, recorded with it.
    const answer = {
      recovery: toRecoveryView((await s.recoveryOperations.get(id))!, Date.now(), stabilizationFloorSeconds),
      auditId,
    };
    await idempotency?.complete(tx, 200, answer);
    return answer;
  });
}
