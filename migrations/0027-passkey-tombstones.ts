import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll, tableSuffix } from './dialect.js';

/**
 * Passkey tombstones (docs/passkeys.md, "`webauthn_signal` and what a client should do"):
 * one row per passkey a tenant removed (its owner on the account page, or an operator), written
 * in the removal's transaction and kept for a bounded time (`expires_at`, 90 days; the auth
 * purge deletes it after). The unknown-credential signal, which makes the browser delete the
 * credential, is sent only for a credential that has a live tombstone in the tenant asked:
 * the RP ID is shared by every tenant, so a credential another tenant registered must never
 * be signalled as unknown here.
 * - `passkey_id` (the removed row's id, the key): what a direct-auth artifact names.
 * - `credential_hash` (SHA-256 of the credential id, hex, as in `passkeys`): what an assertion
 *   names; unique per tenant (a credential removed twice keeps its latest removal).
 */
export class PasskeyTombstones1763769600027 implements MigrationInterface {
  name = 'PasskeyTombstones1763769600027';

  async up(qr: QueryRunner): Promise<void> {
    const s = tableSuffix(qr);
    await runAll(qr, [
      `CREATE TABLE passkey_tombstones (
        passkey_id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        credential_hash VARCHAR(64) NOT NULL,
        removed_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        CONSTRAINT fk_passkey_tombstones_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${s}`,
      'CREATE UNIQUE INDEX ux_passkey_tombstones_credential ON passkey_tombstones (tenant_id, credential_hash)',
      'CREATE INDEX ix_passkey_tombstones_expiry ON passkey_tombstones (expires_at)',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    // DROP TABLE takes the table's indexes with it (see 0023).
    await runAll(qr, ['DROP TABLE passkey_tombstones']);
  }
}
