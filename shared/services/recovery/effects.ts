/**
 * What the recovery steps do besides moving the operation's state (docs/recovery.md):
 * - route publication signing: a new runtime generation of the tenant's route, with a JWS over
 *   it signed by the service's active key (verifiable at /jwks);
 * - the verify run's checks: the schema against the manifest pinned at start, the lookup
 *   reprojection (resumable keyset batches, counted back, digested), the binding smoke checks.
 * A verify step persists its progress through the operation's lease (`lease_owner`), so a run
 * that lost the lease changes nothing and fails with 409 `verify_lease_lost`.
 */
import { createHash, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { compactVerify, importJWK, type CryptoKey } from 'jose';
import { migrations } from '../../../migrations/index.js';
import type { Database, Db } from '../../db/index.js';
import { ApiError } from '../../errors.js';
import { signCompact } from '../../jws.js';
import {
  ServiceMetaRepository,
  TenantScope,
  type RecoveryOperationRow,
  type RouteRow,
} from '../../repositories/index.js';
import type { KeyService } from '../keys.js';
import { VERIFY_LEASE_MS, type LookupStage } from './state-machine.js';
import { targetsOf, type SmokeResult } from './views.js';

export const ROUTE_PUBLICATION_TYP = 'route-publication+jwt';
export const MIGRATION_STREAM_ID = 'iam-core';

/** sha256 of the ordered migration names this release applies: the schema manifest. */
export function manifestDigest(names: string[] = migrations.map((M) => new M().name)): string {
  return `sha256:${createHash('sha256').update(names.join('\n')).digest('hex')}`;
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

export interface VerifyProgress {
  stage: LookupStage;
  batch: number;
  rows: number;
  projectedRows: number;
  verifiedRows: number;
}

/** A verify step's report to the operator: its name, whether it passed, what it found. */
export type StepReporter = (step: string, ok: boolean, detail: string) => void;

export type Signer = { keyObject: KeyObject; kid: string; alg: string };

class Abort extends Error {}

const leaseLost = () =>
  new ApiError(409, 'verify_lease_lost', 'This verify run lost its lease to another run; run verify again.');

export class RecoveryEffects {
  constructor(
    private readonly db: Database,
    private readonly keys: KeyService,
    private readonly issuer: string,
  ) {}

  // ---- route publication ----------------------------------------------------------------

  /** Signs a route publication with the service's active signing key (verifiable at /jwks). */
  private sign(signer: Signer, publicationId: string, claims: RoutePublicationClaims, nowMs: number): string {
    return signCompact(
      { alg: signer.alg, kid: signer.kid, typ: ROUTE_PUBLICATION_TYP },
      { ...claims, iss: this.issuer, jti: publicationId, iat: Math.floor(nowMs / 1000) },
      signer.keyObject,
    );
  }

  /**
   * Writes the next runtime generation of the tenant's route and its signed publication, with
   * `scope` inside the caller's transaction. 409 `route_conflict` if the route moved meanwhile.
   */
  async publish(
    scope: TenantScope,
    signer: Signer,
    route: RouteRow,
    next: { state: 'active' | 'deny'; registryGeneration: number; registryDigest: string | null; operationId: string },
    now: number,
  ): Promise<number> {
    const runtime = route.runtime_generation + 1;
    const changed = await scope.routes.advance(
      { routeGeneration: route.route_generation, runtimeGeneration: route.runtime_generation },
      {
        state: next.state,
        runtimeGeneration: runtime,
        registryGeneration: next.registryGeneration,
        registryDigest: next.registryDigest,
      },
      now,
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
      route_generation: route.route_generation,
      runtime_generation: runtime,
      registry_generation: next.registryGeneration,
      state: next.state,
      registry_digest: next.registryDigest,
      operation_id: next.operationId,
    };
    await scope.routes.insertPublication({
      id,
      route_generation: route.route_generation,
      runtime_generation: runtime,
      state: next.state,
      registry_digest: next.registryDigest,
      jws: this.sign(signer, id, claims, now),
      operation_id: next.operationId,
      published_at: now,
    });
    return runtime;
  }

  // ---- verify step 1: the schema --------------------------------------------------------

  /** Every migration this release knows is applied, and in the manifest recorded at start. */
  async verifyMigrations(scope: TenantScope, r: RecoveryOperationRow, owner: string, step: StepReporter) {
    const target = targetsOf(r)[0];
    const applied = await new ServiceMetaRepository(this.db).appliedMigrations();
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
        `The applied migrations (${appliedDigest}) are not the manifest recorded when the operation started ` +
          `(${target.manifestDigest}, release ${target.releaseId}); ` +
          'run verify with that release, or cancel and start again.',
      );
    }
    const now = Date.now();
    const targets = targetsOf(r).map((t) => ({ ...t, migrationVerifiedAt: now }));
    await scope.recoveryOperations.migrationsVerified(r.id, owner, targets, now + VERIFY_LEASE_MS, now);
    step('migrations', true, `${applied.length} applied, manifest ${target.manifestDigest}`);
  }

  // ---- verify step 2: the lookup reprojection --------------------------------------------

  /** Stage by stage, persisting the cursor after every batch, so an interrupted run resumes. */
  async reproject(
    scope: TenantScope,
    id: string,
    owner: string,
    batch: number,
    progress: (p: VerifyProgress) => void,
    step: StepReporter,
  ): Promise<void> {
    const ops = scope.recoveryOperations;
    let n = 0;
    for (;;) {
      const r = (await ops.get(id))!;
      if (r.lease_owner !== owner) throw leaseLost();
      const gen = r.lookup_registry_generation;
      const report = (rows: number, cur: RecoveryOperationRow) =>
        progress({
          stage: r.lookup_stage as LookupStage,
          batch: ++n,
          rows,
          projectedRows: cur.lookup_projected_rows,
          verifiedRows: cur.lookup_verified_rows,
        });
      if (r.lookup_stage === 'pending') {
        await ops.scanStarted(id, owner, Date.now());
        continue;
      }
      if (r.lookup_stage === 'scan') {
        const afterAt = r.lookup_after_created_at;
        const afterId = r.lookup_after_id;
        const rows = await scope.lookupRows.sourcesAfter(afterAt, afterId, batch);
        const now = Date.now();
        await this.db.transaction(async (tx) => {
          const s = scope.in(tx);
          await s.lookupRows.insert(rows, gen, r.pinned_route_generation, now);
          const last = rows[rows.length - 1];
          const changed = await s.recoveryOperations.scanned(id, owner, {
            afterCreatedAt: last ? last.created_at : afterAt,
            afterId: last ? last.id : afterId,
            rows: rows.length,
            stage: rows.length < batch ? 'verify' : 'scan',
            leaseUntil: now + VERIFY_LEASE_MS,
            now,
          });
          if (changed !== 1) throw leaseLost();
        });
        report(rows.length, (await ops.get(id))!);
        continue;
      }
      if (r.lookup_stage === 'verify') {
        // Count the projected rows back, each confirmed against its source row.
        const rows = await scope.lookupRows.confirmAfter(gen, r.lookup_after_row_id, batch);
        const confirmed = rows.reduce((a, x) => a + x.confirmed, 0);
        const now = Date.now();
        const done = rows.length < batch;
        const last = rows[rows.length - 1];
        const changed = await ops.counted(id, owner, {
          afterRowId: last ? last.row_id : r.lookup_after_row_id,
          confirmed,
          leaseUntil: now + VERIFY_LEASE_MS,
          now,
        });
        if (changed !== 1) throw leaseLost();
        const cur = (await ops.get(id))!;
        report(rows.length, cur);
        if (!done) continue;
        const projected = cur.lookup_projected_rows;
        const verified = cur.lookup_verified_rows;
        const sources = await scope.lookupRows.sourceCount();
        if (verified !== projected || projected !== sources) {
          // Start over at a fresh generation on the next run; the rows of this one are
          // abandoned and removed by that run's cleanup.
          await ops.lookupRestarted(id, owner, Date.now());
          step('lookup_reprojection', false, `projected ${projected}, verified ${verified}, sources ${sources}`);
          throw new ApiError(
            409,
            'lookup_count_mismatch',
            `Lookup reprojection counted ${verified} of ${projected} projected rows back ` +
              `against ${sources} source rows; ` +
              'run verify again to reproject.',
            { projectedRows: projected, verifiedRows: verified, sourceRows: sources },
          );
        }
        const digest = await this.registryDigest(scope, gen, batch);
        if ((await ops.digestPinned(id, owner, digest, Date.now())) !== 1) throw leaseLost();
        continue;
      }
      if (r.lookup_stage === 'cleanup') {
        // Rows of abandoned generations (earlier runs of this or a cancelled operation). The
        // generation live before the deny stays until the reactivation switches the route.
        const removed = await scope.lookupRows.deleteAbandoned(gen, r.deny_registry_generation ?? 0);
        const now = Date.now();
        const targets = targetsOf(r).map((t) => ({ ...t, lookupReprojectedAt: now }));
        if ((await ops.lookupDone(id, owner, targets, now)) !== 1) throw leaseLost();
        report(removed, (await ops.get(id))!);
        continue;
      }
      step(
        'lookup_reprojection',
        true,
        `${r.lookup_projected_rows} rows projected and verified at registry generation ${gen}, ` +
          `digest ${r.registry_digest}`,
      );
      return;
    }
  }

  /** sha256 over the registry's rows sorted by (kind, key): one `kind:key=source_id` line each. */
  private async registryDigest(scope: TenantScope, gen: number, batch: number): Promise<string> {
    const h = createHash('sha256');
    let kind = '';
    let key = '';
    for (;;) {
      const rows = await scope.lookupRows.page(gen, kind, key, batch);
      for (const r of rows) h.update(`${r.lookup_kind}:${r.lookup_key}=${r.source_id}\n`);
      if (rows.length < batch) break;
      kind = rows[rows.length - 1].lookup_kind;
      key = rows[rows.length - 1].lookup_key;
    }
    return `sha256:${h.digest('hex')}`;
  }

  // ---- verify step 3: the binding smoke checks ------------------------------------------

  /** Three private checks through the database binding; each result is kept, pass or fail. */
  async smokeChecks(scope: TenantScope, r: RecoveryOperationRow, step: StepReporter): Promise<SmokeResult[]> {
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
      const t = await scope.lookupRows.tenantProbe();
      if (!t) throw new Error('the tenant row is missing');
      if (t.lifecycle_state !== 'recovering')
        throw new Error(`the tenant is ${t.lifecycle_state}, expected recovering`);
      return `tenant readable (recovering) with ${t.clients} clients`;
    });
    await run('write_rollback', async () => {
      const probe = `probe-${randomBytes(12).toString('base64url')}`;
      const count = (db: Db) => new TenantScope(db, r.tenant_id).lookupRows.countProbe(probe);
      let seen = 0;
      try {
        await this.db.transaction(async (tx) => {
          await scope.in(tx).lookupRows.insertProbe(probe, r.pinned_route_generation, Date.now());
          seen = await count(tx);
          throw new Abort('rollback');
        });
      } catch (e) {
        if (!(e instanceof Abort)) throw e;
      }
      if (seen !== 1) throw new Error('the probe row written in the transaction was not read back');
      if ((await count(this.db)) !== 0) throw new Error('the probe row survived its rolled-back transaction');
      return 'probe row written, read back and rolled back';
    });
    await run('signing_key', async () => {
      const signer = await this.keys.signingKey();
      const nonce = randomBytes(16).toString('base64url');
      const jws = signCompact({ alg: signer.alg, kid: signer.kid }, { probe: nonce }, signer.keyObject);
      const jwk = (await this.keys.publicJwks()).keys.find((k) => k.kid === signer.kid);
      if (!jwk) throw new Error(`the active key ${signer.kid} is not published`);
      const { payload } = await compactVerify(jws, (await importJWK(jwk, signer.alg)) as CryptoKey);
      if ((JSON.parse(new TextDecoder().decode(payload)) as { probe?: unknown }).probe !== nonce)
        throw new Error('the verified payload differs');
      return `signed and verified with key ${signer.kid}`;
    });
    return results;
  }
}
