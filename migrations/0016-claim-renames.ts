import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll, tableSuffix } from './dialect.js';

/**
 * Two-phase rename of a custom claim (docs/claims.md, "Rename"):
 * - `claim_rename_operations`: one row per rename; the `claim-rename` job copies the stored
 *   values from `old_key` to `new_key` in checkpointed batches (`checkpoint` = the last user id
 *   copied), switches the schema's key in one transaction, then deletes the old rows. Several
 *   daemons share the work: an operation is claimed one-winner through `lease_holder` /
 *   `lease_until`, and every write of the runner is conditional on that lease.
 * - `claim_key_reservations`: the keys a running rename holds in its tenant (its old and its
 *   new key), one row each under the primary key (tenant_id, field_key). Two renames of one
 *   schema, or two renames to one new key, cannot both insert theirs: the database, not a
 *   read-then-write, decides the single winner. The rows go when the operation ends.
 */
export class ClaimRenames1763769600016 implements MigrationInterface {
  name = 'ClaimRenames1763769600016';

  async up(qr: QueryRunner): Promise<void> {
    const x = tableSuffix(qr);
    await runAll(qr, [
      `CREATE TABLE claim_rename_operations (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        schema_id VARCHAR(40) NOT NULL,
        old_key VARCHAR(64) NOT NULL,
        new_key VARCHAR(64) NOT NULL,
        state VARCHAR(16) NOT NULL,
        checkpoint VARCHAR(64) NULL,
        copied_count INTEGER NOT NULL,
        deleted_count INTEGER NOT NULL,
        affected_users INTEGER NOT NULL,
        lease_holder VARCHAR(128) NULL,
        lease_until BIGINT NULL,
        error_code VARCHAR(64) NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        completed_at BIGINT NULL,
        CONSTRAINT fk_claim_rename_operations_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      'CREATE INDEX ix_claim_rename_operations_state ON claim_rename_operations (state, lease_until)',
      'CREATE INDEX ix_claim_rename_operations_schema ON claim_rename_operations (tenant_id, schema_id, created_at)',
      `CREATE TABLE claim_key_reservations (
        tenant_id VARCHAR(40) NOT NULL,
        field_key VARCHAR(64) NOT NULL,
        operation_id VARCHAR(40) NOT NULL,
        PRIMARY KEY (tenant_id, field_key),
        CONSTRAINT fk_claim_key_reservations_operation FOREIGN KEY (operation_id)
          REFERENCES claim_rename_operations (id)
      )${x}`,
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    // Dropping a table drops its indexes on both dialects.
    await runAll(qr, ['DROP TABLE claim_key_reservations', 'DROP TABLE claim_rename_operations']);
  }
}
