import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMysql, runAll, tableSuffix } from './dialect.js';

/**
 * The entity inventory of SAML federation trust sources (docs/federation.md, "Polling"):
 * - `federation_inventories`: per trust source, the last good verified copy: which generation
 *   of `federation_entities` is live, the copy's validUntil and cacheDuration, the certificate
 *   that verified it and when. One row per source.
 * - `federation_entities`: one row per entity of a generation. A successful poll writes a new
 *   generation in short batches (invisible while its number is not the live one), flips
 *   `active_generation` in one statement, then deletes the old generation: readers see the old
 *   copy or the new one, never half of one, and no transaction holds the database for the
 *   whole 10,000-entity write. `entity_hash` (SHA-256 hex of the entityID) keys the lookups,
 *   since an entityID may be longer than an index allows.
 */
export class FederationEntities1763769600021 implements MigrationInterface {
  name = 'FederationEntities1763769600021';

  async up(qr: QueryRunner): Promise<void> {
    const x = tableSuffix(qr);
    const text = isMysql(qr) ? 'MEDIUMTEXT' : 'TEXT';
    await runAll(qr, [
      `CREATE TABLE federation_inventories (
        tenant_id VARCHAR(40) NOT NULL,
        trust_source_id VARCHAR(40) NOT NULL,
        active_generation INTEGER NOT NULL,
        valid_until BIGINT NULL,
        cache_duration_seconds INTEGER NULL,
        entity_count INTEGER NOT NULL,
        signing_fingerprint VARCHAR(64) NOT NULL,
        content_hash VARCHAR(64) NOT NULL,
        fetched_at BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, trust_source_id),
        CONSTRAINT fk_federation_inventories_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      `CREATE TABLE federation_entities (
        tenant_id VARCHAR(40) NOT NULL,
        trust_source_id VARCHAR(40) NOT NULL,
        generation INTEGER NOT NULL,
        entity_hash VARCHAR(64) NOT NULL,
        entity_id VARCHAR(2048) NOT NULL,
        roles VARCHAR(64) NOT NULL,
        registration_authority VARCHAR(1024) NULL,
        entity_categories ${text} NOT NULL,
        entity_category_support ${text} NOT NULL,
        hide_from_discovery INTEGER NOT NULL,
        sirtfi INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, trust_source_id, generation, entity_hash),
        CONSTRAINT fk_federation_entities_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      'CREATE INDEX ix_federation_entities_entity ON federation_entities (tenant_id, entity_hash)',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    // DROP TABLE takes the table's indexes with it; dropping one first fails on MySQL when a
    // foreign key needs it (ER_DROP_INDEX_FK).
    await runAll(qr, ['DROP TABLE federation_entities', 'DROP TABLE federation_inventories']);
  }
}
