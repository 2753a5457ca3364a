import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll, tableSuffix } from './dialect.js';

/**
 * Agent grants and agent-safe client metadata (docs/agents.md):
 * - `clients.description`, `clients.client_uri`: the public metadata an agent may write
 *   (OIDC Dynamic Client Registration §2 `client_uri`; 1000 and 2048 characters, the interface's bounds).
 * - `agent_grants`: what a user granted an agent client (RFC 9396 authorization_details), with
 *   its generation and consent version, its immutable part and the principals' ceilings.
 * - `agent_grant_consents`: one row per consent version; a PATCH revokes the prior one.
 * - `agent_grant_tokens`: each access token issued under a grant (its own token family: a
 *   client_credentials token has no refresh token), with the generation it carries, so the
 *   revocation outbox job can revoke the families of superseded generations.
 */
export class AgentGrants1763769600023 implements MigrationInterface {
  name = 'AgentGrants1763769600023';

  async up(qr: QueryRunner): Promise<void> {
    const s = tableSuffix(qr);
    await runAll(qr, [
      'ALTER TABLE clients ADD COLUMN description VARCHAR(1000) NULL',
      'ALTER TABLE clients ADD COLUMN client_uri VARCHAR(2048) NULL',
      `CREATE TABLE agent_grants (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        client_id VARCHAR(128) NOT NULL,
        grantor_user_id VARCHAR(40) NOT NULL,
        delegator_user_id VARCHAR(40) NULL,
        machine_principal_id VARCHAR(128) NULL,
        authorization_details TEXT NOT NULL,
        purpose VARCHAR(500) NULL,
        expires_at BIGINT NOT NULL,
        status VARCHAR(16) NOT NULL,
        generation INTEGER NOT NULL,
        consent_version INTEGER NOT NULL,
        immutable_terms TEXT NOT NULL,
        ceilings TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        CONSTRAINT fk_agent_grants_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${s}`,
      'CREATE INDEX ix_agent_grants_client ON agent_grants (tenant_id, client_id)',
      `CREATE TABLE agent_grant_consents (
        tenant_id VARCHAR(40) NOT NULL,
        grant_id VARCHAR(40) NOT NULL,
        consent_version INTEGER NOT NULL,
        granted_at BIGINT NOT NULL,
        revoked_at BIGINT NULL,
        PRIMARY KEY (tenant_id, grant_id, consent_version),
        CONSTRAINT fk_agent_grant_consents_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${s}`,
      `CREATE TABLE agent_grant_tokens (
        tenant_id VARCHAR(40) NOT NULL,
        jti VARCHAR(64) NOT NULL,
        grant_id VARCHAR(40) NOT NULL,
        generation INTEGER NOT NULL,
        expires_at BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        revoked_at BIGINT NULL,
        PRIMARY KEY (tenant_id, jti),
        CONSTRAINT fk_agent_grant_tokens_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${s}`,
      'CREATE INDEX ix_agent_grant_tokens_grant ON agent_grant_tokens (tenant_id, grant_id, generation)',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    // DROP TABLE takes the table's indexes with it; dropping one first fails on MySQL when a
    // foreign key needs it (ER_DROP_INDEX_FK).
    await runAll(qr, [
      'DROP TABLE agent_grant_tokens',
      'DROP TABLE agent_grant_consents',
      'DROP TABLE agent_grants',
      'ALTER TABLE clients DROP COLUMN client_uri',
      'ALTER TABLE clients DROP COLUMN description',
    ]);
  }
}
