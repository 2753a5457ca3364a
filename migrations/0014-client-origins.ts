import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMysql, runAll, tableSuffix } from './dialect.js';

/**
 * CORS for browser-based clients (docs/oauth.md, "CORS"):
 * - `clients.allowed_origins`: the web origins (JSON array) whose scripts may read the answers
 *   of /token, /revoke and /userinfo for this client. TEXT has no portable default, so the list
 *   is NULL for existing clients and read as empty.
 * - `client_origins`: the same origins, one row each, indexed by origin, so that a CORS
 *   preflight (which carries no client_id) can ask whether an origin is registered at all.
 */
export class ClientOrigins1763769600014 implements MigrationInterface {
  name = 'ClientOrigins1763769600014';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'ALTER TABLE clients ADD COLUMN allowed_origins TEXT NULL',
      `CREATE TABLE client_origins (
        tenant_id VARCHAR(40) NOT NULL,
        client_id VARCHAR(128) NOT NULL,
        origin VARCHAR(300) NOT NULL,
        PRIMARY KEY (tenant_id, client_id, origin),
        CONSTRAINT fk_client_origins_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${tableSuffix(qr)}`,
      'CREATE INDEX ix_client_origins_origin ON client_origins (origin)',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      isMysql(qr) ? 'DROP INDEX ix_client_origins_origin ON client_origins' : 'DROP INDEX ix_client_origins_origin',
      'DROP TABLE client_origins',
      'ALTER TABLE clients DROP COLUMN allowed_origins',
    ]);
  }
}
