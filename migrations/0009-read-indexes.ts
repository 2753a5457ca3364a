import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMysql, runAll } from './dialect.js';

/**
 * Indexes for two reads that otherwise sort:
 * - the platform-wide audit listing (`GET /api/admin/audit` without a tenant; keyset over
 *   (created_at, id), newest first) scanned and sorted the whole append-only table;
 * - the sign-in code checks ask for an address's newest code (the resend interval, and the code
 *   to verify): with (tenant_id, email, created_at) that is one index step back from the end,
 *   where the old (tenant_id, email, consumed_at) index sorted every code of the address.
 */
export class ReadIndexes1763769600009 implements MigrationInterface {
  name = 'ReadIndexes1763769600009';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'CREATE INDEX ix_audit_time ON audit_events (created_at, id)',
      'CREATE INDEX ix_email_codes_recent ON email_codes (tenant_id, email, created_at)',
      isMysql(qr) ? 'DROP INDEX ix_email_codes_live ON email_codes' : 'DROP INDEX ix_email_codes_live',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    const drop = (name: string, table: string) =>
      isMysql(qr) ? `DROP INDEX ${name} ON ${table}` : `DROP INDEX ${name}`;
    await runAll(qr, [
      'CREATE INDEX ix_email_codes_live ON email_codes (tenant_id, email, consumed_at)',
      drop('ix_email_codes_recent', 'email_codes'),
      drop('ix_audit_time', 'audit_events'),
    ]);
  }
}
