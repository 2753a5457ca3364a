import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll } from './dialect.js';

/**
 * Per-client signing algorithms and PKCE (docs/oauth.md, "Signing algorithms" and "PKCE"):
 * - `clients.id_token_signed_response_alg`, `clients.userinfo_signed_response_alg` (OIDC
 *   Registration §2) and `clients.access_token_signed_response_alg`: one of ES256, RS256,
 *   PS256, EdDSA, or NULL. NULL keeps what every existing client has today: ES256 ID and
 *   access tokens and a plain JSON UserInfo answer.
 * - `clients.require_pkce`: 1 for every existing client (PKCE stays required); only a
 *   confidential client may be set to 0.
 * The signing keys need no new column: `signing_keys.alg` already names each key's algorithm,
 * and the daemon creates the RSA and Ed25519 keys at start.
 */
export class ClientSigning1763769600030 implements MigrationInterface {
  name = 'ClientSigning1763769600030';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'ALTER TABLE clients ADD COLUMN id_token_signed_response_alg VARCHAR(16) NULL',
      'ALTER TABLE clients ADD COLUMN userinfo_signed_response_alg VARCHAR(16) NULL',
      'ALTER TABLE clients ADD COLUMN access_token_signed_response_alg VARCHAR(16) NULL',
      'ALTER TABLE clients ADD COLUMN require_pkce INTEGER NOT NULL DEFAULT 1',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'ALTER TABLE clients DROP COLUMN require_pkce',
      'ALTER TABLE clients DROP COLUMN access_token_signed_response_alg',
      'ALTER TABLE clients DROP COLUMN userinfo_signed_response_alg',
      'ALTER TABLE clients DROP COLUMN id_token_signed_response_alg',
    ]);
  }
}
