import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMysql, runAll, tableSuffix } from './dialect.js';

/**
 * DPoP (RFC 9449, docs/dpop.md):
 * - `dpop_proofs`: the proofs already seen, so a `jti` is refused the second time within the
 *   proof's lifetime by every daemon on the database (§11.1). The key is a hash of the key's
 *   thumbprint and the `jti` (unique by the primary key, written with INSERT … IGNORE and the
 *   affected rows counted); `expires_at` is when the proof could no longer be accepted, after
 *   which the auth-purge job deletes the row. Platform-level like `rate_limits`: a proof's key
 *   and jti belong to the key holder, not to a tenant, and one key space is the stricter rule.
 * - `auth_codes.dpop_jkt`: the `dpop_jkt` of the authorization request (§10), which the code
 *   redeems only with a proof of that key.
 * - `token_families.dpop_jkt`: the key a public client's refresh tokens are bound to (§5).
 */
export class Dpop1763769600046 implements MigrationInterface {
  name = 'Dpop1763769600046';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      `CREATE TABLE dpop_proofs (
        id VARCHAR(64) NOT NULL PRIMARY KEY,
        expires_at BIGINT NOT NULL
      )${tableSuffix(qr)}`,
      'CREATE INDEX ix_dpop_proofs_expiry ON dpop_proofs (expires_at)',
      'ALTER TABLE auth_codes ADD COLUMN dpop_jkt VARCHAR(64) NULL',
      'ALTER TABLE token_families ADD COLUMN dpop_jkt VARCHAR(64) NULL',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'ALTER TABLE token_families DROP COLUMN dpop_jkt',
      'ALTER TABLE auth_codes DROP COLUMN dpop_jkt',
      isMysql(qr) ? 'DROP INDEX ix_dpop_proofs_expiry ON dpop_proofs' : 'DROP INDEX ix_dpop_proofs_expiry',
      'DROP TABLE dpop_proofs',
    ]);
  }
}
