import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll } from './dialect.js';

/**
 * Resource servers: the resource identifiers (token audiences) a client serves, and whether
 * introspection by it validates audience strictly. TEXT has no portable default, so the list
 * is NULL for existing clients and read as empty.
 */
export class ResourceServers1763769600004 implements MigrationInterface {
  name = 'ResourceServers1763769600004';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'ALTER TABLE clients ADD COLUMN resource_identifiers TEXT NULL',
      'ALTER TABLE clients ADD COLUMN strict_introspection INTEGER NOT NULL DEFAULT 0',
      `CREATE INDEX ix_revoked_access_tokens_expiry ON revoked_access_tokens (expires_at)`,
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'DROP INDEX ix_revoked_access_tokens_expiry' +
        (qr.connection.options.type === 'mysql' ? ' ON revoked_access_tokens' : ''),
      'ALTER TABLE clients DROP COLUMN strict_introspection',
      'ALTER TABLE clients DROP COLUMN resource_identifiers',
    ]);
  }
}
