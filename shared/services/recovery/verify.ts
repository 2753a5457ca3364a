/**
 * The verify step of a recovery (docs/recovery.md): the run that holds the operation's verify
 * lease while it checks migrations, reprojects the lookup rows and runs the binding smoke
 * checks, then records the outcome. Apart from service.ts because it is the one long,
 * resumable step with a lease, a failure path and its own audit; the service looks the
 * operation up and answers with its view.
 */
import { randomBytes } from 'node:crypto';
import type { Database } from '../../db/index.js';
import { ApiError } from '../../errors.js';
import type { RecoveryOperationRow, TenantScope } from '../../repositories/index.js';
import { audit, type Actor } from '../audit.js';
import { sanitizedCause } from '../failure.js';
import type { RecoveryEffects, StepReporter, VerifyProgress } from './effects.js';
import { isOpen, SMOKE_CHECKS, VERIFY_LEASE_MS, verifyStartsFresh } from './state-machine.js';
import { targetsOf, type SmokeResult } from './views.js';

/** The verify run's options: the reprojection's batch size, the stabilization window, progress. */
export interface VerifyOptions {
  batchSize: number;
  stabilizationSeconds: number;
  onProgress?: (p: VerifyProgress) => void;
  onStep?: StepReporter;
}

/**
 * Runs the verification against the database: migrations current, the lookup rows
 * reprojected (resumable keyset batches) and counted back, and the three binding smoke
 * checks. On success the operation is `stabilizing` with its stabilization deadline; a step
 * that fails leaves its error code and cause on the operation.
 * Returns the smoke checks' results; the caller reads the operation back.
 */
export async function runVerify(
  deps: { ds: Database; effects: RecoveryEffects },
  scope: TenantScope,
  id: string,
  r: RecoveryOperationRow,
  opts: VerifyOptions,
  actor: Actor,
): Promise<SmokeResult[]> {
  const ops = scope.recoveryOperations;
  if (r.state === 'awaiting_restore' || r.state === 'publishing_deny') {
    throw new ApiError(
      409,
      'restore_not_confirmed',
      'The restore has not been confirmed: run `iam recovery confirm-restore` first.',
      { state: r.state },
    );
  }
  if (!isOpen(r.state))
    throw new ApiError(409, 'recovery_not_open', `The operation is ${r.state}.`, { state: r.state });
  const owner = randomBytes(12).toString('base64url');
  const now0 = Date.now();
  // Every run re-checks migrations and smoke.
  if ((await ops.claimVerify(id, owner, now0 + VERIFY_LEASE_MS, now0, verifyStartsFresh(r))) !== 1) {
    const cur = (await ops.get(id))!;
    throw new ApiError(
      409,
      'verify_in_progress',
      `Another verify run holds this operation until ${new Date(cur.lease_expires_at ?? now0).toISOString()}; ` +
        'wait for it (or for its lease to expire) and run verify again.',
      { leaseExpiresAt: cur.lease_expires_at, state: cur.state },
    );
  }
  const step = opts.onStep ?? (() => {});
  let failure: ApiError | undefined;
  let smoke: SmokeResult[] = [];
  try {
    await deps.effects.verifyMigrations(scope, (await ops.get(id))!, owner, step);
    await deps.effects.reproject(scope, id, owner, Math.max(1, opts.batchSize), opts.onProgress ?? (() => {}), step);
    smoke = await deps.effects.smokeChecks(scope, (await ops.get(id))!, step);
    const now = Date.now();
    const okCount = smoke.filter((s) => s.ok).length;
    const allOk = okCount === SMOKE_CHECKS.length;
    const smokeFailure = allOk
      ? undefined
      : new ApiError(
          409,
          'binding_smoke_failed',
          `Binding smoke checks failed: ${smoke
            .filter((s) => !s.ok)
            .map((s) => `${s.check} (${s.detail})`)
            .join('; ')}.`,
        );
    await deps.ds.transaction(async (tx) => {
      const s = scope.in(tx);
      const cur = (await s.recoveryOperations.get(id))!;
      const targets = targetsOf(cur).map((t) => ({ ...t, bindingSmokeVerifiedAt: allOk ? now : null }));
      const changed = await s.recoveryOperations.verifyFinished(id, owner, {
        smokeSuccessCount: okCount,
        smokeResults: smoke,
        smokeVerifiedAt: allOk ? now : null,
        stabilizationNotBefore: allOk ? now + opts.stabilizationSeconds * 1000 : null,
        state: allOk ? 'stabilizing' : 'verifying',
        targets,
        errorCode: smokeFailure?.error ?? null,
        errorCause: smokeFailure ? sanitizedCause(smokeFailure) : null,
        now,
      });
      if (changed !== 1)
        throw new ApiError(
          409,
          'verify_lease_lost',
          'This verify run lost its lease to another run; run verify again.',
        );
      await audit(tx, actor, {
        tenantId: cur.tenant_id,
        action: 'tenant.recovery.verify',
        targetType: 'tenant_recovery',
        targetId: id,
        outcome: allOk ? 'success' : 'failure',
        summary: {
          migrations: 'current',
          projected_rows: cur.lookup_projected_rows,
          verified_rows: cur.lookup_verified_rows,
          registry_generation: cur.lookup_registry_generation,
          registry_digest: cur.registry_digest,
          smoke_checks: smoke.map((x) => ({ check: x.check, ok: x.ok })),
          stabilization_not_before: allOk ? now + opts.stabilizationSeconds * 1000 : null,
          request_id: actor.requestId ?? null,
        },
      });
    });
    failure = smokeFailure;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    failure = e;
    await ops.verifyFailed(id, owner, e.error, sanitizedCause(e), Date.now());
    const cur = (await ops.get(id))!;
    await deps.ds.transaction((tx) =>
      audit(tx, actor, {
        tenantId: cur.tenant_id,
        action: 'tenant.recovery.verify',
        targetType: 'tenant_recovery',
        targetId: id,
        outcome: 'failure',
        summary: { error: e.error, message: e.message, stage: cur.lookup_stage, request_id: actor.requestId ?? null },
      }),
    );
  } finally {
    await ops.releaseVerify(id, owner);
  }
  if (failure) throw failure;
  return smoke;
}
