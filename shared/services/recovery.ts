/**
 * Disaster recovery of one tenant (docs/recovery.md). The platform operator drives an
 * operation with `iam recovery …` on a host that reaches the database; the reactivation is
 * the HTTP endpoint POST /api/admin/platform/control-plane/tenant-recovery/{id}/reactivate.
 *
 *   publishing_deny → awaiting_restore → restore_confirmed → verifying → stabilizing → reactivated
 *   (any open state, no verify running) → cancelled
 *
 * Every move is a conditional UPDATE on the operation's state (one winner), committed with its
 * side effects (tenant state, route, signed route publication) and its audit event.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { compactVerify, importJWK, type CryptoKey, type JWK } from 'jose';
import type { KeyObject } from 'node:crypto';
import { signCompact } from '../jws.js';
import type { DataSource, EntityManager } from 'typeorm';
import { migrations } from '../../migrations/index.js';
import { ApiError, notFound } from '../errors.js';
import { all, exec, json, num, one, type Db } from '../db/sql.js';
import { isUniqueViolation } from '../db/retry.js';
import { audit, type Actor } from './audit.js';
import type { KeyService } from './keys.js';

export const OPEN_STATES = [
  'publishing_deny',
  'awaiting_restore',
  'restore_confirmed',
  'verifying',
  'stabilizing',
] as const;
export type RecoveryState = (typeof OPEN_STATES)[number] | 'reactivated' | 'cancelled';
export type LookupStage = 'pending' | 'scan' | 'verify' | 'cleanup' | 'done';

/**
 * How long after the deny is observed before a restore may be confirmed. A daemon caches an
 * introspection caller's tenant state for CALLER_CACHE_MS (10 s, daemon/routes/oauth/introspect.ts);
 * every other path reads the tenant state per request. After this window no daemon acts on
 * the tenant's pre-deny state, so a restore done afterwards cannot race a late write.
 */
export const DENY_DRAIN_MS = 11_000;
/** A verify run holds the operation's lease this long, renewed after every batch. */
export const VERIFY_LEASE_MS = 60_000;
export const ROUTE_PUBLICATION_TYP = 'route-publication+jwt';
export const MIGRATION_STREAM_ID = 'iam-core';
export const SMOKE_CHECKS = ['tenant_read', 'write_rollback', 'signing_key'] as const;
export const CONFIRMATION_FORMAT = 'REACTIVATE_RECOVERED_TENANT:{tenantId}';

export const confirmationFor = (tenantId: string): string => `REACTIVATE_RECOVERED_TENANT:${tenantId}`;

/** sha256 of the ordered migration names this release applies: the schema manifest. */
export function manifestDigest(names: string[] = migrations.map((M) => new M().name)): string {
  return `sha256:${createHash('sha256').update(names.join('\n')).digest('hex')}`;
}

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

/** The spec's "Tenant recovery operation". */
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

interface OpRow {
  id: string;
  environment_id: string;
  tenant_id: string;
  seq_no: unknown;
  state: RecoveryState;
  reason: string;
  previous_lifecycle_state: string;
  pinned_route_generation: unknown;
  deny_runtime_generation: unknown;
  deny_registry_generation: unknown;
  deny_observed_at: unknown;
  drain_not_before: unknown;
  restore_reference: string | null;
  restored_at: unknown;
  migration_verified_at: unknown;
  lookup_reprojected_at: unknown;
  binding_smoke_verified_at: unknown;
  smoke_success_count: unknown;
  smoke_results: unknown;
  stabilization_not_before: unknown;
  lookup_stage: LookupStage;
  lookup_target_index: unknown;
  lookup_registry_generation: unknown;
  lookup_after_created_at: unknown;
  lookup_after_id: string;
  lookup_after_row_id: unknown;
  lookup_projected_rows: unknown;
  lookup_verified_rows: unknown;
  registry_digest: string | null;
  lease_owner: string | null;
  lease_expires_at: unknown;
  reactivated_runtime_generation: unknown;
  reactivated_at: unknown;
  cancelled_at: unknown;
  last_error_code: string | null;
  targets: unknown;
  created_by: string;
  created_at: unknown;
  updated_at: unknown;
}

interface RouteRow {
  tenant_id: string;
  route_generation: unknown;
  state: string;
  runtime_generation: unknown;
  registry_generation: unknown;
  registry_digest: string | null;
  updated_at: unknown;
}

const nn = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const isOpen = (s: string) => (OPEN_STATES as readonly string[]).includes(s);
const leaseActive = (r: OpRow, now: number) => r.lease_owner !== null && (nn(r.lease_expires_at) ?? 0) > now;

/** The time from which a reactivation may proceed: the later of the stored deadline and the caller's floor. */
export function stabilizationEnd(
  r: Pick<OpRow, 'stabilization_not_before' | 'binding_smoke_verified_at'>,
  floorSeconds: number,
): number | null {
  const smoke = nn(r.binding_smoke_verified_at);
  const stored = nn(r.stabilization_not_before);
  if (smoke === null || stored === null) return null;
  return Math.max(stored, smoke + floorSeconds * 1000);
}

/** Unmet reactivation preconditions, in the order the steps happen (docs/recovery.md). */
function unmetPreconditions(
  r: OpRow,
  now: number,
  floorSeconds: number,
): { code: string; message: string; details?: Record<string, unknown> }[] {
  const out: { code: string; message: string; details?: Record<string, unknown> }[] = [];
  if (nn(r.restored_at) === null)
    out.push({
      code: 'restore_not_confirmed',
      message: 'The restore has not been confirmed: run `iam recovery confirm-restore`.',
    });
  if (nn(r.migration_verified_at) === null)
    out.push({
      code: 'migration_not_verified',
      message: 'The schema migrations have not been verified: run `iam recovery verify`.',
    });
  if (r.lookup_stage !== 'done' || nn(r.lookup_reprojected_at) === null || !r.registry_digest) {
    out.push({
      code: 'lookup_not_reprojected',
      message: "The tenant's lookup rows have not been reprojected and verified: run `iam recovery verify`.",
    });
  }
  if (num(r.smoke_success_count) < SMOKE_CHECKS.length || nn(r.binding_smoke_verified_at) === null) {
    out.push({
      code: 'binding_smoke_incomplete',
      message: `The ${SMOKE_CHECKS.length} binding smoke checks have not all succeeded in one verify run: run \`iam recovery verify\`.`,
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

export function toRecoveryView(r: OpRow, now: number, stabilizationFloorSeconds: number): RecoveryView {
  const lease = leaseActive(r, now);
  const open = isOpen(r.state);
  return {
    operationId: r.id,
    environmentId: r.environment_id,
    tenantId: r.tenant_id,
    state: r.state,
    pinnedRouteGeneration: num(r.pinned_route_generation),
    denyRuntimeGeneration: nn(r.deny_runtime_generation),
    denyRegistryGeneration: nn(r.deny_registry_generation),
    denyObservedAt: nn(r.deny_observed_at),
    drainNotBefore: nn(r.drain_not_before),
    restoreReferenceRecorded: r.restore_reference !== null,
    restoredAt: nn(r.restored_at),
    migrationVerifiedAt: nn(r.migration_verified_at),
    lookupReprojectedAt: nn(r.lookup_reprojected_at),
    bindingSmokeVerifiedAt: nn(r.binding_smoke_verified_at),
    lookupReprojection: {
      stage: r.lookup_stage,
      targetIndex: num(r.lookup_target_index),
      afterCreatedAt: num(r.lookup_after_created_at),
      afterId: r.lookup_after_id,
      afterRowId: num(r.lookup_after_row_id),
      projectedRows: num(r.lookup_projected_rows),
      verifiedRows: num(r.lookup_verified_rows),
      registryDigestPinned: !!r.registry_digest,
      leaseActive: lease,
    },
    reactivatedRuntimeGeneration: nn(r.reactivated_runtime_generation),
    reactivatedAt: nn(r.reactivated_at),
    lastErrorCode: r.last_error_code,
    canCancel: open && !lease,
    canConfirmRestore: r.state === 'awaiting_restore' && now >= (nn(r.drain_not_before) ?? Infinity),
    canVerify: ['restore_confirmed', 'verifying', 'stabilizing'].includes(r.state) && !lease,
    canReactivate:
      r.state === 'stabilizing' && !lease && unmetPreconditions(r, now, stabilizationFloorSeconds).length === 0,
    targets: json<RecoveryTarget[]>(r.targets),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

function toDetails(r: OpRow, floorSeconds: number): RecoveryDetails {
  return {
    reason: r.reason,
    restoreReference: r.restore_reference,
    previousLifecycleState: r.previous_lifecycle_state,
    stabilizationNotBefore: stabilizationEnd(r, floorSeconds),
    registryDigest: r.registry_digest,
    smokeChecks: json<SmokeResult[]>(r.smoke_results),
    createdBy: r.created_by,
    cancelledAt: nn(r.cancelled_at),
  };
}

/** The binding the operator's process is connected to, described without secrets. */
export interface BindingDescription {
  bindingRef: string;
  providerDatabaseId: string;
  releaseId: string;
}

export interface RoutePublicationClaims {
  tenant_id: string;
  route_generation: number;
  runtime_generation: number;
  registry_generation: number;
  state: 'active' | 'deny';
  registry_digest: string | null;
  operation_id: string | null;
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

export interface VerifyProgress {
  stage: LookupStage;
  batch: number;
  rows: number;
  projectedRows: number;
  verifiedRows: number;
}

type Signer = { keyObject: KeyObject; kid: string; alg: string };

class Abort extends Error {}

export class RecoveryService {
  constructor(
    private readonly ds: DataSource,
    private readonly keys: KeyService,
    private readonly issuer: string,
  ) {}

  private async row(db: Db, id: string): Promise<OpRow | undefined> {
    return one<OpRow>(db, 'SELECT * FROM tenant_recovery_operations WHERE id = ?', [id]);
  }

  private async require(id: string): Promise<OpRow> {
    const r = await this.row(this.ds, id);
    if (!r) throw notFound(`Recovery operation ${id}`);
    return r;
  }

  async get(id: string, floorSeconds: number): Promise<{ recovery: RecoveryView; details: RecoveryDetails }> {
    const r = await this.require(id);
    return { recovery: toRecoveryView(r, Date.now(), floorSeconds), details: toDetails(r, floorSeconds) };
  }

  async list(tenantId: string | undefined, floorSeconds: number): Promise<RecoveryView[]> {
    const rows = tenantId
      ? await all<OpRow>(
          this.ds,
          'SELECT * FROM tenant_recovery_operations WHERE tenant_id = ? ORDER BY created_at, id',
          [tenantId],
        )
      : await all<OpRow>(this.ds, 'SELECT * FROM tenant_recovery_operations ORDER BY created_at, id');
    const now = Date.now();
    return rows.map((r) => toRecoveryView(r, now, floorSeconds));
  }

  /** Signs a route publication with the service's active signing key (verifiable at /jwks). */
  private sign(signer: Signer, publicationId: string, claims: RoutePublicationClaims, nowMs: number): string {
    return signCompact(
      { alg: signer.alg, kid: signer.kid, typ: ROUTE_PUBLICATION_TYP },
      { ...claims, iss: this.issuer, jti: publicationId, iat: Math.floor(nowMs / 1000) },
      signer.keyObject,
    );
  }

  /** Writes a new runtime generation of the tenant's route and its signed publication (inside `em`'s transaction). */
  private async publish(
    em: EntityManager,
    signer: Signer,
    route: RouteRow,
    next: { state: 'active' | 'deny'; registryGeneration: number; registryDigest: string | null; operationId: string },
    now: number,
  ): Promise<number> {
    const runtime = num(route.runtime_generation) + 1;
    const changed = await exec(
      em,
      `UPDATE tenant_routes SET state = ?, runtime_generation = ?, registry_generation = ?, registry_digest = ?, updated_at = ?
      WHERE tenant_id = ? AND route_generation = ? AND runtime_generation = ?`,
      [
        next.state,
        runtime,
        next.registryGeneration,
        next.registryDigest,
        now,
        route.tenant_id,
        num(route.route_generation),
        num(route.runtime_generation),
      ],
    );
    if (changed !== 1)
      throw new ApiError(
        409,
        'route_conflict',
        "The tenant's route changed while publishing; re-read the operation and retry.",
      );
    const id = randomUUID();
    const claims: RoutePublicationClaims = {
      tenant_id: route.tenant_id,
      route_generation: num(route.route_generation),
      runtime_generation: runtime,
      registry_generation: next.registryGeneration,
      state: next.state,
      registry_digest: next.registryDigest,
      operation_id: next.operationId,
    };
    const jws = await this.sign(signer, id, claims, now);
    await exec(
      em,
      `INSERT INTO tenant_route_publications (id, tenant_id, route_generation, runtime_generation, state, registry_digest, jws, operation_id, published_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        id,
        route.tenant_id,
        num(route.route_generation),
        runtime,
        next.state,
        next.registryDigest,
        jws,
        next.operationId,
        now,
      ],
    );
    return runtime;
  }

  /**
   * Opens a recovery for a tenant: the tenant becomes `recovering` (every login, token and
   * introspection is refused), and a deny route publication is signed and stored. Then the
   * deny is read back as committed (observed) and the operation waits for the restore.
   * If an operation is already open and was interrupted while publishing its deny, it is
   * resumed; any other open operation is refused.
   */
  async start(
    input: { tenantId: string; reason: string; environmentId: string; binding: BindingDescription },
    actor: Actor,
  ): Promise<{ recovery: RecoveryView; resumed: boolean }> {
    const { tenantId, reason } = input;
    if (!reason.trim() || reason.length > 1000)
      throw new ApiError(400, 'invalid_request', 'reason: must be 1 to 1000 characters.', { field: 'reason' });
    const tenant = await one<{ lifecycle_state: string }>(this.ds, 'SELECT lifecycle_state FROM tenants WHERE id = ?', [
      tenantId,
    ]);
    if (!tenant) throw notFound(`Tenant ${tenantId}`);
    const signer = await this.keys.signingKey();
    let opId: string | undefined;
    let resumed = false;
    const open = await one<{ id: string; state: string }>(
      this.ds,
      'SELECT id, state FROM tenant_recovery_operations WHERE open_tenant_id = ?',
      [tenantId],
    );
    if (open) {
      if (open.state !== 'publishing_deny') {
        throw new ApiError(
          409,
          'recovery_already_open',
          `Recovery operation ${open.id} is already open for this tenant (state ${open.state}); continue it (see \`iam recovery show --operation ${open.id}\`) or cancel it first.`,
          { operationId: open.id, state: open.state },
        );
      }
      opId = open.id;
      resumed = true;
    } else {
      try {
        opId = await this.ds.transaction(async (em) => {
          const now = Date.now();
          const t = await one<{ lifecycle_state: string }>(em, 'SELECT lifecycle_state FROM tenants WHERE id = ?', [
            tenantId,
          ]);
          if (!t) throw notFound(`Tenant ${tenantId}`);
          if (t.lifecycle_state !== 'active' && t.lifecycle_state !== 'suspended') {
            throw new ApiError(
              409,
              'tenant_not_recoverable',
              `The tenant is ${t.lifecycle_state}; only an active or suspended tenant can be recovered.`,
              { lifecycle_state: t.lifecycle_state },
            );
          }
          const seq =
            num(
              (await one<{ n: unknown }>(
                em,
                'SELECT COALESCE(MAX(seq_no), 0) AS n FROM tenant_recovery_operations WHERE tenant_id = ?',
                [tenantId],
              ))!.n,
            ) + 1;
          const id = `dr_${tenantId}_${seq}`;
          let route = await one<RouteRow>(em, 'SELECT * FROM tenant_routes WHERE tenant_id = ?', [tenantId]);
          if (!route) {
            // First recovery of this tenant: its route is the one database (generation 1),
            // with an empty registry (generation 0) until a verify projects one.
            await exec(
              em,
              `INSERT INTO tenant_routes (tenant_id, route_generation, state, runtime_generation, registry_generation, registry_digest, updated_at)
              VALUES (?, 1, 'active', 0, 0, NULL, ?)`,
              [tenantId, now],
            );
            route = (await one<RouteRow>(em, 'SELECT * FROM tenant_routes WHERE tenant_id = ?', [tenantId]))!;
          }
          const moved = await exec(
            em,
            'UPDATE tenants SET lifecycle_state = ?, updated_at = ? WHERE id = ? AND lifecycle_state = ?',
            ['recovering', now, tenantId, t.lifecycle_state],
          );
          if (moved !== 1)
            throw new ApiError(
              409,
              'tenant_state_changed',
              "The tenant's state changed while starting the recovery; retry.",
            );
          const denyRegistry = num(route.registry_generation);
          const denyRuntime = await this.publish(
            em,
            signer,
            route,
            { state: 'deny', registryGeneration: denyRegistry, registryDigest: route.registry_digest, operationId: id },
            now,
          );
          const shardGeneration = await this.shardGeneration(em);
          const target: RecoveryTarget = {
            shardId: 'primary',
            dataRole: 'primary',
            residencyPartition: 'default',
            bindingRef: input.binding.bindingRef,
            providerDatabaseId: input.binding.providerDatabaseId,
            migrationStreamId: MIGRATION_STREAM_ID,
            releaseId: input.binding.releaseId,
            manifestDigest: manifestDigest(),
            assignmentGeneration: num(route.route_generation),
            shardGeneration,
            restoreConfirmedAt: null,
            migrationVerifiedAt: null,
            lookupReprojectedAt: null,
            bindingSmokeVerifiedAt: null,
          };
          await exec(
            em,
            `INSERT INTO tenant_recovery_operations (id, environment_id, tenant_id, seq_no, open_tenant_id, state, reason, previous_lifecycle_state,
              pinned_route_generation, deny_runtime_generation, deny_registry_generation, deny_observed_at, drain_not_before,
              restore_reference, restored_at, migration_verified_at, lookup_reprojected_at, binding_smoke_verified_at,
              smoke_success_count, smoke_results, stabilization_not_before,
              lookup_stage, lookup_target_index, lookup_registry_generation, lookup_after_created_at, lookup_after_id, lookup_after_row_id,
              lookup_projected_rows, lookup_verified_rows, registry_digest, lease_owner, lease_expires_at,
              reactivated_runtime_generation, reactivated_at, cancelled_at, last_error_code, targets, created_by, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, 'publishing_deny', ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, '[]', NULL,
              'pending', 0, ?, 0, '', 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ?, ?, ?, ?)`,
            [
              id,
              input.environmentId,
              tenantId,
              seq,
              tenantId,
              reason,
              t.lifecycle_state,
              num(route.route_generation),
              denyRuntime,
              denyRegistry,
              denyRegistry + 1,
              JSON.stringify([target]),
              actor.id,
              now,
              now,
            ],
          );
          await audit(em, actor, {
            tenantId,
            action: 'tenant.recovery.start',
            targetType: 'tenant_recovery',
            targetId: id,
            summary: {
              reason,
              before: {
                lifecycle_state: t.lifecycle_state,
                route_state: route.state,
                runtime_generation: num(route.runtime_generation),
              },
              after: { lifecycle_state: 'recovering', route_state: 'deny', runtime_generation: denyRuntime },
              pinned_route_generation: num(route.route_generation),
              request_id: actor.requestId ?? null,
            },
          });
          return id;
        });
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        // Another operator started one at the same moment: theirs is the open one.
        const other = await one<{ id: string; state: string }>(
          this.ds,
          'SELECT id, state FROM tenant_recovery_operations WHERE open_tenant_id = ?',
          [tenantId],
        );
        throw new ApiError(
          409,
          'recovery_already_open',
          `Recovery operation ${other?.id ?? '(unknown)'} was started for this tenant at the same time; continue that one.`,
          { operationId: other?.id ?? null },
        );
      }
    }
    await this.observeDeny(opId);
    return { recovery: toRecoveryView((await this.row(this.ds, opId))!, Date.now(), 0), resumed };
  }

  /** 1 + the restores confirmed on this database so far: the restore epoch of the primary shard. */
  private async shardGeneration(db: Db): Promise<number> {
    return (
      num(
        (await one<{ n: unknown }>(
          db,
          'SELECT COUNT(*) AS n FROM tenant_recovery_operations WHERE restored_at IS NOT NULL',
        ))!.n,
      ) + 1
    );
  }

  /**
   * Reads the deny back after its commit (what every daemon now sees) and moves the operation
   * to `awaiting_restore`, with the drain deadline after which the restore may be confirmed.
   */
  private async observeDeny(id: string): Promise<void> {
    const r = (await this.row(this.ds, id))!;
    if (r.state !== 'publishing_deny') return;
    const seen = await one<{ state: string; runtime_generation: unknown; lifecycle_state: string }>(
      this.ds,
      'SELECT r.state, r.runtime_generation, t.lifecycle_state FROM tenant_routes r JOIN tenants t ON t.id = r.tenant_id WHERE r.tenant_id = ?',
      [r.tenant_id],
    );
    if (
      !seen ||
      seen.state !== 'deny' ||
      num(seen.runtime_generation) < num(r.deny_runtime_generation) ||
      seen.lifecycle_state !== 'recovering'
    ) {
      await exec(
        this.ds,
        "UPDATE tenant_recovery_operations SET last_error_code = 'deny_not_observed', updated_at = ? WHERE id = ?",
        [Date.now(), id],
      );
      throw new ApiError(
        409,
        'deny_not_observed',
        'The deny route publication is not what the database now holds; see `iam recovery show` and cancel the operation.',
      );
    }
    const now = Date.now();
    await exec(
      this.ds,
      `UPDATE tenant_recovery_operations SET state = 'awaiting_restore', deny_observed_at = ?, drain_not_before = ?, last_error_code = NULL, updated_at = ?
      WHERE id = ? AND state = 'publishing_deny'`,
      [now, now + DENY_DRAIN_MS, now, id],
    );
  }

  /** Records that the operator restored the tenant's data, and from which backup. */
  async confirmRestore(id: string, restoreReference: string, actor: Actor): Promise<RecoveryView> {
    const ref = restoreReference.trim();
    if (!ref || ref.length > 500 || !/^[\x20-\x7E]+$/.test(ref)) {
      throw new ApiError(
        400,
        'invalid_request',
        'restore reference: must be 1 to 500 printable ASCII characters (a backup identifier).',
        { field: 'restore_reference' },
      );
    }
    const r = await this.require(id);
    if (r.state === 'publishing_deny') await this.observeDeny(id);
    const cur = (await this.row(this.ds, id))!;
    if (cur.state !== 'awaiting_restore') {
      throw new ApiError(
        409,
        isOpen(cur.state) ? 'restore_already_confirmed' : 'recovery_not_open',
        `The operation is ${cur.state}; a restore can be confirmed only while it is awaiting_restore.`,
        { state: cur.state },
      );
    }
    const now = Date.now();
    const drain = nn(cur.drain_not_before) ?? 0;
    if (now < drain) {
      throw new ApiError(
        409,
        'drain_pending',
        `The deny is still draining from the daemons' caches; confirm the restore at or after ${new Date(drain).toISOString()}.`,
        { notBefore: drain, retryAfterSeconds: Math.ceil((drain - now) / 1000) },
      );
    }
    await this.ds.transaction(async (em) => {
      const shardGeneration = await this.shardGeneration(em);
      const targets = json<RecoveryTarget[]>(cur.targets).map((t) => ({
        ...t,
        shardGeneration,
        restoreConfirmedAt: now,
      }));
      const changed = await exec(
        em,
        `UPDATE tenant_recovery_operations SET state = 'restore_confirmed', restore_reference = ?, restored_at = ?, targets = ?, last_error_code = NULL, updated_at = ?
        WHERE id = ? AND state = 'awaiting_restore'`,
        [ref, now, JSON.stringify(targets), now, id],
      );
      if (changed !== 1)
        throw new ApiError(
          409,
          'restore_already_confirmed',
          'The restore was confirmed by another run at the same time.',
        );
      await audit(em, actor, {
        tenantId: cur.tenant_id,
        action: 'tenant.recovery.confirm_restore',
        targetType: 'tenant_recovery',
        targetId: id,
        summary: {
          restore_reference: ref,
          shard_generation: shardGeneration,
          before: { state: 'awaiting_restore' },
          after: { state: 'restore_confirmed' },
          request_id: actor.requestId ?? null,
        },
      });
    });
    return toRecoveryView((await this.row(this.ds, id))!, Date.now(), 0);
  }

  /**
   * Runs the verification against the database: migrations current, the lookup rows
   * reprojected (resumable keyset batches) and counted back, and the three binding smoke
   * checks. On success the operation is `stabilizing` with its stabilization deadline.
   */
  async verify(
    id: string,
    opts: {
      batchSize: number;
      stabilizationSeconds: number;
      onProgress?: (p: VerifyProgress) => void;
      onStep?: (step: string, ok: boolean, detail: string) => void;
    },
    actor: Actor,
  ): Promise<{ recovery: RecoveryView; smokeChecks: SmokeResult[] }> {
    const r = await this.require(id);
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
    // Every run re-checks migrations and smoke. A finished reprojection (a verify again after
    // success or after failed smoke checks) starts over at a fresh registry generation, so the
    // pinned digest always describes the rows as they are now; an unfinished one resumes.
    const fresh = r.lookup_stage === 'done' || r.state === 'stabilizing';
    const claimed = await exec(
      this.ds,
      `UPDATE tenant_recovery_operations SET lease_owner = ?, lease_expires_at = ?, state = 'verifying', updated_at = ?,
        migration_verified_at = NULL, smoke_success_count = 0, binding_smoke_verified_at = NULL, stabilization_not_before = NULL
        ${
          fresh
            ? `, lookup_stage = 'pending', lookup_registry_generation = lookup_registry_generation + 1, lookup_after_created_at = 0, lookup_after_id = '',
          lookup_after_row_id = 0, lookup_projected_rows = 0, lookup_verified_rows = 0, registry_digest = NULL, lookup_reprojected_at = NULL`
            : ''
        }
      WHERE id = ? AND state IN ('restore_confirmed', 'verifying', 'stabilizing') AND (lease_expires_at IS NULL OR lease_expires_at <= ?)`,
      [owner, now0 + VERIFY_LEASE_MS, now0, id, now0],
    );
    if (claimed !== 1) {
      const cur = (await this.row(this.ds, id))!;
      throw new ApiError(
        409,
        'verify_in_progress',
        `Another verify run holds this operation until ${new Date(nn(cur.lease_expires_at) ?? now0).toISOString()}; wait for it (or for its lease to expire) and run verify again.`,
        { leaseExpiresAt: nn(cur.lease_expires_at), state: cur.state },
      );
    }
    const step = opts.onStep ?? (() => {});
    let failure: ApiError | undefined;
    let smoke: SmokeResult[] = [];
    try {
      await this.verifyMigrations(id, owner, step);
      await this.reproject(id, owner, Math.max(1, opts.batchSize), opts.onProgress ?? (() => {}), step);
      smoke = await this.smokeChecks(id, step);
      const now = Date.now();
      const okCount = smoke.filter((s) => s.ok).length;
      const allOk = okCount === SMOKE_CHECKS.length;
      await this.ds.transaction(async (em) => {
        const cur = (await this.row(em, id))!;
        const targets = json<RecoveryTarget[]>(cur.targets).map((t) => ({
          ...t,
          bindingSmokeVerifiedAt: allOk ? now : null,
        }));
        const changed = await exec(
          em,
          `UPDATE tenant_recovery_operations SET smoke_success_count = ?, smoke_results = ?, binding_smoke_verified_at = ?,
            stabilization_not_before = ?, state = ?, targets = ?, last_error_code = ?, lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
          WHERE id = ? AND lease_owner = ?`,
          [
            okCount,
            JSON.stringify(smoke),
            allOk ? now : null,
            allOk ? now + opts.stabilizationSeconds * 1000 : null,
            allOk ? 'stabilizing' : 'verifying',
            JSON.stringify(targets),
            allOk ? null : 'binding_smoke_failed',
            now,
            id,
            owner,
          ],
        );
        if (changed !== 1)
          throw new ApiError(
            409,
            'verify_lease_lost',
            'This verify run lost its lease to another run; run verify again.',
          );
        await audit(em, actor, {
          tenantId: cur.tenant_id,
          action: 'tenant.recovery.verify',
          targetType: 'tenant_recovery',
          targetId: id,
          outcome: allOk ? 'success' : 'failure',
          summary: {
            migrations: 'current',
            projected_rows: num(cur.lookup_projected_rows),
            verified_rows: num(cur.lookup_verified_rows),
            registry_generation: num(cur.lookup_registry_generation),
            registry_digest: cur.registry_digest,
            smoke_checks: smoke.map((s) => ({ check: s.check, ok: s.ok })),
            stabilization_not_before: allOk ? now + opts.stabilizationSeconds * 1000 : null,
            request_id: actor.requestId ?? null,
          },
        });
      });
      if (!allOk)
        failure = new ApiError(
          409,
          'binding_smoke_failed',
          `Binding smoke checks failed: ${smoke
            .filter((s) => !s.ok)
            .map((s) => `${s.check} (${s.detail})`)
            .join('; ')}.`,
        );
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      failure = e;
      await exec(
        this.ds,
        'UPDATE tenant_recovery_operations SET last_error_code = ?, updated_at = ? WHERE id = ? AND lease_owner = ?',
        [e.error, Date.now(), id, owner],
      );
      const cur = (await this.row(this.ds, id))!;
      await this.ds.transaction((em) =>
        audit(em, actor, {
          tenantId: cur.tenant_id,
          action: 'tenant.recovery.verify',
          targetType: 'tenant_recovery',
          targetId: id,
          outcome: 'failure',
          summary: { error: e.error, message: e.message, stage: cur.lookup_stage, request_id: actor.requestId ?? null },
        }),
      );
    } finally {
      await exec(
        this.ds,
        'UPDATE tenant_recovery_operations SET lease_owner = NULL, lease_expires_at = NULL WHERE id = ? AND lease_owner = ?',
        [id, owner],
      );
    }
    if (failure) throw failure;
    return {
      recovery: toRecoveryView((await this.row(this.ds, id))!, Date.now(), opts.stabilizationSeconds),
      smokeChecks: smoke,
    };
  }

  /** Step 1: every migration this release knows is applied, and in the manifest recorded at start. */
  private async verifyMigrations(
    id: string,
    owner: string,
    step: (s: string, ok: boolean, d: string) => void,
  ): Promise<void> {
    const r = (await this.row(this.ds, id))!;
    const target = json<RecoveryTarget[]>(r.targets)[0];
    const applied = (await all<{ name: string }>(this.ds, 'SELECT name FROM migrations ORDER BY timestamp, id')).map(
      (m) => m.name,
    );
    const code = migrations.map((M) => new M().name);
    const pending = code.filter((n) => !applied.includes(n));
    if (pending.length) {
      step('migrations', false, `pending: ${pending.join(', ')}`);
      throw new ApiError(
        409,
        'migration_not_current',
        `The database lacks migrations ${pending.join(', ')}: run \`iam db migrate\`, then verify again.`,
        { pending },
      );
    }
    const appliedDigest = manifestDigest(applied.filter((n) => code.includes(n)));
    if (appliedDigest !== target.manifestDigest) {
      step('migrations', false, `manifest ${appliedDigest} differs from ${target.manifestDigest}`);
      throw new ApiError(
        409,
        'migration_manifest_mismatch',
        `The applied migrations (${appliedDigest}) are not the manifest recorded when the operation started (${target.manifestDigest}, release ${target.releaseId}); run verify with that release, or cancel and start again.`,
      );
    }
    const now = Date.now();
    const targets = json<RecoveryTarget[]>(r.targets).map((t) => ({ ...t, migrationVerifiedAt: now }));
    await exec(
      this.ds,
      'UPDATE tenant_recovery_operations SET migration_verified_at = ?, targets = ?, lease_expires_at = ?, updated_at = ? WHERE id = ? AND lease_owner = ?',
      [now, JSON.stringify(targets), now + VERIFY_LEASE_MS, now, id, owner],
    );
    step('migrations', true, `${applied.length} applied, manifest ${target.manifestDigest}`);
  }

  /** Step 2: the lookup reprojection, stage by stage, persisting the cursor after every batch. */
  private async reproject(
    id: string,
    owner: string,
    batch: number,
    progress: (p: VerifyProgress) => void,
    step: (s: string, ok: boolean, d: string) => void,
  ): Promise<void> {
    const lost = () =>
      new ApiError(409, 'verify_lease_lost', 'This verify run lost its lease to another run; run verify again.');
    let n = 0;
    for (;;) {
      const r = (await this.row(this.ds, id))!;
      if (r.lease_owner !== owner) throw lost();
      const gen = num(r.lookup_registry_generation);
      const tenantId = r.tenant_id;
      const report = (rows: number, cur: OpRow) =>
        progress({
          stage: r.lookup_stage,
          batch: ++n,
          rows,
          projectedRows: num(cur.lookup_projected_rows),
          verifiedRows: num(cur.lookup_verified_rows),
        });
      if (r.lookup_stage === 'pending') {
        await exec(
          this.ds,
          "UPDATE tenant_recovery_operations SET lookup_stage = 'scan', updated_at = ? WHERE id = ? AND lease_owner = ?",
          [Date.now(), id, owner],
        );
        continue;
      }
      if (r.lookup_stage === 'scan') {
        const afterAt = num(r.lookup_after_created_at);
        const afterId = r.lookup_after_id;
        // Keyset pagination over (created_at, id) of both sources: stable under inserts, and
        // resumable from the persisted cursor.
        const rows = await all<{ kind: string; id: string; lookup_key: string; created_at: unknown }>(
          this.ds,
          `SELECT kind, id, lookup_key, created_at FROM (
            SELECT 'client_id' AS kind, id, client_id AS lookup_key, created_at FROM clients WHERE tenant_id = ? AND (created_at > ? OR (created_at = ? AND id > ?))
            UNION ALL
            SELECT 'user_id' AS kind, id, id AS lookup_key, created_at FROM users WHERE tenant_id = ? AND (created_at > ? OR (created_at = ? AND id > ?))
          ) s ORDER BY created_at, id LIMIT ${batch}`,
          [tenantId, afterAt, afterAt, afterId, tenantId, afterAt, afterAt, afterId],
        );
        const now = Date.now();
        await this.ds.transaction(async (em) => {
          for (const row of rows) {
            await exec(
              em,
              `INSERT INTO tenant_lookup_rows (tenant_id, registry_generation, route_generation, lookup_kind, lookup_key, source_id, source_created_at, projected_at)
              VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
              [
                tenantId,
                gen,
                num(r.pinned_route_generation),
                row.kind,
                row.lookup_key,
                row.id,
                num(row.created_at),
                now,
              ],
            );
          }
          const last = rows[rows.length - 1];
          const changed = await exec(
            em,
            `UPDATE tenant_recovery_operations SET lookup_after_created_at = ?, lookup_after_id = ?, lookup_projected_rows = lookup_projected_rows + ?,
              lookup_stage = ?, lookup_after_row_id = 0, lease_expires_at = ?, updated_at = ? WHERE id = ? AND lease_owner = ?`,
            [
              last ? num(last.created_at) : afterAt,
              last ? last.id : afterId,
              rows.length,
              rows.length < batch ? 'verify' : 'scan',
              now + VERIFY_LEASE_MS,
              now,
              id,
              owner,
            ],
          );
          if (changed !== 1) throw lost();
        });
        report(rows.length, (await this.row(this.ds, id))!);
        continue;
      }
      if (r.lookup_stage === 'verify') {
        // Count the projected rows back, each confirmed against its source row.
        const rows = await all<{ row_id: unknown; confirmed: unknown }>(
          this.ds,
          `SELECT l.row_id,
            CASE WHEN l.lookup_kind = 'client_id'
              THEN (SELECT COUNT(*) FROM clients c WHERE c.id = l.source_id AND c.tenant_id = l.tenant_id AND c.client_id = l.lookup_key)
              ELSE (SELECT COUNT(*) FROM users u WHERE u.id = l.source_id AND u.tenant_id = l.tenant_id AND u.id = l.lookup_key) END AS confirmed
          FROM tenant_lookup_rows l WHERE l.tenant_id = ? AND l.registry_generation = ? AND l.row_id > ? ORDER BY l.row_id LIMIT ${batch}`,
          [tenantId, gen, num(r.lookup_after_row_id)],
        );
        const confirmed = rows.reduce((a, x) => a + (num(x.confirmed) > 0 ? 1 : 0), 0);
        const now = Date.now();
        const done = rows.length < batch;
        const last = rows[rows.length - 1];
        const changed = await exec(
          this.ds,
          `UPDATE tenant_recovery_operations SET lookup_after_row_id = ?, lookup_verified_rows = lookup_verified_rows + ?,
            lease_expires_at = ?, updated_at = ? WHERE id = ? AND lease_owner = ?`,
          [last ? num(last.row_id) : num(r.lookup_after_row_id), confirmed, now + VERIFY_LEASE_MS, now, id, owner],
        );
        if (changed !== 1) throw lost();
        const cur = (await this.row(this.ds, id))!;
        report(rows.length, cur);
        if (!done) continue;
        const projected = num(cur.lookup_projected_rows);
        const verified = num(cur.lookup_verified_rows);
        const sources = await this.sourceCount(tenantId);
        if (verified !== projected || projected !== sources) {
          // Start over at a fresh generation on the next run; the rows of this one are
          // abandoned and removed by that run's cleanup.
          await exec(
            this.ds,
            `UPDATE tenant_recovery_operations SET lookup_stage = 'pending', lookup_registry_generation = lookup_registry_generation + 1,
              lookup_after_created_at = 0, lookup_after_id = '', lookup_after_row_id = 0, lookup_projected_rows = 0, lookup_verified_rows = 0, updated_at = ?
            WHERE id = ? AND lease_owner = ?`,
            [Date.now(), id, owner],
          );
          step('lookup_reprojection', false, `projected ${projected}, verified ${verified}, sources ${sources}`);
          throw new ApiError(
            409,
            'lookup_count_mismatch',
            `Lookup reprojection counted ${verified} of ${projected} projected rows back against ${sources} source rows; run verify again to reproject.`,
            { projectedRows: projected, verifiedRows: verified, sourceRows: sources },
          );
        }
        const digest = await this.registryDigest(tenantId, gen, batch);
        const pinned = await exec(
          this.ds,
          "UPDATE tenant_recovery_operations SET registry_digest = ?, lookup_stage = 'cleanup', updated_at = ? WHERE id = ? AND lease_owner = ?",
          [digest, Date.now(), id, owner],
        );
        if (pinned !== 1) throw lost();
        continue;
      }
      if (r.lookup_stage === 'cleanup') {
        // Rows of abandoned generations (earlier runs of this or a cancelled operation). The
        // generation live before the deny stays until the reactivation switches the route.
        const removed = await exec(
          this.ds,
          'DELETE FROM tenant_lookup_rows WHERE tenant_id = ? AND registry_generation < ? AND registry_generation <> ?',
          [tenantId, gen, num(r.deny_registry_generation)],
        );
        const now = Date.now();
        const targets = json<RecoveryTarget[]>(r.targets).map((t) => ({ ...t, lookupReprojectedAt: now }));
        const changed = await exec(
          this.ds,
          `UPDATE tenant_recovery_operations SET lookup_stage = 'done', lookup_reprojected_at = ?, targets = ?, updated_at = ?
          WHERE id = ? AND lease_owner = ?`,
          [now, JSON.stringify(targets), now, id, owner],
        );
        if (changed !== 1) throw lost();
        report(removed, (await this.row(this.ds, id))!);
        continue;
      }
      step(
        'lookup_reprojection',
        true,
        `${num(r.lookup_projected_rows)} rows projected and verified at registry generation ${gen}, digest ${r.registry_digest}`,
      );
      return;
    }
  }

  /** Clients and users of the tenant: the identifiers that route to it. */
  private async sourceCount(tenantId: string, db: Db = this.ds): Promise<number> {
    const r = await one<{ c: unknown; u: unknown }>(
      db,
      'SELECT (SELECT COUNT(*) FROM clients WHERE tenant_id = ?) AS c, (SELECT COUNT(*) FROM users WHERE tenant_id = ?) AS u',
      [tenantId, tenantId],
    );
    return num(r!.c) + num(r!.u);
  }

  /** sha256 over the registry's rows sorted by (kind, key): one `kind:key=source_id` line each. */
  private async registryDigest(tenantId: string, gen: number, batch: number): Promise<string> {
    const h = createHash('sha256');
    let kind = '';
    let key = '';
    for (;;) {
      const rows = await all<{ lookup_kind: string; lookup_key: string; source_id: string }>(
        this.ds,
        `SELECT lookup_kind, lookup_key, source_id FROM tenant_lookup_rows
        WHERE tenant_id = ? AND registry_generation = ? AND (lookup_kind > ? OR (lookup_kind = ? AND lookup_key > ?)) ORDER BY lookup_kind, lookup_key LIMIT ${batch}`,
        [tenantId, gen, kind, kind, key],
      );
      for (const r of rows) h.update(`${r.lookup_kind}:${r.lookup_key}=${r.source_id}\n`);
      if (rows.length < batch) break;
      kind = rows[rows.length - 1].lookup_kind;
      key = rows[rows.length - 1].lookup_key;
    }
    return `sha256:${h.digest('hex')}`;
  }

  /** Step 3: three private checks through the database binding. */
  private async smokeChecks(id: string, step: (s: string, ok: boolean, d: string) => void): Promise<SmokeResult[]> {
    const r = (await this.row(this.ds, id))!;
    const results: SmokeResult[] = [];
    const run = async (check: string, fn: () => Promise<string>) => {
      let ok = false;
      let detail: string;
      try {
        detail = await fn();
        ok = true;
      } catch (e) {
        detail = (e as Error).message;
      }
      results.push({ check, ok, at: Date.now(), detail });
      step(`smoke ${check}`, ok, detail);
    };
    await run('tenant_read', async () => {
      const t = await one<{ lifecycle_state: string; clients: unknown }>(
        this.ds,
        'SELECT t.lifecycle_state, (SELECT COUNT(*) FROM clients c WHERE c.tenant_id = t.id) AS clients FROM tenants t WHERE t.id = ?',
        [r.tenant_id],
      );
      if (!t) throw new Error('the tenant row is missing');
      if (t.lifecycle_state !== 'recovering')
        throw new Error(`the tenant is ${t.lifecycle_state}, expected recovering`);
      return `tenant readable (recovering) with ${num(t.clients)} clients`;
    });
    await run('write_rollback', async () => {
      const probe = `probe-${randomBytes(12).toString('base64url')}`;
      const find = (db: Db) =>
        one<{ n: unknown }>(
          db,
          "SELECT COUNT(*) AS n FROM tenant_lookup_rows WHERE tenant_id = ? AND lookup_kind = 'probe' AND lookup_key = ?",
          [r.tenant_id, probe],
        );
      let seen = 0;
      try {
        await this.ds.transaction(async (em) => {
          await exec(
            em,
            `INSERT INTO tenant_lookup_rows (tenant_id, registry_generation, route_generation, lookup_kind, lookup_key, source_id, source_created_at, projected_at)
            VALUES (?, -1, ?, 'probe', ?, ?, 0, ?)`,
            [r.tenant_id, num(r.pinned_route_generation), probe, probe, Date.now()],
          );
          seen = num((await find(em))!.n);
          throw new Abort('rollback');
        });
      } catch (e) {
        if (!(e instanceof Abort)) throw e;
      }
      if (seen !== 1) throw new Error('the probe row written in the transaction was not read back');
      if (num((await find(this.ds))!.n) !== 0) throw new Error('the probe row survived its rolled-back transaction');
      return 'probe row written, read back and rolled back';
    });
    await run('signing_key', async () => {
      const signer = await this.keys.signingKey();
      const nonce = randomBytes(16).toString('base64url');
      const jws = signCompact({ alg: signer.alg, kid: signer.kid }, { probe: nonce }, signer.keyObject);
      const jwk = (await this.keys.publicJwks()).keys.find((k) => k.kid === signer.kid);
      if (!jwk) throw new Error(`the active key ${signer.kid} is not published`);
      const { payload } = await compactVerify(jws, (await importJWK(jwk, signer.alg)) as CryptoKey);
      if (JSON.parse(new TextDecoder().decode(payload)).probe !== nonce)
        throw new Error('the verified payload differs');
      return `signed and verified with key ${signer.kid}`;
    });
    return results;
  }

  /**
   * Cancels an open operation: restores nothing; the tenant gets its previous lifecycle state
   * back, the route is published active again, and a half-built registry is removed.
   */
  async cancel(id: string, actor: Actor): Promise<RecoveryView> {
    const r = await this.require(id);
    if (!isOpen(r.state))
      throw new ApiError(409, 'recovery_not_open', `The operation is already ${r.state}.`, { state: r.state });
    const signer = await this.keys.signingKey();
    await this.ds.transaction(async (em) => {
      const now = Date.now();
      const cur = (await this.row(em, id))!;
      if (leaseActive(cur, now))
        throw new ApiError(
          409,
          'verify_in_progress',
          'A verify run is in progress; wait for it to finish, then cancel.',
          { leaseExpiresAt: nn(cur.lease_expires_at) },
        );
      const changed = await exec(
        em,
        `UPDATE tenant_recovery_operations SET state = 'cancelled', open_tenant_id = NULL, cancelled_at = ?, lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
        WHERE id = ? AND state = ? AND (lease_expires_at IS NULL OR lease_expires_at <= ?)`,
        [now, now, id, cur.state, now],
      );
      if (changed !== 1)
        throw new ApiError(409, 'recovery_not_open', 'The operation changed while cancelling; show it and retry.');
      await exec(em, 'UPDATE tenants SET lifecycle_state = ?, updated_at = ? WHERE id = ? AND lifecycle_state = ?', [
        cur.previous_lifecycle_state,
        now,
        cur.tenant_id,
        'recovering',
      ]);
      const route = await one<RouteRow>(em, 'SELECT * FROM tenant_routes WHERE tenant_id = ?', [cur.tenant_id]);
      let runtime: number | null = null;
      if (route && route.state === 'deny') {
        runtime = await this.publish(
          em,
          signer,
          route,
          {
            state: 'active',
            registryGeneration: num(route.registry_generation),
            registryDigest: route.registry_digest,
            operationId: id,
          },
          now,
        );
      }
      await exec(em, 'DELETE FROM tenant_lookup_rows WHERE tenant_id = ? AND registry_generation > ?', [
        cur.tenant_id,
        num(cur.deny_registry_generation),
      ]);
      await audit(em, actor, {
        tenantId: cur.tenant_id,
        action: 'tenant.recovery.cancel',
        targetType: 'tenant_recovery',
        targetId: id,
        summary: {
          before: { state: cur.state, lifecycle_state: 'recovering' },
          after: {
            state: 'cancelled',
            lifecycle_state: cur.previous_lifecycle_state,
            route_state: 'active',
            runtime_generation: runtime,
          },
          request_id: actor.requestId ?? null,
        },
      });
    });
    return toRecoveryView((await this.row(this.ds, id))!, Date.now(), 0);
  }

  /**
   * Reactivates a recovered tenant: checks the confirmation, then the preconditions, then in
   * one transaction (a conditional UPDATE on the operation picks one winner) publishes the
   * pinned route generation as active with a signed route publication, gives the tenant its
   * previous lifecycle state back, retires the pre-deny registry and writes the audit event.
   */
  async reactivate(
    id: string,
    confirmation: string,
    actor: Actor,
    stabilizationFloorSeconds: number,
  ): Promise<{ recovery: RecoveryView; auditId: string }> {
    const r = await this.require(id);
    if (confirmation !== confirmationFor(r.tenant_id)) {
      throw new ApiError(
        422,
        'confirmation_mismatch',
        `confirmation must equal ${CONFIRMATION_FORMAT} with the recovered tenant's identifier substituted.`,
        { expectedFormat: CONFIRMATION_FORMAT, field: 'confirmation' },
      );
    }
    const check = (row: OpRow, now: number) => {
      if (row.state === 'reactivated' || row.state === 'cancelled') {
        throw new ApiError(409, 'recovery_not_reactivatable', `The operation is already ${row.state}.`, {
          state: row.state,
        });
      }
      if (leaseActive(row, now))
        throw new ApiError(409, 'verify_in_progress', 'A verify run is in progress; reactivate after it finishes.', {
          leaseExpiresAt: nn(row.lease_expires_at),
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
    const signer = await this.keys.signingKey();
    const auditId = await this.ds.transaction(async (em) => {
      const now = Date.now();
      const cur = (await this.row(em, id))!;
      check(cur, now);
      // The registry the digest was pinned over must still describe the tenant.
      const sources = await this.sourceCount(cur.tenant_id, em);
      if (sources !== num(cur.lookup_projected_rows)) {
        throw new ApiError(
          409,
          'lookup_not_reprojected',
          `The tenant now has ${sources} clients and users but ${num(cur.lookup_projected_rows)} were reprojected: run \`iam recovery verify\` again.`,
          {
            state: cur.state,
            unmetPreconditions: ['lookup_not_reprojected'],
            projectedRows: num(cur.lookup_projected_rows),
            sourceRows: sources,
          },
        );
      }
      const route = await one<RouteRow>(em, 'SELECT * FROM tenant_routes WHERE tenant_id = ?', [cur.tenant_id]);
      if (!route || num(route.route_generation) !== num(cur.pinned_route_generation)) {
        throw new ApiError(
          409,
          'route_conflict',
          "The tenant's route is no longer at the pinned generation; cancel and start a new recovery.",
        );
      }
      const runtime = num(route.runtime_generation) + 1;
      const won = await exec(
        em,
        `UPDATE tenant_recovery_operations SET state = 'reactivated', open_tenant_id = NULL, reactivated_at = ?, reactivated_runtime_generation = ?,
          last_error_code = NULL, updated_at = ? WHERE id = ? AND state = 'stabilizing' AND binding_smoke_verified_at = ?`,
        [now, runtime, now, id, num(cur.binding_smoke_verified_at)],
      );
      if (won !== 1)
        throw new ApiError(
          409,
          'recovery_not_reactivatable',
          'Another request reactivated (or changed) this operation at the same time.',
        );
      const published = await this.publish(
        em,
        signer,
        route,
        {
          state: 'active',
          registryGeneration: num(cur.lookup_registry_generation),
          registryDigest: cur.registry_digest,
          operationId: id,
        },
        now,
      );
      if (published !== runtime) throw new Error('runtime generation drifted inside the transaction');
      const moved = await exec(
        em,
        'UPDATE tenants SET lifecycle_state = ?, updated_at = ? WHERE id = ? AND lifecycle_state = ?',
        [cur.previous_lifecycle_state, now, cur.tenant_id, 'recovering'],
      );
      if (moved !== 1)
        throw new ApiError(409, 'tenant_not_recovering', 'The tenant is no longer in the recovering state.');
      // The pre-deny registry is replaced by the verified one.
      await exec(em, 'DELETE FROM tenant_lookup_rows WHERE tenant_id = ? AND registry_generation <> ?', [
        cur.tenant_id,
        num(cur.lookup_registry_generation),
      ]);
      return audit(em, actor, {
        tenantId: cur.tenant_id,
        action: 'tenant.recovery.reactivate',
        targetType: 'tenant_recovery',
        targetId: id,
        summary: {
          before: {
            state: cur.state,
            lifecycle_state: 'recovering',
            route_state: route.state,
            runtime_generation: num(route.runtime_generation),
          },
          after: {
            state: 'reactivated',
            lifecycle_state: cur.previous_lifecycle_state,
            route_state: 'active',
            runtime_generation: runtime,
          },
          pinned_route_generation: num(cur.pinned_route_generation),
          registry_generation: num(cur.lookup_registry_generation),
          registry_digest: cur.registry_digest,
          restore_reference: cur.restore_reference,
          request_id: actor.requestId ?? null,
        },
      });
    });
    return { recovery: toRecoveryView((await this.row(this.ds, id))!, Date.now(), stabilizationFloorSeconds), auditId };
  }

  /** The tenant's current route and its latest signed publication. */
  async route(tenantId: string): Promise<{ route: RouteView; publication: PublicationView | null }> {
    const r = await one<RouteRow>(this.ds, 'SELECT * FROM tenant_routes WHERE tenant_id = ?', [tenantId]);
    if (!r) throw notFound(`A route for tenant ${tenantId}`);
    const p = await one<{
      id: string;
      route_generation: unknown;
      runtime_generation: unknown;
      state: string;
      registry_digest: string | null;
      operation_id: string | null;
      published_at: unknown;
      jws: string;
    }>(
      this.ds,
      'SELECT * FROM tenant_route_publications WHERE tenant_id = ? ORDER BY runtime_generation DESC LIMIT 1',
      [tenantId],
    );
    return {
      route: {
        tenantId,
        routeGeneration: num(r.route_generation),
        state: r.state,
        runtimeGeneration: num(r.runtime_generation),
        registryGeneration: num(r.registry_generation),
        registryDigest: r.registry_digest,
        updatedAt: num(r.updated_at),
      },
      publication: p
        ? {
            publicationId: p.id,
            routeGeneration: num(p.route_generation),
            runtimeGeneration: num(p.runtime_generation),
            state: p.state,
            registryDigest: p.registry_digest,
            operationId: p.operation_id,
            publishedAt: num(p.published_at),
            jws: p.jws,
          }
        : null,
    };
  }
}
