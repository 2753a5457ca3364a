import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll, tableSuffix } from './dialect.js';

/**
 * Identity brokering: signing in through a tenant's upstream OpenID providers
 * (docs/identity-providers.md).
 * - `upstream_identity_providers`: a tenant's registered upstream OpenID Provider (issuer, our
 *   client there, its secret sealed with AES-256-GCM under a key named by `secret_key_id`).
 *   One registration per (tenant, issuer, client_id).
 * - `upstream_identity_links`: a local user linked to an upstream subject (`iss` + `sub`,
 *   OpenID Connect Core §5.7: the only stable identifier of an end user at an OP), and the
 *   upstream tokens of the last sign-in or refresh, each sealed (AEAD) under the key `key_id`
 *   with the row id and column name as additional data, so a sealed value copied into another
 *   row or column does not open. `lease_holder`/`lease_until` let one scanner at a time refresh
 *   a link; the (state, access_expires_at) index serves the scan for due links.
 * - `upstream_login_states`: a pending upstream authorization request (state, nonce, PKCE
 *   verifier) of the authorization request `auth_request_id` it continues, bound to the browser
 *   that started it (`binding`: the hash of a cookie), single use and short-lived.
 */
export class UpstreamIdps1763769600018 implements MigrationInterface {
  name = 'UpstreamIdps1763769600018';

  async up(qr: QueryRunner): Promise<void> {
    const x = tableSuffix(qr);
    await runAll(qr, [
      `CREATE TABLE upstream_identity_providers (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        slug VARCHAR(64) NOT NULL,
        display_name VARCHAR(100) NOT NULL,
        issuer VARCHAR(2048) NOT NULL,
        issuer_hash VARCHAR(64) NOT NULL,
        client_id VARCHAR(255) NOT NULL,
        client_secret_sealed TEXT NOT NULL,
        secret_key_id VARCHAR(40) NOT NULL,
        scopes VARCHAR(1000) NOT NULL,
        link_by_verified_email INTEGER NOT NULL DEFAULT 0,
        status VARCHAR(16) NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        CONSTRAINT fk_upstream_idps_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      // A VARCHAR(2048) issuer does not fit a MySQL index key (3072 bytes in utf8mb4), so the
      // uniqueness of (tenant, issuer, client_id) is kept on the SHA-256 of the issuer.
      `CREATE UNIQUE INDEX ux_upstream_idps_issuer_client
         ON upstream_identity_providers (tenant_id, issuer_hash, client_id)`,
      'CREATE UNIQUE INDEX ux_upstream_idps_slug ON upstream_identity_providers (tenant_id, slug)',
      `CREATE TABLE upstream_identity_links (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        provider_id VARCHAR(40) NOT NULL,
        user_id VARCHAR(40) NOT NULL,
        upstream_iss VARCHAR(2048) NOT NULL,
        upstream_sub VARCHAR(255) NOT NULL,
        access_token_sealed TEXT NOT NULL,
        refresh_token_sealed TEXT NULL,
        id_token_sealed TEXT NULL,
        key_id VARCHAR(40) NOT NULL,
        access_expires_at BIGINT NULL,
        state VARCHAR(32) NOT NULL,
        lease_holder VARCHAR(64) NULL,
        lease_until BIGINT NULL,
        last_refreshed_at BIGINT NULL,
        refresh_failures INTEGER NOT NULL DEFAULT 0,
        last_error_code VARCHAR(64) NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        CONSTRAINT fk_upstream_links_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id),
        CONSTRAINT fk_upstream_links_provider FOREIGN KEY (provider_id) REFERENCES upstream_identity_providers (id),
        CONSTRAINT fk_upstream_links_user FOREIGN KEY (user_id) REFERENCES users (id)
      )${x}`,
      'CREATE UNIQUE INDEX ux_upstream_links_sub ON upstream_identity_links (tenant_id, provider_id, upstream_sub)',
      'CREATE INDEX ix_upstream_links_user ON upstream_identity_links (tenant_id, user_id)',
      'CREATE INDEX ix_upstream_links_due ON upstream_identity_links (state, access_expires_at)',
      `CREATE TABLE upstream_login_states (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        provider_id VARCHAR(40) NOT NULL,
        state_hash VARCHAR(64) NOT NULL,
        auth_request_id VARCHAR(64) NOT NULL,
        binding VARCHAR(64) NOT NULL,
        nonce VARCHAR(64) NOT NULL,
        code_verifier_sealed TEXT NOT NULL,
        key_id VARCHAR(40) NOT NULL,
        user_hint VARCHAR(40) NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        consumed_at BIGINT NULL,
        CONSTRAINT fk_upstream_states_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      'CREATE UNIQUE INDEX ux_upstream_states_state ON upstream_login_states (state_hash)',
      'CREATE INDEX ix_upstream_states_expiry ON upstream_login_states (expires_at)',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    // Dropping a table drops its indexes on both dialects; children first for the foreign keys.
    await runAll(qr, [
      'DROP TABLE upstream_login_states',
      'DROP TABLE upstream_identity_links',
      'DROP TABLE upstream_identity_providers',
    ]);
  }
}
