import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMysql, runAll, tableSuffix } from './dialect.js';

/**
 * A client's secrets in a table of their own (docs/directory.md, "Clients"), so a secret can be
 * rotated with an overlap: the new one and the old ones authenticate until the old ones expire,
 * and any one can be revoked at once.
 * - `client_secrets`: one row per secret, only its keyed hash (shared/crypto.ts SecretHasher);
 *   `client_id` is the client's public client_id, as in the other tables that name a client.
 *   `expires_at` NULL: no expiry; `revoked_at` set: refused at once.
 * - every existing `clients.secret_hash` moves there (id `csec_` + the client's row id, no
 *   expiry), and the column goes.
 * - `clients.tokens_revoked_before`: a watermark, in seconds. Access tokens of the client issued
 *   at or before it (`iat`) are inactive, whatever the client's state: what a disable or a
 *   delete leaves behind for the JWTs already out, which no row lists.
 * down puts each client's newest live secret back on its row.
 */
export class ClientSecrets1763769600036 implements MigrationInterface {
  name = 'ClientSecrets1763769600036';

  async up(qr: QueryRunner): Promise<void> {
    const idOf = isMysql(qr) ? "CONCAT('csec_', id)" : "'csec_' || id";
    await runAll(qr, [
      `CREATE TABLE client_secrets (
        id VARCHAR(64) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        client_id VARCHAR(128) NOT NULL,
        secret_hash VARCHAR(128) NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NULL,
        revoked_at BIGINT NULL
      )${tableSuffix(qr)}`,
      'CREATE INDEX ix_client_secrets_client ON client_secrets (tenant_id, client_id)',
      `INSERT INTO client_secrets (id, tenant_id, client_id, secret_hash, created_at, expires_at, revoked_at)
         SELECT ${idOf}, tenant_id, client_id, secret_hash, created_at, NULL, NULL
           FROM clients WHERE secret_hash IS NOT NULL`,
      'ALTER TABLE clients DROP COLUMN secret_hash',
      'ALTER TABLE clients ADD COLUMN tokens_revoked_before BIGINT NULL',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'ALTER TABLE clients DROP COLUMN tokens_revoked_before',
      'ALTER TABLE clients ADD COLUMN secret_hash VARCHAR(128) NULL',
      `UPDATE clients SET secret_hash = (
         SELECT s.secret_hash FROM client_secrets s
          WHERE s.tenant_id = clients.tenant_id AND s.client_id = clients.client_id AND s.revoked_at IS NULL
          ORDER BY s.created_at DESC, s.id DESC LIMIT 1)`,
      'DROP TABLE client_secrets',
    ]);
  }
}
