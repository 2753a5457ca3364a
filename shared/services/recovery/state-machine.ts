/**
 * The recovery state machine, without I/O (docs/recovery.md):
 *
 *   publishing_deny → awaiting_restore → restore_confirmed → verifying → stabilizing → reactivated
 *   (any open state, no verify running) → cancelled
 *
 * and the lookup reprojection's stages within a verify: pending → scan → verify → cleanup → done.
 * What may happen next is decided here from an operation's row and the time; the service makes
 * each move with one conditional UPDATE.
 */
import type { RecoveryOperationRow } from '../../repositories/index.js';

export const OPEN_STATES = [
  'publishing_deny',
  'awaiting_restore',
  'restore_confirmed',
  'verifying',
  'stabilizing',
] as const;
export type RecoveryState = (typeof OPEN_STATES)[number] | 'reactivated' | 'cancelled';
export type LookupStage = 'pending' | 'scan' | 'verify' | 'cleanup' | 'done';

/** The states a verify run may start from. */
export const VERIFIABLE_STATES: readonly string[] = ['restore_confirmed', 'verifying', 'stabilizing'];

/**
 * How long after the deny is observed before a restore may be confirmed. A daemon keeps a
 * caller's registration for CALLER_CACHE_MS when it authenticates with a secret (10 s,
 * shared/services/secret-callers.ts); every other path reads the tenant state per request.
 * After this window no daemon acts on the tenant's pre-deny state, so a restore done
 * afterwards cannot race a late write.
 */
export const DENY_DRAIN_MS = 11_000;
/** A verify run holds the operation's lease this long, renewed after every batch. */
export const VERIFY_LEASE_MS = 60_000;
export const SMOKE_CHECKS = ['tenant_read', 'write_rollback', 'signing_key'] as const;
export const CONFIRMATION_FORMAT = 'REACTIVATE_RECOVERED_TENANT:{tenantId}';

export const confirmationFor = (tenantId: string): string => `REACTIVATE_RECOVERED_TENANT:${tenantId}`;

export const isOpen = (state: string): boolean => (OPEN_STATES as readonly string[]).includes(state);

/** A verify run holds the operation now. */
export const leaseActive = (r: Pick<RecoveryOperationRow, 'lease_owner' | 'lease_expires_at'>, now: number): boolean =>
  r.lease_owner !== null && (r.lease_expires_at ?? 0) > now;

/**
 * A verify after a finished reprojection (again after success, or after failed smoke checks)
 * starts it over at a fresh registry generation, so the pinned digest always describes the
 * rows as they are now; an unfinished one resumes from its cursor.
 */
export const verifyStartsFresh = (r: Pick<RecoveryOperationRow, 'lookup_stage' | 'state'>): boolean =>
  r.lookup_stage === 'done' || r.state === 'stabilizing';

/** The time from which a reactivation may proceed: the later of the stored deadline and the caller's floor. */
export function stabilizationEnd(
  r: Pick<RecoveryOperationRow, 'stabilization_not_before' | 'binding_smoke_verified_at'>,
  floorSeconds: number,
): number | null {
  const smoke = r.binding_smoke_verified_at;
  const stored = r.stabilization_not_before;
  if (smoke === null || stored === null) return null;
  return Math.max(stored, smoke + floorSeconds * 1000);
}

export interface UnmetPrecondition {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** Unmet reactivation preconditions, in the order the steps happen (docs/recovery.md). */
export function unmetPreconditions(r: RecoveryOperationRow, now: number, floorSeconds: number): UnmetPrecondition[] {
  const out: UnmetPrecondition[] = [];
  if (r.restored_at === null)
    out.push({
      code: 'restore_not_confirmed',
      message: 'The restore has not been confirmed: run `iam recovery confirm-restore`.',
    });
  if (r.migration_verified_at === null)
    out.push({
      code: 'migration_not_verified',
      message: 'The schema migrations have not been verified: run `iam recovery verify`.',
    });
  if (r.lookup_stage !== 'done' || r.lookup_reprojected_at === null || !r.registry_digest) {
    out.push({
      code: 'lookup_not_reprojected',
      message: "The tenant's lookup rows have not been reprojected and verified: run `iam recovery verify`.",
    });
  }
  if (r.smoke_success_count < SMOKE_CHECKS.length || r.binding_smoke_verified_at === null) {
    out.push({
      code: 'binding_smoke_incomplete',
      message:
        `The ${SMOKE_CHECKS.length} binding smoke checks have not all succeeded in one verify run: ` +
        'run `iam recovery verify`.',
    });
  }
  const end = stabilizationEnd(r, floorSeconds);
  if (out.length === 0 && end !== null && now < end) {
    out.push({
      code: 'stabilization_pending',
      message: `The stabilization interval has not passed: reactivation may proceed at ${new Date(end).toISOString()}.`,
      details: { notBefore: end, retryAfterSeconds: Math.ceil((end - now) / 1000) },
    });
  }
  return out;
}

/** What the operator can do now. */
export function allowedMoves(r: RecoveryOperationRow, now: number, stabilizationFloorSeconds: number) {
  const lease = leaseActive(r, now);
  return {
    canCancel: isOpen(r.state) && !lease,
    canConfirmRestore: r.state === 'awaiting_restore' && now >= (r.drain_not_before ?? Infinity),
    canVerify: VERIFIABLE_STATES.includes(r.state) && !lease,
    canReactivate:
      r.state === 'stabilizing' && !lease && unmetPreconditions(r, now, stabilizationFloorSeconds).length === 0,
  };
}
