import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMysql, runAll, tableSuffix } from './dialect.js';

/**
 * Platform plugins (docs/plugins.md):
 * - plugin_settings: one row per plugin and scope. `scope_key` is `*` for the platform and the
 *   tenant id for a tenant: a NULL tenant_id in the key would not be unique (NULLs never collide
 *   in a UNIQUE index), so the key is a non-null column of its own. `enabled` is NULL when the
 *   scope does not decide (a tenant inherits the platform's). Plain fields are JSON in
 *   `config`; secret fields are sealed together in `secrets_sealed`.
 * - plugin_generation: one row; every change of plugin state bumps it in the same
 *   transaction, and every daemon compares it with its cache on each use.
 * - plugin_operations: provisioning of a plugin enabled in a scope (a job advances them).
 * - an index on outbox (kind, status, next_attempt_at): each deliverer claims only its kind.
 */
export class Plugins1763769600017 implements MigrationInterface {
  name = 'Plugins1763769600017';

  async up(qr: QueryRunner): Promise<void> {
    const x = tableSuffix(qr);
    await runAll(qr, [
      `CREATE TABLE plugin_settings (
        plugin_id VARCHAR(64) NOT NULL,
        scope_key VARCHAR(40) NOT NULL,
        tenant_id VARCHAR(40) NULL,
        enabled INTEGER NULL,
        config TEXT NOT NULL,
        secrets_sealed TEXT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (plugin_id, scope_key),
        CONSTRAINT fk_plugin_settings_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      'CREATE INDEX ix_plugin_settings_tenant ON plugin_settings (tenant_id)',
      `CREATE TABLE plugin_generation (
        id INTEGER NOT NULL PRIMARY KEY,
        generation BIGINT NOT NULL
      )${x}`,
      'INSERT INTO plugin_generation (id, generation) VALUES (1, 1)',
      `CREATE TABLE plugin_operations (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        plugin_id VARCHAR(64) NOT NULL,
        scope_key VARCHAR(40) NOT NULL,
        tenant_id VARCHAR(40) NULL,
        kind VARCHAR(64) NOT NULL,
        state VARCHAR(16) NOT NULL,
        attempts INTEGER NOT NULL,
        next_attempt_at BIGINT NOT NULL,
        claimed_by VARCHAR(64) NULL,
        claimed_until BIGINT NULL,
        last_error VARCHAR(500) NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        finished_at BIGINT NULL,
        CONSTRAINT fk_plugin_operations_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
      )${x}`,
      'CREATE INDEX ix_plugin_operations_due ON plugin_operations (state, next_attempt_at)',
      'CREATE INDEX ix_plugin_operations_scope ON plugin_operations (plugin_id, scope_key, created_at)',
      'CREATE INDEX ix_outbox_kind_due ON outbox (kind, status, next_attempt_at)',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    const drop = (ix: string, table: string) => (isMysql(qr) ? `DROP INDEX ${ix} ON ${table}` : `DROP INDEX ${ix}`);
    await runAll(qr, [
      drop('ix_outbox_kind_due', 'outbox'),
      'DROP TABLE plugin_operations',
      'DROP TABLE plugin_generation',
      'DROP TABLE plugin_settings',
    ]);
  }
}
