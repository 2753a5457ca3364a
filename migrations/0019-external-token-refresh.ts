import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll, tableSuffix } from './dialect.js';

/**
 * Keeping upstream tokens fresh (docs/identity-providers.md, "Keeping upstream tokens fresh"):
 * - `external_token_refresh_state`: platform rows of the scan, one per name; `tenant_cursor`
 *   holds the last tenant a scheduled run visited, so the next run starts after it (round robin).
 * - `external_token_refresh_circuits`: one row per upstream issuer (keyed by its SHA-256), the
 *   consecutive retryable failures and, once the circuit is open, until when it stays open.
 * - `external_token_refresh_runs`: what each run did, with a count per outcome, for
 *   `iam external-tokens status` and the configuration's `runtime_status`.
 * The per-link lease and backoff use the link's own `lease_holder` / `lease_until`.
 */
export class ExternalTokenRefresh1763769600019 implements MigrationInterface {
  name = 'ExternalTokenRefresh1763769600019';

  async up(qr: QueryRunner): Promise<void> {
    await runAll(qr, [
      `CREATE TABLE external_token_refresh_state (
        name VARCHAR(64) NOT NULL PRIMARY KEY,
        value VARCHAR(200) NULL,
        updated_at BIGINT NOT NULL
      )${tableSuffix(qr)}`,
      `CREATE TABLE external_token_refresh_circuits (
        issuer_hash VARCHAR(64) NOT NULL PRIMARY KEY,
        issuer TEXT NOT NULL,
        consecutive_failures INTEGER NOT NULL,
        open_until BIGINT NULL,
        updated_at BIGINT NOT NULL
      )${tableSuffix(qr)}`,
      `CREATE TABLE external_token_refresh_runs (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        trigger_kind VARCHAR(16) NOT NULL,
        tenant_id VARCHAR(40) NULL,
        user_id VARCHAR(40) NULL,
        tenants TEXT NOT NULL,
        holder VARCHAR(200) NOT NULL,
        started_at BIGINT NOT NULL,
        finished_at BIGINT NOT NULL,
        refreshed INTEGER NOT NULL,
        skipped_not_due INTEGER NOT NULL,
        invalid_grant INTEGER NOT NULL,
        backoff INTEGER NOT NULL,
        circuit_open INTEGER NOT NULL,
        errors INTEGER NOT NULL
      )${tableSuffix(qr)}`,
      'CREATE INDEX ix_etr_runs_started ON external_token_refresh_runs (started_at)',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    // DROP TABLE takes the table's indexes with it; dropping one first fails on MySQL when a
    // foreign key needs it (ER_DROP_INDEX_FK).
    await runAll(qr, [
      'DROP TABLE external_token_refresh_runs',
      'DROP TABLE external_token_refresh_circuits',
      'DROP TABLE external_token_refresh_state',
    ]);
  }
}
