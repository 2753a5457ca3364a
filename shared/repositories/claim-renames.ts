/**
 * A tenant's custom claim renames (`claim_rename_operations`), the keys they hold
 * (`claim_key_reservations`), and the statements a rename runs on the tenant's claim schemas
 * and stored values (`custom_claim_schemas`, `custom_claim_values`). Reached through the
 * tenant's scope; the runner finds due operations of every tenant through OperationLookups
 * (operation-lookups.ts) and then works through each operation's tenant scope.
 *
 * The runner's writes to an operation are conditional on its lease (`lease_holder = ?`): a
 * runner that lost the lease changes nothing, sees 0 rows changed, and its transaction rolls
 * back (see shared/services/claim-rename.ts).
 *
 * The statements are portable between SQLite and MySQL/MariaDB: no upsert (a range is deleted,
 * then inserted), no DELETE … LIMIT (a batch is a user-id range), and a subquery that reads the
 * table a DELETE writes is wrapped in a derived table, which MySQL materialises first.
 */
import type { Db } from '../db/index.js';
import { all, exec, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

export type ClaimRenameState = 'copying' | 'switching' | 'cleanup' | 'completed' | 'failed';

export interface ClaimRenameRow {
  id: string;
  tenant_id: string;
  schema_id: string;
  old_key: string;
  new_key: string;
  state: ClaimRenameState;
  /** The last user id whose value has been copied (phase 1) or deleted (cleanup); null before the first batch. */
  checkpoint: string | null;
  copied_count: number;
  deleted_count: number;
  affected_users: number;
  lease_holder: string | null;
  lease_until: number | null;
  error_code: string | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
}

/** What a rename needs of the schema it renames. */
export interface RenameSchemaRow {
  id: string;
  field_key: string;
  is_system: boolean;
  operation_status: string;
}

const n = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const s = (v: unknown): string | null =>
  v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);

function operation(r: Record<string, unknown>): ClaimRenameRow {
  return {
    id: String(r.id),
    tenant_id: String(r.tenant_id),
    schema_id: String(r.schema_id),
    old_key: String(r.old_key),
    new_key: String(r.new_key),
    state: String(r.state) as ClaimRenameState,
    checkpoint: s(r.checkpoint),
    copied_count: num(r.copied_count),
    deleted_count: num(r.deleted_count),
    affected_users: num(r.affected_users),
    lease_holder: s(r.lease_holder),
    lease_until: n(r.lease_until),
    error_code: s(r.error_code),
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
    completed_at: n(r.completed_at),
  };
}

const RUNNING = "('copying', 'switching', 'cleanup')";

const isMysql = (db: Db): boolean => {
  const t = ('manager' in db ? db : db.connection).options.type;
  return t === 'mysql' || t === 'mariadb';
};

export class ScopedClaimRenames {
  constructor(private readonly sc: ScopeRef) {}

  private get t(): string {
    return this.sc.tenantId;
  }

  // ---- reads ----------------------------------------------------------------------------

  async get(operationId: string): Promise<ClaimRenameRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.sc.db,
      'SELECT * FROM claim_rename_operations WHERE tenant_id = ? AND id = ?',
      [this.t, operationId],
    );
    return r && operation(r);
  }

  /** The schema's latest rename, running or not. */
  async latestForSchema(schemaId: string): Promise<ClaimRenameRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.sc.db,
      `SELECT * FROM claim_rename_operations WHERE tenant_id = ? AND schema_id = ? ORDER BY created_at DESC, id DESC
        LIMIT 1`,
      [this.t, schemaId],
    );
    return r && operation(r);
  }

  /** The schema as a rename sees it: its key, whether it is a system schema, its operation status. */
  async schema(schemaId: string): Promise<RenameSchemaRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.sc.db,
      'SELECT id, field_key, is_system, operation_status FROM custom_claim_schemas WHERE tenant_id = ? AND id = ?',
      [this.t, schemaId],
    );
    return (
      r && {
        id: String(r.id),
        field_key: String(r.field_key),
        is_system: num(r.is_system) === 1,
        operation_status: String(r.operation_status),
      }
    );
  }

  /** Whether a schema of the tenant has `fieldKey`. */
  async keyInUse(fieldKey: string): Promise<boolean> {
    const r = await one(this.sc.db, 'SELECT 1 AS x FROM custom_claim_schemas WHERE tenant_id = ? AND field_key = ?', [
      this.t,
      fieldKey,
    ]);
    return r !== undefined;
  }

  /** The running rename that holds `fieldKey` in the tenant, if any. */
  async reservedBy(fieldKey: string): Promise<string | undefined> {
    const r = await one<{ operation_id: string }>(
      this.sc.db,
      'SELECT operation_id FROM claim_key_reservations WHERE tenant_id = ? AND field_key = ?',
      [this.t, fieldKey],
    );
    return r?.operation_id;
  }

  /**
   * The running renames of the tenant, old key → new key, for a write of users' values inside
   * its transaction. On MySQL the rows are read with a shared lock: every batch, the switch and
   * the completion of a rename update its row first, so that write and those transactions are
   * ordered one after the other, and the write sees the operation's state as it is then
   * (SQLite runs one write transaction at a time anyway).
   */
  async runningKeys(): Promise<Map<string, string>> {
    const rows = await all<{ old_key: string; new_key: string }>(
      this.sc.db,
      `SELECT old_key, new_key FROM claim_rename_operations WHERE tenant_id = ? AND state IN ${RUNNING}${
        isMysql(this.sc.db) ? ' LOCK IN SHARE MODE' : ''
      }`,
      [this.t],
    );
    return new Map(rows.map((r) => [String(r.old_key), String(r.new_key)]));
  }

  /** Users with a stored value under `fieldKey`. */
  async countValues(fieldKey: string): Promise<number> {
    const r = await one<{ c: unknown }>(
      this.sc.db,
      'SELECT COUNT(*) AS c FROM custom_claim_values WHERE tenant_id = ? AND field_key = ?',
      [this.t, fieldKey],
    );
    return num(r!.c);
  }

  // ---- accepting a rename (one transaction) ---------------------------------------------

  /**
   * The schema `active` → `renaming`, one winner: 0 rows when it is a system schema, is not
   * at `expectKey`, or another operation already runs on it.
   */
  markRenaming(schemaId: string, expectKey: string, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE custom_claim_schemas SET operation_status = 'renaming', updated_at = ?
      WHERE tenant_id = ? AND id = ? AND field_key = ? AND operation_status = 'active' AND is_system = 0`,
      [now, this.t, schemaId, expectKey],
    );
  }

  /** Holds `fieldKey` for the operation; a unique violation when another running rename holds it. */
  async reserve(fieldKey: string, operationId: string): Promise<void> {
    await exec(this.sc.db, 'INSERT INTO claim_key_reservations (tenant_id, field_key, operation_id) VALUES (?, ?, ?)', [
      this.t,
      fieldKey,
      operationId,
    ]);
  }

  async insertOperation(op: {
    id: string;
    schemaId: string;
    oldKey: string;
    newKey: string;
    affected: number;
    now: number;
  }): Promise<void> {
    await exec(
      this.sc.db,
      `INSERT INTO claim_rename_operations (id, tenant_id, schema_id, old_key, new_key, state, checkpoint, copied_count,
        deleted_count, affected_users, lease_holder, lease_until, error_code, created_at, updated_at, completed_at)
      VALUES (?, ?, ?, ?, ?, 'copying', NULL, 0, 0, ?, NULL, NULL, NULL, ?, ?, NULL)`,
      [op.id, this.t, op.schemaId, op.oldKey, op.newKey, op.affected, op.now, op.now],
    );
  }

  // ---- the runner's lease ---------------------------------------------------------------

  /** Claims a running operation whose lease is free or expired (or already `holder`'s): one winner. */
  claim(operationId: string, holder: string, leaseUntil: number, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE claim_rename_operations SET lease_holder = ?, lease_until = ?, updated_at = ?
      WHERE tenant_id = ? AND id = ? AND state IN ${RUNNING} AND (lease_holder IS NULL OR lease_until < ? OR
        lease_holder = ?)`,
      [holder, leaseUntil, now, this.t, operationId, now, holder],
    );
  }

  /** Gives the lease up (a stopping runner); the next runner resumes from the checkpoint. */
  release(operationId: string, holder: string, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE claim_rename_operations SET lease_holder = NULL, lease_until = NULL, updated_at = ?
      WHERE tenant_id = ? AND id = ? AND lease_holder = ?`,
      [now, this.t, operationId, holder],
    );
  }

  /**
   * Inside a batch's transaction, first: renews the lease and checks it is still `holder`'s and
   * the operation still in `state` (0 rows: the batch must roll back).
   */
  hold(operationId: string, holder: string, state: ClaimRenameState, leaseUntil: number, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE claim_rename_operations SET lease_until = ?, updated_at = ?
      WHERE tenant_id = ? AND id = ? AND lease_holder = ? AND state = ?`,
      [leaseUntil, now, this.t, operationId, holder, state],
    );
  }

  /** The next batch: up to `limit` user ids with a value under `fieldKey` after `after`, in order. */
  async usersAfter(fieldKey: string, after: string, limit: number): Promise<string[]> {
    const rows = await all<{ user_id: string }>(
      this.sc.db,
      `SELECT user_id FROM custom_claim_values WHERE tenant_id = ? AND field_key = ? AND user_id > ? ORDER BY user_id
        LIMIT ?`,
      [this.t, fieldKey, after, limit],
    );
    return rows.map((r) => String(r.user_id));
  }

  /**
   * Copies the values of users in (after, upTo] from `oldKey` to `newKey`: whatever an earlier,
   * rolled-back or interrupted attempt left under the new key in that range is replaced.
   * Returns the rows copied.
   */
  async copyRange(oldKey: string, newKey: string, after: string, upTo: string): Promise<number> {
    await exec(
      this.sc.db,
      'DELETE FROM custom_claim_values WHERE tenant_id = ? AND field_key = ? AND user_id > ? AND user_id <= ?',
      [this.t, newKey, after, upTo],
    );
    return exec(
      this.sc.db,
      `INSERT INTO custom_claim_values (tenant_id, user_id, field_key, value_json, updated_at)
      SELECT tenant_id, user_id, ?, value_json, updated_at FROM custom_claim_values
      WHERE tenant_id = ? AND field_key = ? AND user_id > ? AND user_id <= ?`,
      [newKey, this.t, oldKey, after, upTo],
    );
  }

  /** A copied batch: the checkpoint moves to `checkpoint` (conditional on the lease). */
  advanceCopy(operationId: string, holder: string, checkpoint: string, copied: number, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE claim_rename_operations SET checkpoint = ?, copied_count = copied_count + ?, updated_at = ?
      WHERE tenant_id = ? AND id = ? AND lease_holder = ? AND state = 'copying'`,
      [checkpoint, copied, now, this.t, operationId, holder],
    );
  }

  /**
   * The final catch-up, inside the switch's transaction: makes the rows under `newKey` exactly
   * the rows under `oldKey`. It re-copies what changed under the old key after its batch was
   * copied (a value set, changed or removed while phase 1 ran), whatever the checkpoint.
   * Returns the rows it had to fix.
   */
  async reconcile(oldKey: string, newKey: string): Promise<number> {
    // New-key rows whose user has no old-key value any more, or a different one.
    const removed = await exec(
      this.sc.db,
      `DELETE FROM custom_claim_values WHERE tenant_id = ? AND field_key = ? AND user_id NOT IN (
        SELECT user_id FROM (
          SELECT DISTINCT o.user_id FROM custom_claim_values o
          JOIN custom_claim_values c ON c.tenant_id = o.tenant_id AND
            c.user_id = o.user_id AND c.field_key = ?
          WHERE o.tenant_id = ? AND o.field_key = ? AND c.value_json = o.value_json
        ) AS same
      )`,
      [this.t, newKey, newKey, this.t, oldKey],
    );
    const added = await exec(
      this.sc.db,
      `INSERT INTO custom_claim_values (tenant_id, user_id, field_key, value_json, updated_at)
      SELECT o.tenant_id, o.user_id, ?, o.value_json, o.updated_at FROM custom_claim_values o
      WHERE o.tenant_id = ? AND o.field_key = ? AND o.user_id NOT IN (
        SELECT user_id FROM (
          SELECT DISTINCT user_id FROM custom_claim_values WHERE tenant_id = ? AND field_key = ?
        ) AS copied
      )`,
      [newKey, this.t, oldKey, this.t, newKey],
    );
    return removed + added;
  }

  /** Phase 2's key switch: the schema's key becomes `newKey` (0 rows when it is no longer at `oldKey`). */
  switchKey(schemaId: string, oldKey: string, newKey: string, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE custom_claim_schemas SET field_key = ?, updated_at = ?
      WHERE tenant_id = ? AND id = ? AND field_key = ? AND operation_status = 'renaming'`,
      [newKey, now, this.t, schemaId, oldKey],
    );
  }

  /** Moves the operation on to `to` (conditional on the lease and on its being in `from`); the checkpoint restarts. */
  moveState(
    operationId: string,
    holder: string,
    from: ClaimRenameState,
    to: ClaimRenameState,
    now: number,
  ): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE claim_rename_operations SET state = ?, checkpoint = NULL, updated_at = ?
      WHERE tenant_id = ? AND id = ? AND lease_holder = ? AND state = ?`,
      [to, now, this.t, operationId, holder, from],
    );
  }

  /** Cleanup: deletes the values under `fieldKey` of users in (after, upTo]. */
  deleteRange(fieldKey: string, after: string, upTo: string): Promise<number> {
    return exec(
      this.sc.db,
      'DELETE FROM custom_claim_values WHERE tenant_id = ? AND field_key = ? AND user_id > ? AND user_id <= ?',
      [this.t, fieldKey, after, upTo],
    );
  }

  /** Every value under `fieldKey` (a failed rename's copies). */
  deleteAll(fieldKey: string): Promise<number> {
    return exec(this.sc.db, 'DELETE FROM custom_claim_values WHERE tenant_id = ? AND field_key = ?', [
      this.t,
      fieldKey,
    ]);
  }

  advanceCleanup(
    operationId: string,
    holder: string,
    checkpoint: string,
    deleted: number,
    now: number,
  ): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE claim_rename_operations SET checkpoint = ?, deleted_count = deleted_count + ?, updated_at = ?
      WHERE tenant_id = ? AND id = ? AND lease_holder = ? AND state = 'cleanup'`,
      [checkpoint, deleted, now, this.t, operationId, holder],
    );
  }

  /** The operation ends (`completed` or `failed`), its lease given up. */
  finish(
    operationId: string,
    holder: string,
    from: ClaimRenameState,
    to: 'completed' | 'failed',
    errorCode: string | null,
    now: number,
  ): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE claim_rename_operations SET state = ?, error_code = ?, completed_at = ?, lease_holder = NULL,
        lease_until = NULL, updated_at = ?
      WHERE tenant_id = ? AND id = ? AND lease_holder = ? AND state = ?`,
      [to, errorCode, now, now, this.t, operationId, holder, from],
    );
  }

  /** The schema back to `active` once its rename has ended. */
  markActive(schemaId: string, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE custom_claim_schemas SET operation_status = 'active', updated_at = ?
      WHERE tenant_id = ? AND id = ? AND operation_status = 'renaming'`,
      [now, this.t, schemaId],
    );
  }

  /** The keys an ended operation held go free. */
  unreserve(operationId: string): Promise<number> {
    return exec(this.sc.db, 'DELETE FROM claim_key_reservations WHERE tenant_id = ? AND operation_id = ?', [
      this.t,
      operationId,
    ]);
  }
}
