/**
 * Disaster recovery of one tenant (docs/recovery.md). The platform operator drives an
 * operation with `iam recovery …` on a host that reaches the database; the reactivation is
 * the HTTP endpoint POST /api/admin/platform/control-plane/tenant-recovery/{id}/reactivate.
 * The states and what may happen next are in state-machine.ts; the signed route publications,
 * the verify checks and the lookup reprojection in effects.ts; the verify run in verify.ts and
 * the reactivation in reactivate.ts.
 *
 * Every move is a conditional UPDATE on the operation's state (one winner), committed with its
 * side effects (tenant state, route, signed route publication) and its audit event. A verify
 * step that fails stores its error code and a sanitised cause (shared/services/failure.ts).
 */
import { isUniqueViolation, type Database, type Db } from '../../db/index.js';
import { ApiError, notFound } from '../../errors.js';
import {
  OperationLookups,
  TenantRepository,
  TenantScope,
  type RecoveryOperationRow,
} from '../../repositories/index.js';
import { audit, type Actor } from '../audit.js';
import { sanitizedCause } from '../failure.js';
import type { IdempotencyHandle } from '../idempotency.js';
import type { KeyService } from '../keys.js';
import { manifestDigest, MIGRATION_STREAM_ID, RecoveryEffects } from './effects.js';
import { DENY_DRAIN_MS, isOpen, leaseActive } from './state-machine.js';
import {
  targetsOf,
  toDetails,
  toPublicationView,
  toRecoveryView,
  toRouteView,
  type PublicationView,
  type RecoveryDetails,
  type RecoveryTarget,
  type RecoveryView,
  type RouteView,
  type SmokeResult,
} from './views.js';
import { reactivateOperation } from './reactivate.js';
import { runVerify, type VerifyOptions } from './verify.js';

/** The binding the operator's process is connected to, described without secrets. */
export interface BindingDescription {
  bindingRef: string;
  providerDatabaseId: string;
  releaseId: string;
}

export class RecoveryService {
  private readonly effects: RecoveryEffects;
  private readonly lookups: OperationLookups;

  constructor(
    private readonly ds: Database,
    private readonly keys: KeyService,
    issuer: string,
  ) {
    this.effects = new RecoveryEffects(ds, keys, issuer);
    this.lookups = new OperationLookups(ds);
  }

  /** The scope of the tenant an operation id names; 404 for an unknown operation. */
  private async scopeOf(id: string): Promise<TenantScope> {
    const tenantId = await this.lookups.recoveryTenant(id);
    if (!tenantId) throw notFound(`Recovery operation ${id}`);
    return new TenantScope(this.ds, tenantId);
  }

  private async require(id: string): Promise<{ scope: TenantScope; row: RecoveryOperationRow }> {
    const scope = await this.scopeOf(id);
    const row = await scope.recoveryOperations.get(id);
    if (!row) throw notFound(`Recovery operation ${id}`);
    return { scope, row };
  }

  private async current(scope: TenantScope, id: string, floorSeconds = 0): Promise<RecoveryView> {
    return toRecoveryView((await scope.recoveryOperations.get(id))!, Date.now(), floorSeconds);
  }

  async get(id: string, floorSeconds: number): Promise<{ recovery: RecoveryView; details: RecoveryDetails }> {
    const { row } = await this.require(id);
    return { recovery: toRecoveryView(row, Date.now(), floorSeconds), details: toDetails(row, floorSeconds) };
  }

  /** One tenant's operations, or (no tenant) every tenant's, oldest first. */
  async list(tenantId: string | undefined, floorSeconds: number): Promise<RecoveryView[]> {
    let rows: RecoveryOperationRow[];
    if (tenantId) rows = await new TenantScope(this.ds, tenantId).recoveryOperations.list();
    else {
      rows = [];
      for (const ref of await this.lookups.recoveryOperations()) {
        const row = await new TenantScope(this.ds, ref.tenantId).recoveryOperations.get(ref.id);
        if (row) rows.push(row);
      }
    }
    const now = Date.now();
    return rows.map((r) => toRecoveryView(r, now, floorSeconds));
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
    if (!(await new TenantRepository(this.ds).lifecycle(tenantId))) throw notFound(`Tenant ${tenantId}`);
    const scope = new TenantScope(this.ds, tenantId);
    const signer = await this.keys.signingKey();
    let opId: string;
    let resumed = false;
    const open = await scope.recoveryOperations.open();
    if (open) {
      if (open.state !== 'publishing_deny') {
        throw new ApiError(
          409,
          'recovery_already_open',
          `Recovery operation ${open.id} is already open for this tenant (state ${open.state}); ` +
            `continue it (see \`iam recovery show --operation ${open.id}\`) or cancel it first.`,
          { operationId: open.id, state: open.state },
        );
      }
      opId = open.id;
      resumed = true;
    } else {
      try {
        opId = await this.ds.transaction(async (tx) => {
          const s = scope.in(tx);
          const tenants = new TenantRepository(tx);
          const now = Date.now();
          const t = await tenants.lifecycle(tenantId);
          if (!t) throw notFound(`Tenant ${tenantId}`);
          if (t.lifecycle_state !== 'active' && t.lifecycle_state !== 'suspended') {
            throw new ApiError(
              409,
              'tenant_not_recoverable',
              `The tenant is ${t.lifecycle_state}; only an active or suspended tenant can be recovered.`,
              { lifecycle_state: t.lifecycle_state },
            );
          }
          const seq = await s.recoveryOperations.nextSeq();
          const id = `dr_${tenantId}_${seq}`;
          let route = await s.routes.get();
          if (!route) {
            await s.routes.createInitial(now);
            route = (await s.routes.get())!;
          }
          const moved = await tenants.moveLifecycle(tenantId, { from: t.lifecycle_state, to: 'recovering', now });
          if (moved !== 1)
            throw new ApiError(
              409,
              'tenant_state_changed',
              "The tenant's state changed while starting the recovery; retry.",
            );
          const denyRegistry = route.registry_generation;
          const denyRuntime = await this.effects.publish(
            s,
            signer,
            route,
            { state: 'deny', registryGeneration: denyRegistry, registryDigest: route.registry_digest, operationId: id },
            now,
          );
          const target: RecoveryTarget = {
            shardId: 'primary',
            dataRole: 'primary',
            residencyPartition: 'default',
            bindingRef: input.binding.bindingRef,
            providerDatabaseId: input.binding.providerDatabaseId,
            migrationStreamId: MIGRATION_STREAM_ID,
            releaseId: input.binding.releaseId,
            manifestDigest: manifestDigest(),
            assignmentGeneration: route.route_generation,
            shardGeneration: await this.shardGeneration(tx),
            restoreConfirmedAt: null,
            migrationVerifiedAt: null,
            lookupReprojectedAt: null,
            bindingSmokeVerifiedAt: null,
          };
          await s.recoveryOperations.insert({
            id,
            environmentId: input.environmentId,
            seq,
            reason,
            previousLifecycleState: t.lifecycle_state,
            pinnedRouteGeneration: route.route_generation,
            denyRuntimeGeneration: denyRuntime,
            denyRegistryGeneration: denyRegistry,
            lookupRegistryGeneration: denyRegistry + 1,
            targets: [target],
            createdBy: actor.id,
            now,
          });
          await audit(tx, actor, {
            tenantId,
            action: 'tenant.recovery.start',
            targetType: 'tenant_recovery',
            targetId: id,
            summary: {
              reason,
              before: {
                lifecycle_state: t.lifecycle_state,
                route_state: route.state,
                runtime_generation: route.runtime_generation,
              },
              after: { lifecycle_state: 'recovering', route_state: 'deny', runtime_generation: denyRuntime },
              pinned_route_generation: route.route_generation,
              request_id: actor.requestId ?? null,
            },
          });
          return id;
        });
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        // Another operator started one at the same moment: theirs is the open one.
        const other = await scope.recoveryOperations.open();
        throw new ApiError(
          409,
          'recovery_already_open',
          `Recovery operation ${other?.id ?? '(unknown)'} was started for this tenant at the same time; ` +
            'continue that one.',
          { operationId: other?.id ?? null },
        );
      }
    }
    await this.observeDeny(scope, opId);
    return { recovery: await this.current(scope, opId), resumed };
  }

  /** 1 + the restores confirmed on this database so far: the restore epoch of the primary shard. */
  private async shardGeneration(db: Db): Promise<number> {
    return (await new OperationLookups(db).confirmedRestores()) + 1;
  }

  /**
   * Reads the deny back after its commit (what every daemon now sees) and moves the operation
   * to `awaiting_restore`, with the drain deadline after which the restore may be confirmed.
   */
  private async observeDeny(scope: TenantScope, id: string): Promise<void> {
    const r = (await scope.recoveryOperations.get(id))!;
    if (r.state !== 'publishing_deny') return;
    const seen = await scope.routes.observed();
    if (
      !seen ||
      seen.state !== 'deny' ||
      seen.runtime_generation < (r.deny_runtime_generation ?? 0) ||
      seen.lifecycle_state !== 'recovering'
    ) {
      const found = seen
        ? `route ${seen.state} at runtime generation ${seen.runtime_generation}, tenant ${seen.lifecycle_state}`
        : 'no route';
      const cause = sanitizedCause(
        `expected a deny at runtime generation ${r.deny_runtime_generation} and the tenant recovering; ` +
          `the database holds ${found}`,
      );
      await scope.recoveryOperations.denyNotObserved(id, cause, Date.now());
      throw new ApiError(
        409,
        'deny_not_observed',
        'The deny route publication is not what the database now holds; ' +
          'see `iam recovery show` and cancel the operation.',
      );
    }
    const now = Date.now();
    await scope.recoveryOperations.denyObserved(id, now, now + DENY_DRAIN_MS);
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
    const { scope, row: r } = await this.require(id);
    if (r.state === 'publishing_deny') await this.observeDeny(scope, id);
    const cur = (await scope.recoveryOperations.get(id))!;
    if (cur.state !== 'awaiting_restore') {
      throw new ApiError(
        409,
        isOpen(cur.state) ? 'restore_already_confirmed' : 'recovery_not_open',
        `The operation is ${cur.state}; a restore can be confirmed only while it is awaiting_restore.`,
        { state: cur.state },
      );
    }
    const now = Date.now();
    const drain = cur.drain_not_before ?? 0;
    if (now < drain) {
      throw new ApiError(
        409,
        'drain_pending',
        "The deny is still draining from the daemons' caches; " +
          `confirm the restore at or after ${new Date(drain).toISOString()}.`,
        { notBefore: drain, retryAfterSeconds: Math.ceil((drain - now) / 1000) },
      );
    }
    await this.ds.transaction(async (tx) => {
      const shardGeneration = await this.shardGeneration(tx);
      const targets = targetsOf(cur).map((t) => ({ ...t, shardGeneration, restoreConfirmedAt: now }));
      if ((await scope.in(tx).recoveryOperations.restoreConfirmed(id, ref, targets, now)) !== 1)
        throw new ApiError(
          409,
          'restore_already_confirmed',
          'The restore was confirmed by another run at the same time.',
        );
      await audit(tx, actor, {
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
    return this.current(scope, id);
  }

  /** Runs the verification (verify.ts); on success the operation is `stabilizing`. */
  async verify(
    id: string,
    opts: VerifyOptions,
    actor: Actor,
  ): Promise<{ recovery: RecoveryView; smokeChecks: SmokeResult[] }> {
    const { scope, row } = await this.require(id);
    const smokeChecks = await runVerify({ ds: this.ds, effects: this.effects }, scope, id, row, opts, actor);
    return { recovery: await this.current(scope, id, opts.stabilizationSeconds), smokeChecks };
  }

  /**
   * Cancels an open operation: restores nothing; the tenant gets its previous lifecycle state
   * back, the route is published active again, and a half-built registry is removed.
   */
  async cancel(id: string, actor: Actor): Promise<RecoveryView> {
    const { scope, row: r } = await this.require(id);
    if (!isOpen(r.state))
      throw new ApiError(409, 'recovery_not_open', `The operation is already ${r.state}.`, { state: r.state });
    const signer = await this.keys.signingKey();
    await this.ds.transaction(async (tx) => {
      const s = scope.in(tx);
      const now = Date.now();
      const cur = (await s.recoveryOperations.get(id))!;
      if (leaseActive(cur, now))
        throw new ApiError(
          409,
          'verify_in_progress',
          'A verify run is in progress; wait for it to finish, then cancel.',
          { leaseExpiresAt: cur.lease_expires_at },
        );
      if ((await s.recoveryOperations.cancelled(id, cur.state, now)) !== 1)
        throw new ApiError(409, 'recovery_not_open', 'The operation changed while cancelling; show it and retry.');
      await new TenantRepository(tx).moveLifecycle(cur.tenant_id, {
        from: 'recovering',
        to: cur.previous_lifecycle_state,
        now,
      });
      const route = await s.routes.get();
      let runtime: number | null = null;
      if (route && route.state === 'deny') {
        runtime = await this.effects.publish(
          s,
          signer,
          route,
          {
            state: 'active',
            registryGeneration: route.registry_generation,
            registryDigest: route.registry_digest,
            operationId: id,
          },
          now,
        );
      }
      await s.lookupRows.deleteNewerThan(cur.deny_registry_generation ?? 0);
      await audit(tx, actor, {
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
    return this.current(scope, id);
  }

  /** Reactivates a recovered tenant (reactivate.ts): its route is published active again. */
  async reactivate(
    id: string,
    confirmation: string,
    actor: Actor,
    stabilizationFloorSeconds: number,
    idempotency?: IdempotencyHandle,
  ): Promise<{ recovery: RecoveryView; auditId: string }> {
    const { scope, row } = await this.require(id);
    const deps = { ds: this.ds, keys: this.keys, effects: this.effects };
    return reactivateOperation(deps, scope, id, row, confirmation, actor, stabilizationFloorSeconds, idempotency);
  }

  /** The tenant's current route and its latest signed publication. */
  async route(tenantId: string): Promise<{ route: RouteView; publication: PublicationView | null }> {
    const scope = new TenantScope(this.ds, tenantId);
    const r = await scope.routes.get();
    if (!r) throw notFound(`A route for tenant ${tenantId}`);
    const p = await scope.routes.latestPublication();
    return { route: toRouteView(r), publication: p ? toPublicationView(p) : null };
  }
}
