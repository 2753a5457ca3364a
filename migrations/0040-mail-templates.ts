import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll, tableSuffix } from './dialect.js';

/**
 * A tenant's overrides of its mail templates (docs/email.md, "Templates"): one row per mail kind
 * and locale, each part (subject, text, HTML) NULL when the tenant keeps the default. TEXT holds
 * up to 64 KiB on MariaDB, above the service's bound of 32 000 characters per part.
 * `last_error` is the last failure to use the stored template at send time (the default was
 * sent instead), shown to operators by the admin API; NULL once a send used it again, or after a
 * new PUT.
 */
export class MailTemplates1763769600040 implements MigrationInterface {
  name = 'MailTemplates1763769600040';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      `CREATE TABLE mail_templates (
        tenant_id VARCHAR(40) NOT NULL,
        kind VARCHAR(64) NOT NULL,
        locale VARCHAR(16) NOT NULL,
        subject TEXT NULL,
        text_body TEXT NULL,
        html_body TEXT NULL,
        last_error VARCHAR(500) NULL,
        last_error_at BIGINT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, kind, locale)
      )${tableSuffix(qr)}`,
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, ['DROP TABLE mail_templates']);
  }
}
