import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll, tableSuffix } from './dialect.js';

/**
 * Dynamic client registration (RFC 7591) and its management protocol (RFC 7592); docs/registration.md.
 * - `clients.registered_via`: how the client came to be (`dynamic`; NULL = the admin API or
 *   the CLI), and `policy_uri`, `tos_uri` (RFC 7591 §2), shown by the consent page as the app's
 *   own claims.
 * - `client_registrations`: one row per dynamically registered client: the SHA-256 of its
 *   registration access token (RFC 7592 §3), what it was registered through (the initial access
 *   token's id, or none for an anonymous registration), the RFC 7591 metadata the clients table
 *   has no column for, and `used_at`, when a token was first seen issued to it (the unused-client
 *   expiry spares it from then on).
 * - `initial_access_tokens`: the operator's tokens that open registration in a tenant
 *   (RFC 7591 §3): SHA-256 of the value, uses counted against `max_uses` by a conditional UPDATE.
 */
export class DynamicRegistration1763769600042 implements MigrationInterface {
  name = 'DynamicRegistration1763769600042';

  async up(qr: QueryRunner): Promise<void> {
    const x = tableSuffix(qr);
    await runAll(qr, [
      'ALTER TABLE clients ADD COLUMN registered_via VARCHAR(24) NULL',
      'ALTER TABLE clients ADD COLUMN policy_uri VARCHAR(2048) NULL',
      'ALTER TABLE clients ADD COLUMN tos_uri VARCHAR(2048) NULL',
      `CREATE TABLE client_registrations (
        tenant_id VARCHAR(40) NOT NULL,
        client_id VARCHAR(128) NOT NULL,
        access_token_hash VARCHAR(64) NOT NULL,
        initial_access_token_id VARCHAR(40) NULL,
        application_type VARCHAR(16) NOT NULL,
        software_id VARCHAR(255) NULL,
        software_version VARCHAR(255) NULL,
        contacts TEXT NULL,
        client_secret_expires_at BIGINT NOT NULL,
        used_at BIGINT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, client_id)
      )${x}`,
      'CREATE INDEX ix_client_registrations_unused ON client_registrations (tenant_id, used_at, created_at)',
      `CREATE TABLE initial_access_tokens (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        token_hash VARCHAR(64) NOT NULL,
        max_uses INTEGER NOT NULL,
        uses INTEGER NOT NULL,
        scope_ceiling TEXT NULL,
        created_by VARCHAR(128) NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
      )${x}`,
      'CREATE UNIQUE INDEX ux_initial_access_tokens_hash ON initial_access_tokens (token_hash)',
      'CREATE INDEX ix_initial_access_tokens_tenant ON initial_access_tokens (tenant_id, created_at)',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'DROP TABLE initial_access_tokens',
      'DROP TABLE client_registrations',
      'ALTER TABLE clients DROP COLUMN tos_uri',
      'ALTER TABLE clients DROP COLUMN policy_uri',
      'ALTER TABLE clients DROP COLUMN registered_via',
    ]);
  }
}
