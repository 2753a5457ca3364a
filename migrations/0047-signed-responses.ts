import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll } from './dialect.js';

/**
 * Signed authorization and introspection responses (docs/jarm.md), the FAPI 2.0 Message
 * Signing profile's client metadata:
 * - `clients.authorization_signed_response_alg` (JARM §3): the algorithm of the client's JWT
 *   authorization responses (`response_mode=jwt`, `query.jwt`, `form_post.jwt`).
 * - `clients.introspection_signed_response_alg` (RFC 9701 §6): when set, /introspect answers
 *   this client with an `application/token-introspection+jwt` signed with it.
 * Each is one of ES256, RS256, PS256, EdDSA, or NULL. NULL keeps what every existing client has
 * today: a JWT response only when asked for, signed with the service's default, ES256.
 */
export class SignedResponses1763769600047 implements MigrationInterface {
  name = 'SignedResponses1763769600047';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'ALTER TABLE clients ADD COLUMN authorization_signed_response_alg VARCHAR(16) NULL',
      'ALTER TABLE clients ADD COLUMN introspection_signed_response_alg VARCHAR(16) NULL',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'ALTER TABLE clients DROP COLUMN introspection_signed_response_alg',
      'ALTER TABLE clients DROP COLUMN authorization_signed_response_alg',
    ]);
  }
}
