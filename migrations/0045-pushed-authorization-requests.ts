import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll, tableSuffix } from './dialect.js';

/**
 * Pushed authorization requests (RFC 9126) and signed request objects (RFC 9101), docs/par.md:
 *
 * - `pushed_auth_requests`: one row per push. `id` is the SHA-256 (base64url) of the random part
 *   of the `request_uri`, never the value itself; `params` the authorization parameters as
 *   validated at push time (JSON); `used_at` set once by the one /authorize that spends it (a
 *   conditional UPDATE, one winner across daemons). Purged after `expires_at` by the auth-purge job.
 * - `clients.require_pushed_authorization_requests` (RFC 9126 §6) and
 *   `clients.require_signed_request_object` (RFC 9101 §10.5): 0 for every existing client.
 *
 * The `jti` of a request object is spent in the replay table client assertions already use
 * (`revoked_access_tokens`, under a key prefix of its own), so no table of its own.
 */
export class PushedAuthorizationRequests1763769600045 implements MigrationInterface {
  name = 'PushedAuthorizationRequests1763769600045';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      `CREATE TABLE pushed_auth_requests (
        id VARCHAR(64) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        client_id VARCHAR(128) NOT NULL,
        params TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        used_at BIGINT NULL
      )${tableSuffix(qr)}`,
      'CREATE INDEX ix_pushed_auth_requests_expiry ON pushed_auth_requests (expires_at)',
      'ALTER TABLE clients ADD COLUMN require_pushed_authorization_requests INTEGER NOT NULL DEFAULT 0',
      'ALTER TABLE clients ADD COLUMN require_signed_request_object INTEGER NOT NULL DEFAULT 0',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'ALTER TABLE clients DROP COLUMN require_signed_request_object',
      'ALTER TABLE clients DROP COLUMN require_pushed_authorization_requests',
      'DROP TABLE pushed_auth_requests',
    ]);
  }
}
