import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll, tableSuffix } from './dialect.js';

/**
 * Passkeys (docs/passkeys.md):
 * - `passkeys`: a user's WebAuthn credentials. The credential id is up to 1023 bytes (WebAuthn
 *   §5.8.3), 1366 characters in base64url; MySQL cannot index a varchar that long in a unique
 *   key, so `credential_hash` (its SHA-256, hex) is the key with the tenant. `user_handle` is the
 *   opaque user.id given at registration, kept per credential so it never depends on a key
 *   that may rotate. `counter` is the last signature counter seen (WebAuthn §6.1.1).
 * - `webauthn_challenges`: registration and authentication challenges, single use (a
 *   conditional UPDATE of `consumed_at` with one winner) and short lived; the auth purge
 *   deletes them once expired.
 * - `direct_auth_artifacts.passkey_id` / `.acr`: an artifact from a passkey names its passkey
 *   (redemption re-checks that it is still registered) and carries the acr the session gets;
 *   NULL acr means the email code's (artifacts made before this migration).
 */
export class Passkeys1763769600024 implements MigrationInterface {
  name = 'Passkeys1763769600024';

  async up(qr: QueryRunner): Promise<void> {
    const s = tableSuffix(qr);
    await runAll(qr, [
      `CREATE TABLE passkeys (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        user_id VARCHAR(40) NOT NULL,
        credential_id VARCHAR(1366) NOT NULL,
        credential_hash VARCHAR(64) NOT NULL,
        user_handle VARCHAR(128) NOT NULL,
        public_key TEXT NOT NULL,
        counter BIGINT NOT NULL,
        transports TEXT NOT NULL,
        device_type VARCHAR(16) NOT NULL,
        backed_up INTEGER NOT NULL,
        aaguid VARCHAR(36) NOT NULL,
        name VARCHAR(64) NOT NULL,
        created_at BIGINT NOT NULL,
        last_used_at BIGINT NULL,
        CONSTRAINT fk_passkeys_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${s}`,
      'CREATE UNIQUE INDEX ux_passkeys_credential ON passkeys (tenant_id, credential_hash)',
      'CREATE INDEX ix_passkeys_user ON passkeys (tenant_id, user_id)',
      `CREATE TABLE webauthn_challenges (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        purpose VARCHAR(16) NOT NULL,
        challenge VARCHAR(128) NOT NULL,
        user_id VARCHAR(40) NULL,
        session_id VARCHAR(64) NULL,
        client_id VARCHAR(128) NULL,
        auth_request_id VARCHAR(64) NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        consumed_at BIGINT NULL,
        CONSTRAINT fk_webauthn_challenges_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${s}`,
      'CREATE INDEX ix_webauthn_challenges_expiry ON webauthn_challenges (expires_at)',
      'ALTER TABLE direct_auth_artifacts ADD COLUMN passkey_id VARCHAR(40) NULL',
      'ALTER TABLE direct_auth_artifacts ADD COLUMN acr VARCHAR(64) NULL',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    // DROP TABLE takes the table's indexes with it (see 0023).
    await runAll(qr, [
      'ALTER TABLE direct_auth_artifacts DROP COLUMN acr',
      'ALTER TABLE direct_auth_artifacts DROP COLUMN passkey_id',
      'DROP TABLE webauthn_challenges',
      'DROP TABLE passkeys',
    ]);
  }
}
