import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMysql, runAll, tableSuffix } from './dialect.js';

/**
 * Field mapping and SAML federation (docs/federation.md):
 * - `source_profiles` / `source_profile_versions`: the shape of an identity source (CSV, SCIM,
 *   SAML, directory) and its schema versions; `schema_hash` is the SHA-256 of the RFC 8785
 *   canonical JSON of the schema.
 * - `field_mapping_sets`: a source profile's attributes mapped to user fields and custom claims
 *   (`mappings`, a JSON array). A trust source names sets by id; the set ids are copied into
 *   columns of `federation_trust_sources` so that "is this set referenced" is one indexed query.
 * - `federation_trust_sources`: the operator's part (`protocol_payload`, `certificates`) and
 *   the columns the metadata poller maintains (HTTP validators, timestamps, failure counter,
 *   sourceState, its lease). `polling_mode` and `next_refresh_at` are columns so the poller
 *   finds due sources with one indexed query.
 * - `operational_notification_states`: what an operator must act on. `open_key` is
 *   `condition:subject` while the state is open and NULL after, so UNIQUE(tenant_id, open_key)
 *   lets the database itself refuse a second open state for one condition and subject (NULLs
 *   never collide, on SQLite or MySQL). `quiet_key` holds the same value after an operator
 *   resolved a state whose condition still holds, until the condition ends.
 */
export class Federation1763769600020 implements MigrationInterface {
  name = 'Federation1763769600020';

  async up(qr: QueryRunner): Promise<void> {
    const x = tableSuffix(qr);
    const text = isMysql(qr) ? 'MEDIUMTEXT' : 'TEXT';
    await runAll(qr, [
      `CREATE TABLE source_profiles (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        profile_key VARCHAR(128) NOT NULL,
        display_name VARCHAR(200) NOT NULL,
        source_type VARCHAR(16) NOT NULL,
        lifecycle_state VARCHAR(16) NOT NULL,
        active_version_id VARCHAR(40) NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        CONSTRAINT uq_source_profiles_key UNIQUE (tenant_id, profile_key),
        CONSTRAINT fk_source_profiles_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      `CREATE TABLE source_profile_versions (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        profile_id VARCHAR(40) NOT NULL,
        version_label VARCHAR(128) NOT NULL,
        lifecycle_state VARCHAR(16) NOT NULL,
        schema_hash VARCHAR(64) NOT NULL,
        schema_json ${text} NOT NULL,
        parser_options ${text} NULL,
        warning_summary ${text} NULL,
        source_metadata ${text} NULL,
        parse_draft_id VARCHAR(128) NULL,
        created_at BIGINT NOT NULL,
        CONSTRAINT uq_source_profile_versions_label UNIQUE (tenant_id, profile_id, version_label),
        CONSTRAINT fk_source_profile_versions_profile FOREIGN KEY (profile_id) REFERENCES source_profiles (id),
        CONSTRAINT fk_source_profile_versions_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      `CREATE TABLE field_mapping_sets (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        set_key VARCHAR(128) NOT NULL,
        display_name VARCHAR(200) NOT NULL,
        description VARCHAR(1000) NULL,
        source_type VARCHAR(16) NOT NULL,
        source_profile_id VARCHAR(40) NULL,
        lifecycle_state VARCHAR(16) NOT NULL,
        mappings ${text} NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        CONSTRAINT uq_field_mapping_sets_key UNIQUE (tenant_id, set_key),
        CONSTRAINT fk_field_mapping_sets_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      `CREATE TABLE federation_trust_sources (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        source_type VARCHAR(32) NOT NULL,
        source_key VARCHAR(128) NOT NULL,
        display_name VARCHAR(200) NOT NULL,
        lifecycle_state VARCHAR(16) NOT NULL,
        protocol_payload ${text} NOT NULL,
        certificates ${text} NOT NULL,
        polling_mode VARCHAR(16) NOT NULL,
        interval_seconds INTEGER NOT NULL,
        idp_mapping_set_id VARCHAR(40) NULL,
        sp_mapping_set_id VARCHAR(40) NULL,
        snapshot_hash VARCHAR(64) NULL,
        next_refresh_at BIGINT NULL,
        last_attempt_at BIGINT NULL,
        last_success_at BIGINT NULL,
        consecutive_failures INTEGER NOT NULL DEFAULT 0,
        source_state VARCHAR(32) NULL,
        last_error_code VARCHAR(64) NULL,
        etag VARCHAR(512) NULL,
        last_modified VARCHAR(64) NULL,
        validator_source_url VARCHAR(2048) NULL,
        accepted_valid_until BIGINT NULL,
        suspended_by_metadata_sync INTEGER NOT NULL DEFAULT 0,
        signing_fingerprint VARCHAR(64) NULL,
        lease_holder VARCHAR(128) NULL,
        lease_until BIGINT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        CONSTRAINT uq_federation_trust_sources_key UNIQUE (tenant_id, source_key),
        CONSTRAINT fk_federation_trust_sources_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      'CREATE INDEX ix_federation_trust_sources_due ON federation_trust_sources (polling_mode, next_refresh_at)',
      'CREATE INDEX ix_federation_trust_sources_idp_set ON federation_trust_sources (tenant_id, idp_mapping_set_id)',
      'CREATE INDEX ix_federation_trust_sources_sp_set ON federation_trust_sources (tenant_id, sp_mapping_set_id)',
      `CREATE TABLE operational_notification_states (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        condition_code VARCHAR(64) NOT NULL,
        subject_type VARCHAR(40) NOT NULL,
        subject_id VARCHAR(128) NOT NULL,
        state VARCHAR(16) NOT NULL,
        details ${text} NOT NULL,
        assigned_to VARCHAR(200) NULL,
        resolution VARCHAR(16) NULL,
        raise_count INTEGER NOT NULL,
        raised_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        resolved_at BIGINT NULL,
        open_key VARCHAR(240) NULL,
        quiet_key VARCHAR(240) NULL,
        CONSTRAINT uq_operational_notification_states_open UNIQUE (tenant_id, open_key),
        CONSTRAINT fk_operational_notification_states_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      'CREATE INDEX ix_operational_notification_states_list ON operational_notification_states (tenant_id, raised_at)',
      'CREATE INDEX ix_operational_notification_states_quiet ON operational_notification_states (tenant_id, quiet_key)',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'DROP TABLE operational_notification_states',
      'DROP TABLE federation_trust_sources',
      'DROP TABLE field_mapping_sets',
      'DROP TABLE source_profile_versions',
      'DROP TABLE source_profiles',
    ]);
  }
}
