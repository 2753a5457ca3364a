import type { MigrationInterface, QueryRunner } from 'typeorm';
import { appendOnlyTriggers, isMysql, runAll, tableSuffix } from './dialect.js';

/**
 * Disaster recovery of a tenant (docs/recovery.md):
 * - tenant_recovery_operations: one row per recovery, with its targets (JSON), the lookup
 *   reprojection cursor and progress, the binding smoke results, the verify lease and the
 *   stabilization deadline. `open_tenant_id` is the tenant id while the operation is open and
 *   NULL once reactivated or cancelled; its unique index allows one open operation per tenant.
 * - tenant_routes: the tenant's current route (generation, active or deny).
 * - tenant_route_publications: append-only history of signed route publications.
 * - tenant_lookup_rows: the tenant's routing registry (every client_id and user id that routes
 *   to it), rebuilt by the recovery verify step at a new registry generation.
 */
export class Recovery1763769600008 implements MigrationInterface {
  name = 'Recovery1763769600008';

  async up(qr: QueryRunner): Promise<void> {
    const x = tableSuffix(qr);
    const big = isMysql(qr) ? 'MEDIUMTEXT' : 'TEXT';
    const autoId = isMysql(qr) ? 'BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT';
    await runAll(qr, [
      `CREATE TABLE tenant_recovery_operations (
        id VARCHAR(80) NOT NULL PRIMARY KEY,
        environment_id VARCHAR(255) NOT NULL,
        tenant_id VARCHAR(40) NOT NULL,
        seq_no INTEGER NOT NULL,
        open_tenant_id VARCHAR(40) NULL,
        state VARCHAR(32) NOT NULL,
        reason TEXT NOT NULL,
        previous_lifecycle_state VARCHAR(32) NOT NULL,
        pinned_route_generation INTEGER NOT NULL,
        deny_runtime_generation BIGINT NULL,
        deny_registry_generation BIGINT NULL,
        deny_observed_at BIGINT NULL,
        drain_not_before BIGINT NULL,
        restore_reference VARCHAR(500) NULL,
        restored_at BIGINT NULL,
        migration_verified_at BIGINT NULL,
        lookup_reprojected_at BIGINT NULL,
        binding_smoke_verified_at BIGINT NULL,
        smoke_success_count INTEGER NOT NULL,
        smoke_results TEXT NOT NULL,
        stabilization_not_before BIGINT NULL,
        lookup_stage VARCHAR(16) NOT NULL,
        lookup_target_index INTEGER NOT NULL,
        lookup_registry_generation BIGINT NOT NULL,
        lookup_after_created_at BIGINT NOT NULL,
        lookup_after_id VARCHAR(64) NOT NULL,
        lookup_after_row_id BIGINT NOT NULL,
        lookup_projected_rows BIGINT NOT NULL,
        lookup_verified_rows BIGINT NOT NULL,
        registry_digest VARCHAR(80) NULL,
        lease_owner VARCHAR(64) NULL,
        lease_expires_at BIGINT NULL,
        reactivated_runtime_generation BIGINT NULL,
        reactivated_at BIGINT NULL,
        cancelled_at BIGINT NULL,
        last_error_code VARCHAR(64) NULL,
        targets ${big} NOT NULL,
        created_by VARCHAR(128) NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        CONSTRAINT fk_recovery_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      `CREATE UNIQUE INDEX ux_recovery_open_tenant ON tenant_recovery_operations (open_tenant_id)`,
      `CREATE UNIQUE INDEX ux_recovery_tenant_sequence ON tenant_recovery_operations (tenant_id, seq_no)`,
      `CREATE TABLE tenant_routes (
        tenant_id VARCHAR(40) NOT NULL PRIMARY KEY,
        route_generation INTEGER NOT NULL,
        state VARCHAR(16) NOT NULL,
        runtime_generation BIGINT NOT NULL,
        registry_generation BIGINT NOT NULL,
        registry_digest VARCHAR(80) NULL,
        updated_at BIGINT NOT NULL,
        CONSTRAINT fk_tenant_routes_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      `CREATE TABLE tenant_route_publications (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        route_generation INTEGER NOT NULL,
        runtime_generation BIGINT NOT NULL,
        state VARCHAR(16) NOT NULL,
        registry_digest VARCHAR(80) NULL,
        jws TEXT NOT NULL,
        operation_id VARCHAR(80) NULL,
        published_at BIGINT NOT NULL
      )${x}`,
      `CREATE UNIQUE INDEX ux_route_publications_runtime ON tenant_route_publications (tenant_id, runtime_generation)`,
      ...appendOnlyTriggers(qr, 'tenant_route_publications'),
      `CREATE TABLE tenant_lookup_rows (
        row_id ${autoId},
        tenant_id VARCHAR(40) NOT NULL,
        registry_generation BIGINT NOT NULL,
        route_generation INTEGER NOT NULL,
        lookup_kind VARCHAR(16) NOT NULL,
        lookup_key VARCHAR(128) NOT NULL,
        source_id VARCHAR(64) NOT NULL,
        source_created_at BIGINT NOT NULL,
        projected_at BIGINT NOT NULL
      )${x}`,
      `CREATE UNIQUE INDEX ux_lookup_rows_key
        ON tenant_lookup_rows (tenant_id, registry_generation, lookup_kind, lookup_key)`,
      `CREATE INDEX ix_lookup_rows_generation ON tenant_lookup_rows (tenant_id, registry_generation, row_id)`,
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'DROP TABLE tenant_lookup_rows',
      'DROP TABLE tenant_route_publications',
      'DROP TABLE tenant_routes',
      'DROP TABLE tenant_recovery_operations',
    ]);
  }
}
