/**
 * The recovery records the admin API and `iam recovery` show: the spec's "Tenant recovery
 * operation" (extensible, camelCase), plus `lastErrorCause` beside `lastErrorCode`, and the
 * details only the CLI prints.
 */
import type { PublicationRow, RecoveryOperationRow, RouteRow } from '../../repositories/index.js';
import { allowedMoves, leaseActive, stabilizationEnd } from './state-machine.js';

export interface RecoveryTarget {
  shardId: string;
  dataRole: string;
  residencyPartition: string;
  bindingRef: string;
  providerDatabaseId: string;
  migrationStreamId: string;
  releaseId: string;
  manifestDigest: string;
  assignmentGeneration: number;
  shardGeneration: number;
  restoreConfirmedAt: number | null;
  migrationVerifiedAt: number | null;
  lookupReprojectedAt: number | null;
  bindingSmokeVerifiedAt: number | null;
}

export interface LookupReprojection {
  stage: string;
  targetIndex: number;
  afterCreatedAt: number;
  afterId: string;
  afterRowId: number;
  projectedRows: number;
  verifiedRows: number;
  registryDigestPinned: boolean;
  leaseActive: boolean;
}

/** The spec's "Tenant recovery operation", plus the sanitised cause of its last error. */
export interface RecoveryView {
  operationId: string;
  environmentId: string;
  tenantId: string;
  state: string;
  pinnedRouteGeneration: number;
  denyRuntimeGeneration: number | null;
  denyRegistryGeneration: number | null;
  denyObservedAt: number | null;
  drainNotBefore: number | null;
  restoreReferenceRecorded: boolean;
  restoredAt: number | null;
  migrationVerifiedAt: number | null;
  lookupReprojectedAt: number | null;
  bindingSmokeVerifiedAt: number | null;
  lookupReprojection: LookupReprojection;
  reactivatedRuntimeGeneration: number | null;
  reactivatedAt: number | null;
  lastErrorCode: string | null;
  /** Why the last step failed, sanitised (no secret, no address, no stack); null with no error. */
  lastErrorCause: string | null;
  canCancel: boolean;
  canConfirmRestore: boolean;
  canVerify: boolean;
  canReactivate: boolean;
  targets: RecoveryTarget[];
  createdAt: number;
  updatedAt: number;
}

export interface SmokeResult {
  check: string;
  ok: boolean;
  at: number;
  detail: string;
}

/** What the CLI shows besides the spec's fields. */
export interface RecoveryDetails {
  reason: string;
  restoreReference: string | null;
  previousLifecycleState: string;
  stabilizationNotBefore: number | null;
  registryDigest: string | null;
  smokeChecks: SmokeResult[];
  createdBy: string;
  cancelledAt: number | null;
}

export interface RouteView {
  tenantId: string;
  routeGeneration: number;
  state: string;
  runtimeGeneration: number;
  registryGeneration: number;
  registryDigest: string | null;
  updatedAt: number;
}

export interface PublicationView {
  publicationId: string;
  routeGeneration: number;
  runtimeGeneration: number;
  state: string;
  registryDigest: string | null;
  operationId: string | null;
  publishedAt: number;
  jws: string;
}

export const targetsOf = (r: RecoveryOperationRow): RecoveryTarget[] => r.targets as RecoveryTarget[];

export function toRecoveryView(r: RecoveryOperationRow, now: number, stabilizationFloorSeconds: number): RecoveryView {
  return {
    operationId: r.id,
    environmentId: r.environment_id,
    tenantId: r.tenant_id,
    state: r.state,
    pinnedRouteGeneration: r.pinned_route_generation,
    denyRuntimeGeneration: r.deny_runtime_generation,
    denyRegistryGeneration: r.deny_registry_generation,
    denyObservedAt: r.deny_observed_at,
    drainNotBefore: r.drain_not_before,
    restoreReferenceRecorded: r.restore_reference !== null,
    restoredAt: r.restored_at,
    migrationVerifiedAt: r.migration_verified_at,
    lookupReprojectedAt: r.lookup_reprojected_at,
    bindingSmokeVerifiedAt: r.binding_smoke_verified_at,
    lookupReprojection: {
      stage: r.lookup_stage,
      targetIndex: r.lookup_target_index,
      afterCreatedAt: r.lookup_after_created_at,
      afterId: r.lookup_after_id,
      afterRowId: r.lookup_after_row_id,
      projectedRows: r.lookup_projected_rows,
      verifiedRows: r.lookup_verified_rows,
      registryDigestPinned: !!r.registry_digest,
      leaseActive: leaseActive(r, now),
    },
    reactivatedRuntimeGeneration: r.reactivated_runtime_generation,
    reactivatedAt: r.reactivated_at,
    lastErrorCode: r.last_error_code,
    lastErrorCause: r.last_error_cause,
    ...allowedMoves(r, now, stabilizationFloorSeconds),
    targets: targetsOf(r),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function toDetails(r: RecoveryOperationRow, floorSeconds: number): RecoveryDetails {
  return {
    reason: r.reason,
    restoreReference: r.restore_reference,
    previousLifecycleState: r.previous_lifecycle_state,
    stabilizationNotBefore: stabilizationEnd(r, floorSeconds),
    registryDigest: r.registry_digest,
    smokeChecks: r.smoke_results as SmokeResult[],
    createdBy: r.created_by,
    cancelledAt: r.cancelled_at,
  };
}

export function toRouteView(r: RouteRow): RouteView {
  return {
    tenantId: r.tenant_id,
    routeGeneration: r.route_generation,
    state: r.state,
    runtimeGeneration: r.runtime_generation,
    registryGeneration: r.registry_generation,
    registryDigest: r.registry_digest,
    updatedAt: r.updated_at,
  };
}

export function toPublicationView(p: PublicationRow): PublicationView {
  return {
    publicationId: p.id,
    routeGeneration: p.route_generation,
    runtimeGeneration: p.runtime_generation,
    state: p.state,
    registryDigest: p.registry_digest,
    operationId: p.operation_id,
    publishedAt: p.published_at,
    jws: p.jws,
  };
}
