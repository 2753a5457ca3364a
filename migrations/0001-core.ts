import type { MigrationInterface, QueryRunner } from 'typeorm';
import { appendOnlyTriggers, runAll, tableSuffix } from './dialect.js';

/** Tenants, clients, users, signing keys, the append-only audit log and service metadata. */
export class Core1763769600001 implements MigrationInterface {
  name = 'Core1763769600001';

  async up(qr: QueryRunner): Promise<void> {
    const x = tableSuffix(qr);
    await runAll(qr, [
      `CREATE TABLE tenants (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        name VARCHAR(200) NOT NULL,
        lifecycle_state VARCHAR(32) NOT NULL,
        settings TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      )${x}`,
      `CREATE TABLE clients (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        client_id VARCHAR(128) NOT NULL,
        name VARCHAR(200) NOT NULL,
        client_type VARCHAR(16) NOT NULL,
        secret_hash VARCHAR(128) NULL,
        redirect_uris TEXT NOT NULL,
        grant_types TEXT NOT NULL,
        scopes TEXT NOT NULL,
        audiences TEXT NOT NULL,
        first_party INTEGER NOT NULL,
        status VARCHAR(16) NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        CONSTRAINT fk_clients_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      `CREATE UNIQUE INDEX ux_clients_client_id ON clients (client_id)`,
      `CREATE INDEX ix_clients_tenant ON clients (tenant_id, created_at)`,
      `CREATE TABLE users (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        email VARCHAR(320) NOT NULL,
        name VARCHAR(200) NOT NULL,
        status VARCHAR(16) NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        CONSTRAINT fk_users_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      `CREATE UNIQUE INDEX ux_users_tenant_email ON users (tenant_id, email)`,
      `CREATE TABLE signing_keys (
        kid VARCHAR(64) NOT NULL PRIMARY KEY,
        alg VARCHAR(16) NOT NULL,
        status VARCHAR(16) NOT NULL,
        public_jwk TEXT NOT NULL,
        private_jwk_sealed TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        retire_at BIGINT NULL,
        updated_at BIGINT NOT NULL
      )${x}`,
      `CREATE TABLE audit_events (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NULL,
        actor_type VARCHAR(32) NOT NULL,
        actor_id VARCHAR(128) NOT NULL,
        action VARCHAR(64) NOT NULL,
        target_type VARCHAR(32) NOT NULL,
        target_id VARCHAR(128) NOT NULL,
        outcome VARCHAR(16) NOT NULL,
        request_id VARCHAR(64) NULL,
        summary TEXT NOT NULL,
        created_at BIGINT NOT NULL
      )${x}`,
      `CREATE INDEX ix_audit_tenant_time ON audit_events (tenant_id, created_at)`,
      ...appendOnlyTriggers(qr, 'audit_events'),
      `CREATE TABLE service_meta (
        name VARCHAR(64) NOT NULL PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at BIGINT NOT NULL
      )${x}`,
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'DROP TABLE service_meta',
      'DROP TABLE audit_events',
      'DROP TABLE signing_keys',
      'DROP TABLE users',
      'DROP TABLE clients',
      'DROP TABLE tenants',
    ]);
  }
}
