import type { MigrationInterface, QueryRunner } from 'typeorm';
import { appendOnlyTriggers, isMysql, runAll, tableSuffix } from './dialect.js';

/**
 * Tenant provisioning (shared/services/provisioning.ts, docs/provisioning.md): one operation
 * per tenant creation, one row per step, and an append-only history of attempts, failures,
 * blocks and retries. `lease_holder`/`lease_until` let several daemons (and a CLI process)
 * share the work: a runner claims one operation with a conditional UPDATE and holds it only
 * while it works on it.
 */
export class Provisioning1763769600007 implements MigrationInterface {
  name = 'Provisioning1763769600007';

  async up(qr: QueryRunner): Promise<void> {
    const x = tableSuffix(qr);
    const text = isMysql(qr) ? 'MEDIUMTEXT' : 'TEXT';
    await runAll(qr, [
      `CREATE TABLE provisioning_operations (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        operation_kind VARCHAR(32) NOT NULL,
        source_tenant_id VARCHAR(40) NULL,
        isolation_policy VARCHAR(32) NOT NULL,
        status VARCHAR(16) NOT NULL,
        current_step VARCHAR(40) NOT NULL,
        attempt_count INTEGER NOT NULL,
        retry_count INTEGER NOT NULL,
        next_attempt_at BIGINT NULL,
        last_error_code VARCHAR(64) NULL,
        input_json ${text} NOT NULL,
        preparation_result ${text} NULL,
        lease_holder VARCHAR(128) NULL,
        lease_until BIGINT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        completed_at BIGINT NULL,
        CONSTRAINT fk_provisioning_operations_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      `CREATE INDEX ix_provisioning_operations_due ON provisioning_operations (status, next_attempt_at)`,
      `CREATE INDEX ix_provisioning_operations_tenant ON provisioning_operations (tenant_id, created_at)`,
      `CREATE TABLE provisioning_steps (
        operation_id VARCHAR(40) NOT NULL,
        step_key VARCHAR(40) NOT NULL,
        step_order INTEGER NOT NULL,
        status VARCHAR(16) NOT NULL,
        attempt_count INTEGER NOT NULL,
        failures INTEGER NOT NULL,
        next_attempt_at BIGINT NULL,
        last_error_code VARCHAR(64) NULL,
        observed_resource_id VARCHAR(255) NULL,
        progress_current INTEGER NULL,
        progress_total INTEGER NULL,
        started_at BIGINT NULL,
        completed_at BIGINT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (operation_id, step_key),
        CONSTRAINT fk_provisioning_steps_operation FOREIGN KEY (operation_id) REFERENCES provisioning_operations (id)
      )${x}`,
      `CREATE TABLE provisioning_events (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        operation_id VARCHAR(40) NOT NULL,
        tenant_id VARCHAR(40) NOT NULL,
        step_key VARCHAR(40) NULL,
        event_type VARCHAR(16) NOT NULL,
        attempt INTEGER NULL,
        error_code VARCHAR(64) NULL,
        actor_type VARCHAR(32) NOT NULL,
        actor_id VARCHAR(128) NOT NULL,
        created_at BIGINT NOT NULL
      )${x}`,
      `CREATE INDEX ix_provisioning_events_operation ON provisioning_events (operation_id, created_at)`,
      ...appendOnlyTriggers(qr, 'provisioning_events'),
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      'DROP TABLE provisioning_events',
      'DROP TABLE provisioning_steps',
      'DROP TABLE provisioning_operations',
    ]);
  }
}
