import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMysql, runAll, tableSuffix } from './dialect.js';

/**
 * Throttling of the sign-in (docs/security.md):
 * - `rate_limits`: the budgets' counters (shared/repositories/rate-limits.ts), one row per
 *   budget key, so every daemon on the database shares them. The key is a hash (it may stand
 *   for an email address or an IP); `expire_at` ends the window (NULL: never).
 * - `email_codes.binding`: the hash of the login transaction that asked for the code (the
 *   authorization request, or the direct-auth API's binding), so a guess or a resend in one
 *   transaction never touches another transaction's code.
 */
export class Throttle1763769600011 implements MigrationInterface {
  name = 'Throttle1763769600011';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      `CREATE TABLE rate_limits (
        rl_key VARCHAR(64) NOT NULL PRIMARY KEY,
        points INTEGER NOT NULL,
        expire_at BIGINT NULL
      )${tableSuffix(qr)}`,
      'CREATE INDEX ix_rate_limits_expiry ON rate_limits (expire_at)',
      // Codes written before this migration belong to no transaction: '' matches no binding.
      "ALTER TABLE email_codes ADD COLUMN binding VARCHAR(64) NOT NULL DEFAULT ''",
      'CREATE INDEX ix_email_codes_binding ON email_codes (tenant_id, email, binding, created_at)',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      isMysql(qr) ? 'DROP INDEX ix_email_codes_binding ON email_codes' : 'DROP INDEX ix_email_codes_binding',
      'ALTER TABLE email_codes DROP COLUMN binding',
      'DROP TABLE rate_limits',
    ]);
  }
}
