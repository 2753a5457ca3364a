import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMysql, runAll } from './dialect.js';

/**
 * The reads of the sign-in history (docs/directory.md, "Sign-in history"): a tenant's sign-ins
 * newest first, keyset-paged over (created_at, id), and the purge of rows past the retention
 * (shared/services/auth/purge.ts), which deletes by created_at across tenants. A user's own
 * sign-ins use the index of 0003 (tenant_id, user_id, created_at). The method needs no column:
 * the event already names it (shared/services/auth/history.ts, SIGN_IN_EVENTS).
 */
export class SignInHistory1763769600038 implements MigrationInterface {
  name = 'SignInHistory1763769600038';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'CREATE INDEX ix_auth_history_tenant ON auth_history (tenant_id, created_at, id)',
      'CREATE INDEX ix_auth_history_created ON auth_history (created_at)',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    const drop = (name: string) => (isMysql(qr) ? `DROP INDEX ${name} ON auth_history` : `DROP INDEX ${name}`);
    await runAll(qr, [drop('ix_auth_history_created'), drop('ix_auth_history_tenant')]);
  }
}
