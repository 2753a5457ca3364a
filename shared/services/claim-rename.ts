/**
 * Two-phase, crash-safe rename of a custom claim (docs/claims.md, "Rename").
 *
 * Accepting a rename is one transaction: the schema goes `active` → `renaming` (a conditional
 * UPDATE, one winner), the operation row is written in state `copying`, and its old and new
 * keys are reserved in the tenant (primary key: a second rename of the schema, or to the same
 * key, fails there). Then the `claim-rename` job (or a waiting `iam claims rename`) works it:
 *
 * 1. `copying`: the stored values under the old key are copied to the new key in batches of
 *    users in user-id order. Each batch is one transaction that renews the lease, copies the
 *    range (checkpoint, last user of the batch] and moves the checkpoint: a daemon killed in
 *    the middle of a batch leaves nothing of it (rolled back), and the next holder resumes
 *    from the checkpoint once the lease has expired.
 * 2. `switching`, then in ONE transaction: a final catch-up makes the new-key rows exactly the
 *    old-key rows (re-copying whatever was set, changed or removed under the old key after its
 *    batch was copied), the schema's `field_key` becomes the new key, and the operation moves
 *    to `cleanup`. Readers that join the schema to its values see the old key and its value
 *    before that commit and the new key and its value after it: never both, never none.
 * 3. `cleanup`: the old-key rows are deleted in batches; then `completed`, the schema back to
 *    `active`, the keys released.
 *
 * An operation is claimed one-winner through its `lease_holder`/`lease_until` (short, renewed
 * by every batch), so several daemons and a CLI process share the work without doing a batch
 * twice; every write of the runner is conditional on still holding that lease.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { newId } from '../crypto.js';
import { isUniqueViolation, retryTransient, type Database, type Db } from '../db/index.js';
import { ApiError, notFound } from '../errors.js';
import { OperationLookups, TenantScope } from '../repositories/index.js';
import { assertFieldKey } from '../schemas/claims.js';
import { parseInput } from '../schemas/validate.js';
import { audit, type Actor } from './audit.js';
import { LeaseLost, RenamePhases, type ClaimRenameLogger } from './claim-rename-phases.js';
import { operationView, RenameInput, type RenameResult } from './claim-rename-views.js';

export type { ClaimRenameLogger } from './claim-rename-phases.js';
export { operationView, RenameInput, RenameOperationView, RenameResult } from './claim-rename-views.js';

/**
 * A rename of at most this many stored values finishes during the request (200, the schema
 * under its new key), as a small data export does (INLINE_ROW_LIMIT); a larger one answers
 * 202 with the operation to poll. Decided by the count taken when the rename is accepted, so
 * the answer's shape never depends on timing. At the default batch size it is two copy
 * batches, the switch and two cleanup batches. docs/claims.md, "Rename".
 */
export const INLINE_RENAME_MAX_USERS = 1_000;

export const CLAIM_RENAME_DEFAULTS = {
  batchSize: 500,
  batchPauseMs: 0,
  leaseMs: 15_000,
  inlineMaxUsers: INLINE_RENAME_MAX_USERS,
};

export interface ClaimRenameOptions {
  /** Users per batch (one transaction each). */
  batchSize: number;
  /** Pause between two batches, so a long rename leaves the database to the requests. */
  batchPauseMs: number;
  /** How long a claimed operation stays claimed without a batch (a killed holder blocks it this long). */
  leaseMs: number;
  /** Most stored values a rename may have to finish within `start` (INLINE_RENAME_MAX_USERS; 0: never). */
  inlineMaxUsers: number;
}

/** The schema record a rename answers with: the spec's Custom claim schema, as it is now. */
async function schemaView(db: Db, tenantId: string, schemaId: string): Promise<Record<string, unknown> | undefined> {
  const row = await new TenantScope(db, tenantId).customClaims.getSchema(schemaId);
  return row && { ...row };
}

/**
 * The dual write of a rename (docs/claims.md, "Rename"): the values a user's write stores,
 * plus, for each value under the old key of a running rename, the same value under its new key.
 * Called by the custom claims service inside the write's transaction. A write that read the
 * schema's key before the switch and commits after it still leaves the value under the key
 * the schema has then; the old-key copy goes with the rename's cleanup.
 */
export async function withRenameMirrors<R extends { field_key: string; value_json: string }>(
  scope: TenantScope,
  change: { rows: R[]; cleared: string[] },
): Promise<{ rows: R[]; cleared: string[] }> {
  const running = await scope.claimRenames.runningKeys();
  if (running.size === 0) return change;
  const rows = [...change.rows];
  const cleared = [...change.cleared];
  for (const r of change.rows) {
    const to = running.get(r.field_key);
    if (to !== undefined && !rows.some((o) => o.field_key === to)) rows.push({ ...r, field_key: to });
  }
  for (const key of change.cleared) {
    const to = running.get(key);
    if (to !== undefined && !cleared.includes(to)) cleared.push(to);
  }
  return { rows, cleared };
}

/** The running rename that holds `fieldKey` in the tenant (a create must not take it), if any. */
export function renameHolding(scope: TenantScope, fieldKey: string): Promise<string | undefined> {
  return scope.claimRenames.reservedBy(fieldKey);
}

const ENDED = new Set(['completed', 'failed']);
/** Most due operations one pass of the job picks up. */
const DUE_BATCH = 20;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

const inProgress = (what: string) =>
  new ApiError(409, 'rename_in_progress', `A rename of ${what} is already running; wait for it to end.`);

export class ClaimRenameService {
  readonly holder: string;
  private readonly listeners = new Set<() => void>();
  private readonly options: ClaimRenameOptions;
  private readonly log?: ClaimRenameLogger;
  /** One batch of each phase, under this runner's lease (claim-rename-phases.ts). */
  private readonly phases: RenamePhases;

  constructor(
    private readonly ds: Database,
    opts: { options?: Partial<ClaimRenameOptions>; logger?: ClaimRenameLogger; holder?: string } = {},
  ) {
    this.options = { ...CLAIM_RENAME_DEFAULTS, ...opts.options };
    this.log = opts.logger;
    this.holder = opts.holder ?? `${hostname().slice(0, 64)}:${process.pid}:${randomBytes(6).toString('base64url')}`;
    this.phases = new RenamePhases(ds, this.holder, this.options, this.log);
  }

  private scope(tenantId: string, db: Db = this.ds): TenantScope {
    return new TenantScope(db, tenantId);
  }

  /** Wakes the runner (the daemon's `claim-rename` job) when a rename has been accepted. */
  onKick(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private kick(): void {
    for (const fn of this.listeners) fn();
  }

  // ---- accepting and reading ------------------------------------------------------------

  /**
   * Accepts a rename (phase 1 starts): validates the new key, then in one transaction flips the
   * schema to `renaming`, records the operation and reserves both keys, and audits it.
   *
   * A small rename (at most `inlineMaxUsers` values, INLINE_RENAME_MAX_USERS) is then worked
   * here to its end, and the answer's operation is `completed`, the schema under its new key
   * (the spec's state after the move: "`field_key` becomes `new_field_key`"). This process claims the operation's lease
   * in the accepting transaction, so no other runner starts it meanwhile, and the work is the
   * runner's own (`runOne`): a daemon killed mid-rename leaves a claimed operation that the
   * `claim-rename` job resumes from its checkpoint once the lease expires. A larger rename, or
   * a small one the runner could not finish here (the lease was lost, the database failed),
   * is left to the job: the schema `renaming`, the operation running, to poll. `inline: false`
   * (the CLI, which works the rename itself with progress, or leaves it with --no-wait) never
   * runs it here.
   */
  async start(
    tenantId: string,
    schemaId: string,
    input: unknown,
    actor: Actor,
    opts: { inline?: boolean } = {},
  ): Promise<RenameResult> {
    const { new_field_key: newKey } = parseInput(RenameInput, input, 'body');
    // One key rule for create and rename (shared/schemas/claims.ts): pattern, then reserved names.
    assertFieldKey(newKey, 'body.new_field_key');
    const operationId = newId('cro');
    let inline = false;
    await retryTransient(() =>
      this.ds.transaction(async (tx) => {
        const scope = this.scope(tenantId, tx);
        const renames = scope.claimRenames;
        const schema = await renames.schema(schemaId);
        if (!schema) throw notFound(`Custom claim schema ${schemaId}`);
        if (schema.is_system) {
          throw new ApiError(
            409,
            'system_claim_schema',
            `Custom claim schema ${schemaId} ("${schema.field_key}") is a system schema; its key cannot change.`,
          );
        }
        const oldKey = schema.field_key;
        if (newKey === oldKey) {
          throw new ApiError(400, 'same_field_key', `body.new_field_key: the schema's key is already "${oldKey}".`);
        }
        if (schema.operation_status !== 'active') throw inProgress(`schema ${schemaId}`);
        if ((await renames.keyInUse(newKey)) || (await renames.reservedBy(newKey))) {
          throw new ApiError(
            409,
            'claim_key_conflict',
            `body.new_field_key: "${newKey}" is already the key of a custom claim of this tenant, ` +
              'or a key a running rename holds.',
          );
        }
        const now = Date.now();
        // One winner among concurrent renames of this schema: the row moves from `active` once.
        if ((await renames.markRenaming(schemaId, oldKey, now)) !== 1) throw inProgress(`schema ${schemaId}`);
        const affected = await renames.countValues(oldKey);
        await renames.insertOperation({ id: operationId, schemaId, oldKey, newKey, affected, now });
        try {
          await renames.reserve(oldKey, operationId);
        } catch (e) {
          if (isUniqueViolation(e)) throw inProgress(`schema ${schemaId}`);
          throw e;
        }
        try {
          await renames.reserve(newKey, operationId);
        } catch (e) {
          if (isUniqueViolation(e)) {
            throw new ApiError(409, 'claim_key_conflict', `body.new_field_key: a running rename holds "${newKey}".`);
          }
          throw e;
        }
        await audit(tx, actor, {
          tenantId,
          action: 'custom_claim.rename',
          targetType: 'custom_claim_schema',
          targetId: schemaId,
          summary: { before: { field_key: oldKey }, after: { field_key: newKey }, operation_id: operationId, affected },
        });
        // Claimed with the acceptance: the inline run below is this runner's, from the start.
        inline = opts.inline !== false && affected <= this.options.inlineMaxUsers;
        if (inline && (await renames.claim(operationId, this.holder, now + this.options.leaseMs, now)) !== 1) {
          inline = false;
        }
      }),
    );
    if (inline) {
      try {
        // No pause between batches: the pause spares the database during a very large rename,
        // and a request that waits for its few batches should not sit through it.
        await this.runOne(tenantId, operationId, undefined, { pause: false });
      } catch (e) {
        // Accepted and committed: the job takes it over from its checkpoint when the lease expires.
        this.log?.warn({ operation_id: operationId, err: e }, 'claim rename could not finish inline; left to the job');
      }
    }
    const result = await this.status(tenantId, schemaId, operationId);
    const state = result.operation.state;
    if (state === 'failed') {
      // The switch was refused (the new key was taken meanwhile, or the schema changed): the
      // schema kept its key, as for a refusal at acceptance.
      throw new ApiError(
        409,
        result.operation.error_code === 'claim_key_conflict' ? 'claim_key_conflict' : 'rename_failed',
        `The rename of schema ${schemaId} to "${newKey}" could not switch (${result.operation.error_code}); ` +
          'the schema keeps its key.',
        { operation_id: operationId },
      );
    }
    if (state !== 'completed') this.kick();
    return result;
  }

  /** The schema's latest rename (or `operationId`) with the schema as it is now; 404 when there is none. */
  async status(tenantId: string, schemaId: string, operationId?: string): Promise<RenameResult> {
    const scope = this.scope(tenantId);
    const op = operationId
      ? await scope.claimRenames.get(operationId)
      : await scope.claimRenames.latestForSchema(schemaId);
    const schema = await schemaView(this.ds, tenantId, schemaId);
    if (!schema) throw notFound(`Custom claim schema ${schemaId}`);
    if (!op || op.schema_id !== schemaId) {
      throw new ApiError(404, 'not_found', `Custom claim schema ${schemaId} has never been renamed.`);
    }
    return {
      schema: schema as RenameResult['schema'],
      affected_users: op.affected_users,
      old_key: op.old_key,
      new_key: op.new_key,
      operation: operationView(op),
    };
  }

  // ---- the runner -----------------------------------------------------------------------

  /** One pass of the job: every running operation whose lease is free or expired. */
  async runDue(signal: AbortSignal): Promise<void> {
    const due = await new OperationLookups(this.ds).dueClaimRenames(Date.now(), DUE_BATCH);
    for (const ref of due) {
      if (signal.aborted) return;
      await this.runOne(ref.tenantId, ref.id, signal);
    }
  }

  /**
   * Works one operation to its end (or until `signal` aborts) if this runner can claim it.
   * Returns false when another runner holds it.
   */
  async runOne(
    tenantId: string,
    operationId: string,
    signal?: AbortSignal,
    opts: { pause?: boolean } = {},
  ): Promise<boolean> {
    const scope = this.scope(tenantId);
    const renames = scope.claimRenames;
    const claimed = await retryTransient(() =>
      renames.claim(operationId, this.holder, Date.now() + this.options.leaseMs, Date.now()),
    );
    if (claimed !== 1) return false;
    let ended = false;
    try {
      while (!signal?.aborted) {
        const op = await renames.get(operationId);
        if (!op || ENDED.has(op.state)) {
          ended = true;
          break;
        }
        if (op.lease_holder !== this.holder) throw new LeaseLost();
        if (op.state === 'copying') await this.phases.copyBatch(tenantId, op);
        else if (op.state === 'switching') await this.phases.switchKey(tenantId, op);
        else if (op.state === 'cleanup') ended = await this.phases.cleanupBatch(tenantId, op);
        if (ended) break;
        if (opts.pause !== false) await sleep(this.options.batchPauseMs, signal);
      }
    } catch (e) {
      if (e instanceof LeaseLost) {
        this.log?.warn({ operation_id: operationId }, 'claim rename lease lost to another runner; stopping');
        return true;
      }
      // Left claimed: the lease expires and a runner tries again from the checkpoint.
      throw e;
    }
    if (!ended) await retryTransient(() => renames.release(operationId, this.holder, Date.now())).catch(() => 0);
    return true;
  }

  // ---- waiting (the CLI) ----------------------------------------------------------------

  /**
   * Drives the operation here when no other runner holds it, and reports progress, until it
   * ends or `timeoutMs` passes. Returns the operation as it is then.
   */
  async waitFor(
    tenantId: string,
    schemaId: string,
    operationId: string,
    opts: { timeoutMs: number; onProgress?: (r: RenameResult) => void; signal?: AbortSignal },
  ): Promise<RenameResult> {
    const end = Date.now() + opts.timeoutMs;
    for (;;) {
      const r = await this.status(tenantId, schemaId, operationId);
      opts.onProgress?.(r);
      if (ENDED.has(r.operation.state) || Date.now() >= end || opts.signal?.aborted) return r;
      // Work it here for half a second (when no daemon holds it), then report again.
      const slice = AbortSignal.any([AbortSignal.timeout(500), ...(opts.signal ? [opts.signal] : [])]);
      if (!(await this.runOne(tenantId, operationId, slice))) await sleep(250, opts.signal);
    }
  }
}
