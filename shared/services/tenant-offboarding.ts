/**
 * Offboarding a tenant (docs/tenant-lifecycle.md, "Offboarding"): a typed confirmation moves it
 * from `active` or `suspended` to `pending_deletion` with a `purge_after` (now + the grace,
 * IAM_TENANT_PURGE_GRACE_SECONDS); sign-in, tokens, introspection and its admins' bearer tokens
 * are refused as for `suspended` (every one of them requires `active`). A restore within the
 * grace takes it back to the state it came from. Past the grace the purge job moves it to
 * `purging` (no way back from here) and deletes every row it owns in bounded batches, each one
 * statement, so a purge cut short by a crash or a stop resumes at the next run; then the tenant
 * row stays as a `deleted` tombstone. The audit log stays (TENANT_ROWS_KEPT).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Tenant } from '../db/entities.js';
import type { Database } from '../db/index.js';
import { ApiError, notFound } from '../errors.js';
import { TenantDirectoryRows, TenantScope } from '../repositories/index.js';
import { audit, type Actor } from './audit.js';

/** The states an offboarding applies to; a restore goes back to the one recorded. */
export const OFFBOARD_FROM = ['active', 'suspended'] as const;
/** Default grace before the purge: 7 days. */
export const DEFAULT_PURGE_GRACE_SECONDS = 7 * 86_400;
/** Rows deleted per statement by the purge. */
export const PURGE_BATCH_ROWS = 500;

export interface OffboardRequest {
  /** Must equal the tenant's name exactly: the typed confirmation. */
  confirm: string;
  reason?: string;
}

export interface PurgeReport {
  /** Tenants that reached `deleted` in this run. */
  purged: string[];
  /** Rows deleted in this run (all tenants). */
  rows: number;
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

export class TenantOffboarding {
  constructor(
    private readonly ds: Database,
    private readonly graceSeconds: number,
  ) {}

  /** 404 for no such tenant; 400 `confirmation_mismatch`; 409 `lifecycle_move_not_allowed`. */
  async offboard(id: string, req: OffboardRequest, actor: Actor): Promise<Tenant> {
    return this.ds.transaction(async (tx) => {
      const rows = new TenantDirectoryRows(tx);
      const t = await rows.get(id);
      if (!t) throw notFound(`Tenant ${id}`);
      // Compared by digest in constant time: the same answer time whatever the prefix matched.
      if (!timingSafeEqual(digest(req.confirm), digest(t.name))) {
        throw new ApiError(400, 'confirmation_mismatch', "body.confirm must be the tenant's name, exactly.", {
          details: [{ field: 'body.confirm', message: "must equal the tenant's name" }],
        });
      }
      if (!(OFFBOARD_FROM as readonly string[]).includes(t.lifecycle_state)) {
        throw new ApiError(
          409,
          'lifecycle_move_not_allowed',
          `A ${t.lifecycle_state} tenant cannot be offboarded (only from ${OFFBOARD_FROM.join(' or ')}).`,
          { lifecycle_state: t.lifecycle_state, updated_at: t.updated_at },
        );
      }
      const now = Math.max(Date.now(), t.updated_at + 1);
      const purgeAfter = now + this.graceSeconds * 1000;
      const moved = await rows.offboard(id, { from: t.lifecycle_state, purgeAfter, now });
      if (moved !== 1) throw new ApiError(409, 'precondition_failed', 'The tenant changed meanwhile; read it again.');
      await audit(tx, actor, {
        tenantId: id,
        action: 'tenant.offboard',
        targetType: 'tenant',
        targetId: id,
        summary: {
          before: { lifecycle_state: t.lifecycle_state },
          after: { lifecycle_state: 'pending_deletion', purge_after: purgeAfter },
          reason: req.reason ?? null,
          request_id: actor.requestId ?? null,
        },
      });
      return (await rows.get(id))!;
    });
  }

  /** 404; 409 `grace_period_over` past purge_after, `lifecycle_move_not_allowed` when not offboarded. */
  async restore(id: string, actor: Actor): Promise<Tenant> {
    return this.ds.transaction(async (tx) => {
      const rows = new TenantDirectoryRows(tx);
      const t = await rows.get(id);
      if (!t) throw notFound(`Tenant ${id}`);
      const now = Math.max(Date.now(), t.updated_at + 1);
      const current = { lifecycle_state: t.lifecycle_state, purge_after: t.purge_after ?? null };
      if (t.lifecycle_state !== 'pending_deletion') {
        throw new ApiError(
          409,
          'lifecycle_move_not_allowed',
          `A ${t.lifecycle_state} tenant cannot be restored (only from pending_deletion).`,
          current,
        );
      }
      const to = t.offboarded_from === 'suspended' ? 'suspended' : 'active';
      if ((await rows.restore(id, { to, now })) !== 1) {
        throw new ApiError(
          409,
          'grace_period_over',
          'The grace period is over: the tenant is due for the purge and can no longer be restored.',
          current,
        );
      }
      await audit(tx, actor, {
        tenantId: id,
        action: 'tenant.restore',
        targetType: 'tenant',
        targetId: id,
        summary: {
          before: current,
          after: { lifecycle_state: to },
          request_id: actor.requestId ?? null,
        },
      });
      return (await rows.get(id))!;
    });
  }

  /**
   * The purge job's run: tenants past their grace (and any whose purge was cut short), each
   * moved to `purging`, emptied batch by batch, then left as a `deleted` tombstone. Stops between
   * statements when `signal` aborts or after `maxBatches` statements; the next run resumes.
   */
  async purgeDue(opts: { signal?: AbortSignal; maxBatches?: number; batchRows?: number } = {}): Promise<PurgeReport> {
    const report: PurgeReport = { purged: [], rows: 0 };
    let budget = opts.maxBatches ?? 2_000;
    const system: Actor = { type: 'system', id: 'tenant-purge' };
    for (const q of await new TenantDirectoryRows(this.ds).purgeQueue(Date.now(), 20)) {
      if (opts.signal?.aborted || budget <= 0) break;
      if (q.lifecycle_state === 'pending_deletion') {
        const started = await this.ds.transaction(async (tx) => {
          const now = Date.now();
          if ((await new TenantDirectoryRows(tx).startPurge(q.id, now)) !== 1) return false;
          await audit(tx, system, {
            tenantId: q.id,
            action: 'tenant.purge_start',
            targetType: 'tenant',
            targetId: q.id,
            summary: { before: { lifecycle_state: 'pending_deletion' }, after: { lifecycle_state: 'purging' } },
          });
          return true;
        });
        // Restored (or taken by another node) between the queue's read and now.
        if (!started) continue;
      }
      const data = new TenantScope(this.ds, q.id).tenantData;
      let done = false;
      while (!opts.signal?.aborted && budget-- > 0) {
        const { deleted } = await data.purgeBatch(opts.batchRows ?? PURGE_BATCH_ROWS);
        report.rows += deleted;
        if (deleted === 0) {
          done = true;
          break;
        }
      }
      if (!done) break;
      await this.ds.transaction(async (tx) => {
        if ((await new TenantDirectoryRows(tx).finishPurge(q.id, Date.now())) !== 1) return;
        await audit(tx, system, {
          tenantId: q.id,
          action: 'tenant.purge',
          targetType: 'tenant',
          targetId: q.id,
          summary: { before: { lifecycle_state: 'purging' }, after: { lifecycle_state: 'deleted' } },
        });
        report.purged.push(q.id);
      });
    }
    return report;
  }
}
