import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll } from './dialect.js';

/**
 * Client authentication methods (docs/oauth.md, "Client authentication"):
 * - `clients.token_endpoint_auth_method` (OIDC Dynamic Client Registration §2): the one method
 *   a client authenticates with at /token, /revoke and /introspect. Clients registered before
 *   it are confidential → `client_secret_basic` (the registration default, which also accepts
 *   the secret in the form body) and public → `none`, so every existing client keeps working.
 * - `clients.jwks` / `clients.jwks_uri`: the public keys of a `private_key_jwt` client
 *   (RFC 7523 §2.2), inline or at an https URL fetched at runtime. At most one is set.
 */
export class ClientAuth1763769600013 implements MigrationInterface {
  name = 'ClientAuth1763769600013';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      "ALTER TABLE clients ADD COLUMN token_endpoint_auth_method VARCHAR(32) NOT NULL DEFAULT 'client_secret_basic'",
      "UPDATE clients SET token_endpoint_auth_method = 'none' WHERE client_type = 'public'",
      'ALTER TABLE clients ADD COLUMN jwks TEXT NULL',
      'ALTER TABLE clients ADD COLUMN jwks_uri VARCHAR(2048) NULL',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'ALTER TABLE clients DROP COLUMN jwks_uri',
      'ALTER TABLE clients DROP COLUMN jwks',
      'ALTER TABLE clients DROP COLUMN token_endpoint_auth_method',
    ]);
  }
}
