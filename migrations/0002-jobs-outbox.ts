import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll, tableSuffix } from './dialect.js';

/**
 * Job leases (one daemon runs a job at a time) and the outbox (side effects written in the
 * same transaction as the change that causes them, delivered by a job).
 */
export class JobsOutbox1763769600002 implements MigrationInterface {
  name = 'JobsOutbox1763769600002';

  async up(qr: QueryRunner): Promise<void> {
    const x = tableSuffix(qr);
    await runAll(qr, [
      `CREATE TABLE job_leases (
        name VARCHAR(64) NOT NULL PRIMARY KEY,
        holder VARCHAR(128) NULL,
        lease_until BIGINT NOT NULL,
        last_started_at BIGINT NULL,
        last_finished_at BIGINT NULL,
        last_status VARCHAR(16) NULL,
        last_error TEXT NULL
      )${x}`,
      `CREATE TABLE outbox (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NULL,
        kind VARCHAR(32) NOT NULL,
        payload_sealed TEXT NOT NULL,
        status VARCHAR(16) NOT NULL,
        attempts INTEGER NOT NULL,
        next_attempt_at BIGINT NOT NULL,
        claimed_by VARCHAR(128) NULL,
        claimed_until BIGINT NULL,
        last_error TEXT NULL,
        delivered_via VARCHAR(64) NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      )${x}`,
      // The deliverer's scan: due rows, and claims whose holder died (claimed_until is copied
      // into next_attempt_at when a row is claimed, so one range covers both).
      `CREATE INDEX ix_outbox_due ON outbox (status, next_attempt_at)`,
      // The purge job's scan: delivered and failed rows past their retention.
      `CREATE INDEX ix_outbox_purge ON outbox (status, updated_at)`,
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(qr, ['DROP TABLE outbox', 'DROP TABLE job_leases']);
  }
}
