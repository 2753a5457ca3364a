import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMysql, runAll, tableSuffix } from './dialect.js';

/**
 * Idempotency keys (daemon/middleware/koa-idempotency.ts): one row per (principal, route, key);
 * the unique index makes the first request the one winner. Rows expire after 24 h and the
 * `idempotency-purge` job deletes them. Tenant lifecycle jobs: one row per suspend/resume.
 */
export class IdempotencyLifecycle1763769600006 implements MigrationInterface {
  name = 'IdempotencyLifecycle1763769600006';

  async up(qr: QueryRunner): Promise<void> {
    const x = tableSuffix(qr);
    const big = isMysql(qr) ? 'MEDIUMTEXT' : 'TEXT';
    await runAll(qr, [
      `CREATE TABLE idempotency_keys (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NULL,
        principal VARCHAR(128) NOT NULL,
        route VARCHAR(255) NOT NULL,
        idem_key VARCHAR(255) NOT NULL,
        request_hash VARCHAR(64) NOT NULL,
        status VARCHAR(16) NOT NULL,
        response_status INTEGER NULL,
        response_body ${big} NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
      )${x}`,
      `CREATE UNIQUE INDEX ux_idempotency_keys ON idempotency_keys (principal, route, idem_key)`,
      `CREATE INDEX ix_idempotency_keys_expiry ON idempotency_keys (expires_at)`,
      `CREATE TABLE tenant_lifecycle_jobs (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        action VARCHAR(16) NOT NULL,
        status VARCHAR(16) NOT NULL,
        lifecycle_state VARCHAR(32) NOT NULL,
        reason TEXT NOT NULL,
        break_glass INTEGER NOT NULL,
        actor_id VARCHAR(128) NOT NULL,
        created_at BIGINT NOT NULL
      )${x}`,
      `CREATE INDEX ix_tenant_lifecycle_jobs_tenant ON tenant_lifecycle_jobs (tenant_id, created_at)`,
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, ['DROP TABLE tenant_lifecycle_jobs', 'DROP TABLE idempotency_keys']);
  }
}
