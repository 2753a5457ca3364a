import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll, tableSuffix } from './dialect.js';

/**
 * Custom claims (docs/claims.md):
 * - `custom_claim_schemas`: a tenant's claim definitions, one per `field_key` (unique in the
 *   tenant). `operation_status` is `active` unless a rename is under way. `field_usage_bindings`
 *   is a JSON array saying which token types (and scopes) carry the claim. Flags are 0/1.
 * - `custom_claim_values`: one user's value of one claim, as JSON text. Values are keyed by
 *   `field_key` on purpose, not by the schema's id: a rename copies the stored values from the
 *   old key to the new one in batches, then switches the schema's key in one transaction, so a
 *   reader that joins schema and values by key always sees the claim under exactly one key.
 *   The (tenant_id, field_key, user_id) index pages the users holding a key (the rename's batches).
 * Times are epoch milliseconds, like every other table.
 */
export class CustomClaims1763769600015 implements MigrationInterface {
  name = 'CustomClaims1763769600015';

  async up(qr: QueryRunner): Promise<void> {
    const x = tableSuffix(qr);
    await runAll(qr, [
      `CREATE TABLE custom_claim_schemas (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        field_key VARCHAR(64) NOT NULL,
        display_label VARCHAR(200) NOT NULL,
        field_type VARCHAR(16) NOT NULL,
        cardinality VARCHAR(8) NOT NULL,
        is_pii INTEGER NOT NULL,
        is_required INTEGER NOT NULL,
        is_active INTEGER NOT NULL,
        is_system INTEGER NOT NULL,
        operation_status VARCHAR(32) NOT NULL DEFAULT 'active',
        field_usage_bindings TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        CONSTRAINT fk_custom_claim_schemas_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      'CREATE UNIQUE INDEX ux_custom_claim_schemas_key ON custom_claim_schemas (tenant_id, field_key)',
      `CREATE TABLE custom_claim_values (
        tenant_id VARCHAR(40) NOT NULL,
        user_id VARCHAR(40) NOT NULL,
        field_key VARCHAR(64) NOT NULL,
        value_json TEXT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, user_id, field_key),
        CONSTRAINT fk_custom_claim_values_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      'CREATE INDEX ix_custom_claim_values_key ON custom_claim_values (tenant_id, field_key, user_id)',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    // Dropping a table drops its indexes (on MySQL an index that backs the tenant foreign key
    // could not be dropped on its own first).
    await runAll(qr, ['DROP TABLE custom_claim_values', 'DROP TABLE custom_claim_schemas']);
  }
}
