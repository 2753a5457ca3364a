/**
 * The three phases of a custom claim rename (docs/claims.md, "Rename"), one batch at a time:
 * copy a range of users' values to the new key, switch the schema's key in one transaction with
 * a final catch-up, delete a range of old-key values. Each batch is one transaction that first
 * renews the operation's lease and writes nothing if the lease was lost, so a runner that
 * stalled past its lease leaves the work to the one that took it over. ClaimRenameService
 * (claim-rename.ts) claims an operation and calls these in turn until it ends.
 */
import { isUniqueViolation, retryTransient, type Database, type Db } from '../db/index.js';
import { TenantScope, type ClaimRenameRow } from '../repositories/index.js';
import { audit } from './audit.js';

/** Narrow logger (pino fits). */
export interface ClaimRenameLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** The lease was taken over (it expired while this runner stalled): stop touching the operation. */
export class LeaseLost extends Error {}
/** The key switch cannot happen (the schema changed, or the new key was taken meanwhile). */
class SwitchRefused extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

export class RenamePhases {
  constructor(
    private readonly ds: Database,
    /** The lease holder every write is conditional on (the service's). */
    private readonly holder: string,
    private readonly options: { batchSize: number; leaseMs: number },
    private readonly log?: ClaimRenameLogger,
  ) {}

  private scope(tenantId: string, db: Db = this.ds): TenantScope {
    return new TenantScope(db, tenantId);
  }

  /** Renews the lease inside the batch's transaction; a lost lease rolls the batch back. */
  private async hold(scope: TenantScope, op: ClaimRenameRow, state: ClaimRenameRow['state']): Promise<void> {
    const now = Date.now();
    if ((await scope.claimRenames.hold(op.id, this.holder, state, now + this.options.leaseMs, now)) !== 1) {
      throw new LeaseLost();
    }
  }

  /** Phase 1: one batch, one transaction; when nothing is left, the operation moves to `switching`. */
  async copyBatch(tenantId: string, op: ClaimRenameRow): Promise<void> {
    await retryTransient(() =>
      this.ds.transaction(async (tx) => {
        const scope = this.scope(tenantId, tx);
        await this.hold(scope, op, 'copying');
        const after = op.checkpoint ?? '';
        const users = await scope.claimRenames.usersAfter(op.old_key, after, this.options.batchSize);
        const now = Date.now();
        if (users.length === 0) {
          await scope.claimRenames.moveState(op.id, this.holder, 'copying', 'switching', now);
          return;
        }
        const last = users[users.length - 1];
        const copied = await scope.claimRenames.copyRange(op.old_key, op.new_key, after, last);
        if ((await scope.claimRenames.advanceCopy(op.id, this.holder, last, copied, now)) !== 1) throw new LeaseLost();
      }),
    );
  }

  /** Phase 2, in one transaction: final catch-up, the key switch, the operation to `cleanup`. */
  async switchKey(tenantId: string, op: ClaimRenameRow): Promise<void> {
    try {
      await retryTransient(() =>
        this.ds.transaction(async (tx) => {
          const scope = this.scope(tenantId, tx);
          const renames = scope.claimRenames;
          await this.hold(scope, op, 'switching');
          const now = Date.now();
          // The schema row first: its lock orders this transaction after any write of a value
          // that read the old key (the custom claims service reads the schema with a lock).
          let switched: number;
          try {
            switched = await renames.switchKey(op.schema_id, op.old_key, op.new_key, now);
          } catch (e) {
            if (isUniqueViolation(e)) throw new SwitchRefused('claim_key_conflict');
            throw e;
          }
          if (switched !== 1) throw new SwitchRefused('schema_changed');
          const fixed = await renames.reconcile(op.old_key, op.new_key);
          if ((await renames.moveState(op.id, this.holder, 'switching', 'cleanup', now)) !== 1) throw new LeaseLost();
          this.log?.info(
            { operation_id: op.id, tenant_id: tenantId, caught_up: fixed },
            'claim rename switched to the new key',
          );
        }),
      );
    } catch (e) {
      if (!(e instanceof SwitchRefused)) throw e;
      await this.fail(tenantId, op, e.code);
    }
  }

  /** A rename that cannot switch: its copies go, the schema keeps its key and is `active` again. */
  private async fail(tenantId: string, op: ClaimRenameRow, code: string): Promise<void> {
    await retryTransient(() =>
      this.ds.transaction(async (tx) => {
        const scope = this.scope(tenantId, tx);
        const renames = scope.claimRenames;
        const now = Date.now();
        // The copies are ours only while no schema has the new key.
        if (!(await renames.keyInUse(op.new_key))) await renames.deleteAll(op.new_key);
        if ((await renames.finish(op.id, this.holder, 'switching', 'failed', code, now)) !== 1) throw new LeaseLost();
        await renames.markActive(op.schema_id, now);
        await renames.unreserve(op.id);
        await audit(
          tx,
          { type: 'system', id: 'claim-rename' },
          {
            tenantId,
            action: 'custom_claim.rename.failed',
            targetType: 'custom_claim_schema',
            targetId: op.schema_id,
            outcome: 'failure',
            summary: { operation_id: op.id, error_code: code },
          },
        );
      }),
    );
    this.log?.warn({ operation_id: op.id, tenant_id: tenantId, error_code: code }, 'claim rename failed');
  }

  /** Cleanup: one batch of old-key rows deleted; when none is left, the operation completes (returns true). */
  async cleanupBatch(tenantId: string, op: ClaimRenameRow): Promise<boolean> {
    let ended = false;
    await retryTransient(() =>
      this.ds.transaction(async (tx) => {
        ended = false;
        const scope = this.scope(tenantId, tx);
        const renames = scope.claimRenames;
        await this.hold(scope, op, 'cleanup');
        const now = Date.now();
        const users = await renames.usersAfter(op.old_key, '', this.options.batchSize);
        if (users.length > 0) {
          const last = users[users.length - 1];
          const deleted = await renames.deleteRange(op.old_key, '', last);
          if ((await renames.advanceCleanup(op.id, this.holder, last, deleted, now)) !== 1) throw new LeaseLost();
          return;
        }
        if ((await renames.finish(op.id, this.holder, 'cleanup', 'completed', null, now)) !== 1) throw new LeaseLost();
        await renames.markActive(op.schema_id, now);
        await renames.unreserve(op.id);
        ended = true;
      }),
    );
    if (ended) this.log?.info({ operation_id: op.id, tenant_id: tenantId }, 'claim rename completed');
    return ended;
  }
}
