import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll } from './dialect.js';

/**
 * A sanitised cause beside each stored error code (shared/services/failure.ts), so that an
 * operator whose tenant is blocked at `mail_transport_verified` reads why: refused, timed out,
 * TLS, authentication. The outbox already kept a cause in `last_error`; it gains the code.
 */
export class ErrorCauses1763769600010 implements MigrationInterface {
  name = 'ErrorCauses1763769600010';

  async up(qr: QueryRunner): Promise<void> {
    const cause = 'VARCHAR(300) NULL';
    await runAll(qr, [
      `ALTER TABLE provisioning_operations ADD COLUMN last_error_cause ${cause}`,
      `ALTER TABLE provisioning_steps ADD COLUMN last_error_cause ${cause}`,
      `ALTER TABLE provisioning_events ADD COLUMN error_cause ${cause}`,
      `ALTER TABLE tenant_recovery_operations ADD COLUMN last_error_cause ${cause}`,
      `ALTER TABLE outbox ADD COLUMN last_error_code VARCHAR(64) NULL`,
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    // SQLite has had DROP COLUMN since 3.35; both dialects take the same statement.
    const drop = (table: string, column: string) => `ALTER TABLE ${table} DROP COLUMN ${column}`;
    await runAll(qr, [
      drop('outbox', 'last_error_code'),
      drop('tenant_recovery_operations', 'last_error_cause'),
      drop('provisioning_events', 'error_cause'),
      drop('provisioning_steps', 'last_error_cause'),
      drop('provisioning_operations', 'last_error_cause'),
    ]);
  }
}
