import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMysql, runAll, tableSuffix } from './dialect.js';

/**
 * Personal data exports (POST /api/user/data-export): one row per export that was too large
 * to build inline, built later by the `data-export` job and deleted by `data-export-purge`
 * once `expires_at` has passed. `result` holds the built export (the user's own data, never
 * secrets); MySQL's TEXT stops at 64 KB, so it is LONGTEXT there.
 */
export class DataExports1763769600005 implements MigrationInterface {
  name = 'DataExports1763769600005';

  async up(qr: QueryRunner): Promise<void> {
    const x = tableSuffix(qr);
    const big = isMysql(qr) ? 'LONGTEXT' : 'TEXT';
    await runAll(qr, [
      `CREATE TABLE data_exports (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        user_id VARCHAR(40) NOT NULL,
        status VARCHAR(16) NOT NULL,
        format VARCHAR(8) NOT NULL,
        sections TEXT NOT NULL,
        result ${big} NULL,
        created_at BIGINT NOT NULL,
        completed_at BIGINT NULL,
        expires_at BIGINT NOT NULL
      )${x}`,
      // The builder's scan: pending rows, oldest first.
      `CREATE INDEX ix_data_exports_status ON data_exports (status, created_at)`,
      // The purge job's scan.
      `CREATE INDEX ix_data_exports_expiry ON data_exports (expires_at)`,
      `CREATE INDEX ix_data_exports_user ON data_exports (tenant_id, user_id)`,
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, ['DROP TABLE data_exports']);
  }
}
