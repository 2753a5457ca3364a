import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll } from './dialect.js';

/**
 * The FAPI 2.0 profile switch (docs/fapi.md): `clients.fapi_profile`, the client's own choice
 * of profile (`off`, `fapi2-security`, `fapi2-message-signing`), NULL for every existing client:
 * NULL follows the tenant's `fapi` settings section, which is JSON in `tenants.settings` and
 * needs no column.
 */
export class FapiProfile1763769600048 implements MigrationInterface {
  name = 'FapiProfile1763769600048';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, ['ALTER TABLE clients ADD COLUMN fapi_profile VARCHAR(32) NULL']);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, ['ALTER TABLE clients DROP COLUMN fapi_profile']);
  }
}
