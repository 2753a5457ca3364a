import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll } from './dialect.js';

/**
 * Protected resource metadata (RFC 9728) a resource server has the service host for it
 * (docs/mcp.md): the JSON document, on the resource server's own client row, NULL for none.
 * One document per client: RFC 9728 §3 has one per resource identifier, and the document names
 * the one `resource` it describes, which must be one of the client's resource identifiers.
 * TEXT on both dialects (a document is bounded to 16 KiB by the service).
 */
export class ResourceMetadata1763769600044 implements MigrationInterface {
  name = 'ResourceMetadata1763769600044';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, ['ALTER TABLE clients ADD COLUMN resource_metadata TEXT NULL']);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, ['ALTER TABLE clients DROP COLUMN resource_metadata']);
  }
}
