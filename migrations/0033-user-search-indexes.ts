import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMysql, runAll } from './dialect.js';

/**
 * The admin user list's order and keyset (docs/directory.md, "Users: read, search, edit"):
 * `WHERE tenant_id = ? AND (created_at, id) > cursor ORDER BY created_at, id` reads this index
 * in order instead of sorting the tenant's users for every page. The email filters use the
 * unique (tenant_id, email) index that 0001 made.
 */
export class UserSearchIndexes1763769600033 implements MigrationInterface {
  name = 'UserSearchIndexes1763769600033';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, ['CREATE INDEX ix_users_tenant_created ON users (tenant_id, created_at, id)']);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      isMysql(qr) ? 'DROP INDEX ix_users_tenant_created ON users' : 'DROP INDEX ix_users_tenant_created',
    ]);
  }
}
