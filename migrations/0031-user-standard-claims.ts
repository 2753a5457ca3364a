import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll } from './dialect.js';

/**
 * The OpenID Connect Core §5.1 standard claims a user record can hold beyond `name` and
 * `email` (given_name, family_name, …, phone_number, address; docs/claims.md, "Standard
 * claims"), as one JSON object in `users.standard_claims`. One column rather than fifteen: the claims
 * are read together (ID token, UserInfo) and never searched on; NULL is a user with none.
 */
export class UserStandardClaims1763769600031 implements MigrationInterface {
  name = 'UserStandardClaims1763769600031';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, ['ALTER TABLE users ADD COLUMN standard_claims TEXT NULL']);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, ['ALTER TABLE users DROP COLUMN standard_claims']);
  }
}
