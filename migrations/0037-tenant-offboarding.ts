import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMysql, runAll } from './dialect.js';

/**
 * Tenant offboarding (docs/tenant-lifecycle.md, "Offboarding"):
 * - `tenants.purge_after`: when a tenant in `pending_deletion` becomes due for the purge (epoch
 *   ms; NULL in every other state). The purge job's queue reads it with the state.
 * - `tenants.offboarded_from`: the state the tenant was in when it was offboarded (`active` or
 *   `suspended`), where a restore takes it back. NULL when not offboarded.
 */
export class TenantOffboarding1763769600037 implements MigrationInterface {
  name = 'TenantOffboarding1763769600037';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'ALTER TABLE tenants ADD COLUMN purge_after BIGINT NULL',
      'ALTER TABLE tenants ADD COLUMN offboarded_from VARCHAR(32) NULL',
      'CREATE INDEX ix_tenants_purge ON tenants (lifecycle_state, purge_after)',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      isMysql(qr) ? 'DROP INDEX ix_tenants_purge ON tenants' : 'DROP INDEX ix_tenants_purge',
      'ALTER TABLE tenants DROP COLUMN offboarded_from',
      'ALTER TABLE tenants DROP COLUMN purge_after',
    ]);
  }
}
