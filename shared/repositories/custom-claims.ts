/**
 * Custom claims (docs/claims.md): a tenant's claim schemas and its users' values. Values are
 * keyed by `field_key`, not by the schema's id, so that a rename can copy them to the new key
 * in batches and then switch the schema's key in one transaction; `emittable` joins schema and
 * values by key in one statement, so a reader sees the claim under exactly one key.
 * Every statement is bound to the scope's tenant.
 */
import type { Db } from '../db/index.js';
import { all, exec, json, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

type Row = Record<string, unknown>;

/** A custom claim schema as stored; flags are 0/1, times epoch ms. */
export interface CustomClaimSchemaRow {
  id: string;
  tenant_id: string;
  field_key: string;
  display_label: string;
  field_type: string;
  cardinality: string;
  is_pii: number;
  is_required: number;
  is_active: number;
  is_system: number;
  /** `active`, or the state of an operation under way on the schema (a rename sets `renaming`). */
  operation_status: string;
  field_usage_bindings: Record<string, unknown>[];
  created_at: number;
  updated_at: number;
}

/** One stored value: the claim's key and its JSON text. */
export interface CustomClaimValueRow {
  field_key: string;
  value_json: string;
}

/** An active schema joined with the user's value under the schema's current key. */
export interface EmittableClaimRow {
  field_key: string;
  field_type: string;
  cardinality: string;
  field_usage_bindings: Record<string, unknown>[];
  value_json: string;
}

/** One of the user's values with its schema's label, for the data export. */
export interface ExportedClaimRow {
  field_key: string;
  display_label: string;
  is_active: number;
  value_json: string;
}

/** What an update may change on a schema (the key changes only by rename). */
export interface SchemaPatch {
  display_label?: string;
  is_pii?: number;
  is_required?: number;
  is_active?: number;
  field_usage_bindings?: Record<string, unknown>[];
}

const SCHEMA_COLUMNS = `id, tenant_id, field_key, display_label, field_type, cardinality, is_pii, is_required,
  is_active, is_system, operation_status, field_usage_bindings, created_at, updated_at`;

function toSchema(r: Row): CustomClaimSchemaRow {
  return {
    id: String(r.id),
    tenant_id: String(r.tenant_id),
    field_key: String(r.field_key),
    display_label: String(r.display_label),
    field_type: String(r.field_type),
    cardinality: String(r.cardinality),
    is_pii: num(r.is_pii),
    is_required: num(r.is_required),
    is_active: num(r.is_active),
    is_system: num(r.is_system),
    operation_status: String(r.operation_status),
    field_usage_bindings: json<Record<string, unknown>[]>(r.field_usage_bindings) ?? [],
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
  };
}

const isMysql = (db: Db): boolean => {
  const t = ('manager' in db ? db : db.connection).options.type;
  return t === 'mysql' || t === 'mariadb';
};

const placeholders = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/** A tenant's custom claim schemas and values. */
export class ScopedCustomClaims {
  constructor(private readonly s: ScopeRef) {}

  // ---- schemas ----

  async insertSchema(r: Omit<CustomClaimSchemaRow, 'tenant_id'>): Promise<CustomClaimSchemaRow> {
    await exec(
      this.s.db,
      `INSERT INTO custom_claim_schemas (${SCHEMA_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        r.id,
        this.s.tenantId,
        r.field_key,
        r.display_label,
        r.field_type,
        r.cardinality,
        r.is_pii,
        r.is_required,
        r.is_active,
        r.is_system,
        r.operation_status,
        JSON.stringify(r.field_usage_bindings),
        r.created_at,
        r.updated_at,
      ],
    );
    return { ...r, tenant_id: this.s.tenantId };
  }

  /** Every schema of the tenant: system schemas first, then by creation. */
  async listSchemas(): Promise<CustomClaimSchemaRow[]> {
    const rows = await all<Row>(
      this.s.db,
      `SELECT ${SCHEMA_COLUMNS} FROM custom_claim_schemas WHERE tenant_id = ?
        ORDER BY is_system DESC, created_at ASC, field_key ASC`,
      [this.s.tenantId],
    );
    return rows.map(toSchema);
  }

  /** How many schemas the tenant defined itself (system schemas not counted). */
  async countCustomSchemas(): Promise<number> {
    const r = await one<{ n: unknown }>(
      this.s.db,
      'SELECT COUNT(*) AS n FROM custom_claim_schemas WHERE tenant_id = ? AND is_system = 0',
      [this.s.tenantId],
    );
    return num(r?.n ?? 0);
  }

  async getSchema(id: string): Promise<CustomClaimSchemaRow | undefined> {
    const r = await one<Row>(
      this.s.db,
      `SELECT ${SCHEMA_COLUMNS} FROM custom_claim_schemas WHERE tenant_id = ? AND id = ?`,
      [this.s.tenantId, id],
    );
    return r ? toSchema(r) : undefined;
  }

  async getSchemaByKey(fieldKey: string): Promise<CustomClaimSchemaRow | undefined> {
    const r = await one<Row>(
      this.s.db,
      `SELECT ${SCHEMA_COLUMNS} FROM custom_claim_schemas WHERE tenant_id = ? AND field_key = ?`,
      [this.s.tenantId, fieldKey],
    );
    return r ? toSchema(r) : undefined;
  }

  /** Changes the given fields of a schema; returns the number of rows changed (0: no such schema). */
  updateSchema(id: string, patch: SchemaPatch, now: number): Promise<number> {
    const sets: string[] = [];
    const params: unknown[] = [];
    for (const k of ['display_label', 'is_pii', 'is_required', 'is_active'] as const) {
      if (patch[k] !== undefined) {
        sets.push(`${k} = ?`);
        params.push(patch[k]);
      }
    }
    if (patch.field_usage_bindings !== undefined) {
      sets.push('field_usage_bindings = ?');
      params.push(JSON.stringify(patch.field_usage_bindings));
    }
    sets.push('updated_at = ?');
    params.push(now, this.s.tenantId, id);
    return exec(this.s.db, `UPDATE custom_claim_schemas SET ${sets.join(', ')} WHERE tenant_id = ? AND id = ?`, params);
  }

  /**
   * Sets a schema's operation_status; with `expect`, only when it currently has that status
   * (a one-winner conditional update: check the returned count).
   */
  setOperationStatus(id: string, status: string, now: number, expect?: string): Promise<number> {
    return expect === undefined
      ? exec(
          this.s.db,
          'UPDATE custom_claim_schemas SET operation_status = ?, updated_at = ? WHERE tenant_id = ? AND id = ?',
          [status, now, this.s.tenantId, id],
        )
      : exec(
          this.s.db,
          `UPDATE custom_claim_schemas SET operation_status = ?, updated_at = ?
            WHERE tenant_id = ? AND id = ? AND operation_status = ?`,
          [status, now, this.s.tenantId, id, expect],
        );
  }

  // ---- values ----

  /** Writes the user's values under the given keys, replacing what each key held. */
  async upsertValues(userId: string, entries: CustomClaimValueRow[], now: number): Promise<void> {
    const sql = isMysql(this.s.db)
      ? `INSERT INTO custom_claim_values (tenant_id, user_id, field_key, value_json, updated_at) VALUES (?, ?, ?, ?, ?)
          ON DUPLICATE KEY UPDATE value_json = VALUES(value_json), updated_at = VALUES(updated_at)`
      : `INSERT INTO custom_claim_values (tenant_id, user_id, field_key, value_json, updated_at) VALUES (?, ?, ?, ?, ?)
          ON CONFLICT (tenant_id, user_id, field_key) DO UPDATE SET value_json = excluded.value_json,
          updated_at = excluded.updated_at`;
    for (const e of entries) await exec(this.s.db, sql, [this.s.tenantId, userId, e.field_key, e.value_json, now]);
  }

  /** The user's stored values, all of them or those under `keys`, by key. */
  async userValues(userId: string, keys?: string[]): Promise<CustomClaimValueRow[]> {
    if (keys && keys.length === 0) return [];
    const rows = keys
      ? await all<Row>(
          this.s.db,
          `SELECT field_key, value_json FROM custom_claim_values WHERE tenant_id = ? AND user_id = ?
            AND field_key IN (${placeholders(keys.length)}) ORDER BY field_key`,
          [this.s.tenantId, userId, ...keys],
        )
      : await all<Row>(
          this.s.db,
          `SELECT field_key, value_json FROM custom_claim_values WHERE tenant_id = ? AND user_id = ?
            ORDER BY field_key`,
          [this.s.tenantId, userId],
        );
    return rows.map((r) => ({ field_key: String(r.field_key), value_json: String(r.value_json) }));
  }

  /** Deletes the user's values, all of them or those under `keys`; returns how many. */
  deleteValues(userId: string, keys?: string[]): Promise<number> {
    if (keys && keys.length === 0) return Promise.resolve(0);
    return keys
      ? exec(
          this.s.db,
          `DELETE FROM custom_claim_values WHERE tenant_id = ? AND user_id = ?
            AND field_key IN (${placeholders(keys.length)})`,
          [this.s.tenantId, userId, ...keys],
        )
      : exec(this.s.db, 'DELETE FROM custom_claim_values WHERE tenant_id = ? AND user_id = ?', [
          this.s.tenantId,
          userId,
        ]);
  }

  /**
   * Every value the user holds under a custom schema's current key, active or not (personal
   * data held is exported whether or not it is emitted), with the schema's label: the data
   * export's `custom_claims`. Joined by the current key, so a rename's copies under the new key
   * are not listed twice.
   */
  async exportRows(userId: string): Promise<ExportedClaimRow[]> {
    const rows = await all<Row>(
      this.s.db,
      `SELECT s.field_key, s.display_label, s.is_active, v.value_json
         FROM custom_claim_schemas s
         JOIN custom_claim_values v ON v.tenant_id = s.tenant_id AND v.field_key = s.field_key AND v.user_id = ?
        WHERE s.tenant_id = ? AND s.is_system = 0
        ORDER BY s.field_key`,
      [userId, this.s.tenantId],
    );
    return rows.map((r) => ({
      field_key: String(r.field_key),
      display_label: String(r.display_label),
      is_active: num(r.is_active),
      value_json: String(r.value_json),
    }));
  }

  /**
   * The user's values of the tenant's active custom (non-system) schemas, each under the
   * schema's current key: ONE statement, so a rename's key switch is seen wholly or not at all.
   */
  async emittable(userId: string): Promise<EmittableClaimRow[]> {
    const rows = await all<Row>(
      this.s.db,
      `SELECT s.field_key, s.field_type, s.cardinality, s.field_usage_bindings, v.value_json
         FROM custom_claim_schemas s
         JOIN custom_claim_values v ON v.tenant_id = s.tenant_id AND v.field_key = s.field_key AND v.user_id = ?
        WHERE s.tenant_id = ? AND s.is_active = 1 AND s.is_system = 0
        ORDER BY s.field_key`,
      [userId, this.s.tenantId],
    );
    return rows.map((r) => ({
      field_key: String(r.field_key),
      field_type: String(r.field_type),
      cardinality: String(r.cardinality),
      field_usage_bindings: json<Record<string, unknown>[]>(r.field_usage_bindings) ?? [],
      value_json: String(r.value_json),
    }));
  }
}
