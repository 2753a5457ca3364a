import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll } from './dialect.js';

/**
 * Whether a user's address is verified (OIDC Core §5.1 `email_verified`), as the user record's
 * own fact instead of a constant. 1 for every existing user and by default: an operator gives
 * an address on their own authority, and both sign-ups prove theirs (an email code, or an
 * upstream provider that said `email_verified: true`). An upstream sign-in records what the
 * upstream says of the same address each time (shared/services/upstream-idp/broker.ts), and an
 * email code sign-in sets it back to 1 (docs/claims.md, "Standard claims").
 */
export class UserEmailVerified1763769600032 implements MigrationInterface {
  name = 'UserEmailVerified1763769600032';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, ['ALTER TABLE users ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 1']);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, ['ALTER TABLE users DROP COLUMN email_verified']);
  }
}
