/**
 * Field mapping rows of one tenant (migration 0020, docs/federation.md): source profiles and
 * their schema versions, and field-mapping sets (a source's attributes to user fields or custom
 * claims). Reached through the tenant's scope (`sourceProfiles`, `fieldMappingSets`); every
 * statement binds the scope's tenant. The trust sources that name a mapping set are in
 * federation.ts.
 */
import { all, exec, json, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

type Row = Record<string, unknown>;
const s = (v: unknown): string | null =>
  v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);
const j = <T>(v: unknown): T | null => (v === null || v === undefined ? null : json<T>(v));

// ---- source profiles -----------------------------------------------------------------------

export interface SourceProfileRow {
  id: string;
  tenant_id: string;
  profile_key: string;
  display_name: string;
  source_type: string;
  lifecycle_state: string;
  active_version_id: string | null;
  created_at: number;
  updated_at: number;
}

export interface SourceProfileVersionRow {
  id: string;
  profile_id: string;
  version_label: string;
  lifecycle_state: string;
  schema_hash: string;
  schema_json: Record<string, unknown>;
  parser_options: Record<string, unknown> | null;
  warning_summary: Record<string, unknown> | null;
  source_metadata: Record<string, unknown> | null;
  parse_draft_id: string | null;
  created_at: number;
}

const PROFILE_COLS =
  'id, tenant_id, profile_key, display_name, source_type, lifecycle_state, active_version_id, created_at, updated_at';
const VERSION_COLS = `id, profile_id, version_label, lifecycle_state, schema_hash, schema_json, parser_options,
  warning_summary, source_metadata, parse_draft_id, created_at`;

const toProfile = (r: Row): SourceProfileRow => ({
  id: String(r.id),
  tenant_id: String(r.tenant_id),
  profile_key: String(r.profile_key),
  display_name: String(r.display_name),
  source_type: String(r.source_type),
  lifecycle_state: String(r.lifecycle_state),
  active_version_id: s(r.active_version_id),
  created_at: num(r.created_at),
  updated_at: num(r.updated_at),
});

const toVersion = (r: Row): SourceProfileVersionRow => ({
  id: String(r.id),
  profile_id: String(r.profile_id),
  version_label: String(r.version_label),
  lifecycle_state: String(r.lifecycle_state),
  schema_hash: String(r.schema_hash),
  schema_json: json<Record<string, unknown>>(r.schema_json),
  parser_options: j(r.parser_options),
  warning_summary: j(r.warning_summary),
  source_metadata: j(r.source_metadata),
  parse_draft_id: s(r.parse_draft_id),
  created_at: num(r.created_at),
});

export class ScopedSourceProfiles {
  constructor(private readonly sc: ScopeRef) {}

  async insert(p: SourceProfileRow): Promise<void> {
    await exec(this.sc.db, `INSERT INTO source_profiles (${PROFILE_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
      p.id,
      this.sc.tenantId,
      p.profile_key,
      p.display_name,
      p.source_type,
      p.lifecycle_state,
      p.active_version_id,
      p.created_at,
      p.updated_at,
    ]);
  }

  async insertVersion(v: SourceProfileVersionRow): Promise<void> {
    await exec(
      this.sc.db,
      `INSERT INTO source_profile_versions (tenant_id, ${VERSION_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        this.sc.tenantId,
        v.id,
        v.profile_id,
        v.version_label,
        v.lifecycle_state,
        v.schema_hash,
        JSON.stringify(v.schema_json),
        v.parser_options === null ? null : JSON.stringify(v.parser_options),
        v.warning_summary === null ? null : JSON.stringify(v.warning_summary),
        v.source_metadata === null ? null : JSON.stringify(v.source_metadata),
        v.parse_draft_id,
        v.created_at,
      ],
    );
  }

  async setActiveVersion(profileId: string, versionId: string, now: number): Promise<number> {
    return exec(
      this.sc.db,
      'UPDATE source_profiles SET active_version_id = ?, updated_at = ? WHERE tenant_id = ? AND id = ?',
      [versionId, now, this.sc.tenantId, profileId],
    );
  }

  async get(id: string): Promise<SourceProfileRow | undefined> {
    const r = await one<Row>(this.sc.db, `SELECT ${PROFILE_COLS} FROM source_profiles WHERE tenant_id = ? AND id = ?`, [
      this.sc.tenantId,
      id,
    ]);
    return r ? toProfile(r) : undefined;
  }

  async byKey(profileKey: string): Promise<SourceProfileRow | undefined> {
    const r = await one<Row>(
      this.sc.db,
      `SELECT ${PROFILE_COLS} FROM source_profiles WHERE tenant_id = ? AND profile_key = ?`,
      [this.sc.tenantId, profileKey],
    );
    return r ? toProfile(r) : undefined;
  }

  async list(limit: number, offset: number): Promise<SourceProfileRow[]> {
    const rows = await all<Row>(
      this.sc.db,
      `SELECT ${PROFILE_COLS} FROM source_profiles WHERE tenant_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?`,
      [this.sc.tenantId, limit, offset],
    );
    return rows.map(toProfile);
  }

  async version(versionId: string): Promise<SourceProfileVersionRow | undefined> {
    const r = await one<Row>(
      this.sc.db,
      `SELECT ${VERSION_COLS} FROM source_profile_versions WHERE tenant_id = ? AND id = ?`,
      [this.sc.tenantId, versionId],
    );
    return r ? toVersion(r) : undefined;
  }

  async versions(profileId: string): Promise<SourceProfileVersionRow[]> {
    const rows = await all<Row>(
      this.sc.db,
      `SELECT ${VERSION_COLS} FROM source_profile_versions WHERE tenant_id = ? AND profile_id = ?
        ORDER BY created_at, id`,
      [this.sc.tenantId, profileId],
    );
    return rows.map(toVersion);
  }
}

// ---- field-mapping sets --------------------------------------------------------------------

/** One mapping of a set: a source attribute to a user field or a custom claim. */
export interface FieldMapping {
  /** The source's attribute: a SAML attribute name, a SCIM path, a CSV column, a directory attribute. */
  source: string;
  /**
   * `user` (a user field), `claim` (a custom claim key), `group` or `role` (a group's display
   * name or a role's name, held while the source matches: docs/scim.md, "Attribute mapping").
   */
  targetType: 'user' | 'claim' | 'group' | 'role';
  target: string;
  required?: boolean;
  multiValued?: boolean;
  transform?: string;
}

export interface FieldMappingSetRow {
  id: string;
  tenant_id: string;
  set_key: string;
  display_name: string;
  description: string | null;
  source_type: string;
  source_profile_id: string | null;
  lifecycle_state: string;
  mappings: FieldMapping[];
  created_at: number;
  updated_at: number;
}

const SET_COLS = `id, tenant_id, set_key, display_name, description, source_type, source_profile_id, lifecycle_state,
  mappings, created_at, updated_at`;

const toSet = (r: Row): FieldMappingSetRow => ({
  id: String(r.id),
  tenant_id: String(r.tenant_id),
  set_key: String(r.set_key),
  display_name: String(r.display_name),
  description: s(r.description),
  source_type: String(r.source_type),
  source_profile_id: s(r.source_profile_id),
  lifecycle_state: String(r.lifecycle_state),
  mappings: json<FieldMapping[]>(r.mappings),
  created_at: num(r.created_at),
  updated_at: num(r.updated_at),
});

export class ScopedFieldMappingSets {
  constructor(private readonly sc: ScopeRef) {}

  async insert(m: FieldMappingSetRow): Promise<void> {
    await exec(this.sc.db, `INSERT INTO field_mapping_sets (${SET_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
      m.id,
      this.sc.tenantId,
      m.set_key,
      m.display_name,
      m.description,
      m.source_type,
      m.source_profile_id,
      m.lifecycle_state,
      JSON.stringify(m.mappings),
      m.created_at,
      m.updated_at,
    ]);
  }

  async get(id: string): Promise<FieldMappingSetRow | undefined> {
    const r = await one<Row>(this.sc.db, `SELECT ${SET_COLS} FROM field_mapping_sets WHERE tenant_id = ? AND id = ?`, [
      this.sc.tenantId,
      id,
    ]);
    return r ? toSet(r) : undefined;
  }

  async byKey(setKey: string): Promise<FieldMappingSetRow | undefined> {
    const r = await one<Row>(
      this.sc.db,
      `SELECT ${SET_COLS} FROM field_mapping_sets WHERE tenant_id = ? AND set_key = ?`,
      [this.sc.tenantId, setKey],
    );
    return r ? toSet(r) : undefined;
  }

  async list(limit: number, offset: number): Promise<FieldMappingSetRow[]> {
    const rows = await all<Row>(
      this.sc.db,
      `SELECT ${SET_COLS} FROM field_mapping_sets WHERE tenant_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?`,
      [this.sc.tenantId, limit, offset],
    );
    return rows.map(toSet);
  }

  /** The tenant's sets of one source type, oldest first (a tenant has a handful; bounded anyway). */
  async ofSourceType(sourceType: string, limit = 500): Promise<FieldMappingSetRow[]> {
    const rows = await all<Row>(
      this.sc.db,
      `SELECT ${SET_COLS} FROM field_mapping_sets WHERE tenant_id = ? AND source_type = ?
        ORDER BY created_at, id LIMIT ?`,
      [this.sc.tenantId, sourceType, limit],
    );
    return rows.map(toSet);
  }

  /** Replaces the operator's fields of a set; returns the rows changed (0: no such set). */
  async update(m: FieldMappingSetRow): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE field_mapping_sets SET display_name = ?, description = ?, source_type = ?, source_profile_id = ?,
        lifecycle_state = ?, mappings = ?, updated_at = ? WHERE tenant_id = ? AND id = ?`,
      [
        m.display_name,
        m.description,
        m.source_type,
        m.source_profile_id,
        m.lifecycle_state,
        JSON.stringify(m.mappings),
        m.updated_at,
        this.sc.tenantId,
        m.id,
      ],
    );
  }

  async delete(id: string): Promise<number> {
    return exec(this.sc.db, 'DELETE FROM field_mapping_sets WHERE tenant_id = ? AND id = ?', [this.sc.tenantId, id]);
  }
}
