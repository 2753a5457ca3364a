import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll } from './dialect.js';

/**
 * A client's logo (OpenID Connect Dynamic Client Registration §2 `logo_uri`), which the user's
 * list of consents shows beside the client's name (`clientLogoUri`). 2048 characters: the
 * interface's bound for `logo_uri`.
 */
export class ClientLogo1763769600012 implements MigrationInterface {
  name = 'ClientLogo1763769600012';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, ['ALTER TABLE clients ADD COLUMN logo_uri VARCHAR(2048) NULL']);
  }

  async down(qr: QueryRunner): Promise<void> {
    // SQLite has had DROP COLUMN since 3.35; both dialects take the same statement.
    await runAll(qr, ['ALTER TABLE clients DROP COLUMN logo_uri']);
  }
}
