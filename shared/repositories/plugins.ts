/**
 * Platform plugins' rows (migration 0017, docs/plugins.md).
 *
 * - {@link ScopedPluginSettings}: a tenant's own plugin settings, through its TenantScope
 *   (every statement binds tenant_id; `scope_key` is the tenant id).
 * - {@link PlatformPlugins}: the platform's plugin settings (`scope_key` `*`, no tenant), the
 *   one-row config generation, and the provisioning operations queue, which a job works across
 *   scopes like the outbox.
 */
import type { Db } from '../db/index.js';
import { all, exec, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

/** `scope_key` of the platform's rows: never a tenant id (those match `^[a-z0-9_-]+$`). */
export const PLATFORM_SCOPE_KEY = '*';

export interface PluginSettingsRow {
  plugin_id: string;
  scope_key: string;
  tenant_id: string | null;
  /** null: this scope does not decide (a tenant inherits the platform's). */
  enabled: boolean | null;
  /** JSON of the plain fields. */
  config: string;
  /** Sealed JSON of the secret fields, or null when none is set. */
  secrets_sealed: string | null;
  created_at: number;
  updated_at: number;
}

export interface PluginSettingsWrite {
  pluginId: string;
  enabled: boolean | null;
  config: string;
  secretsSealed: string | null;
  now: number;
}

const COLUMNS = 'plugin_id, scope_key, tenant_id, enabled, config, secrets_sealed, created_at, updated_at';

function settingsRow(r: Record<string, unknown>): PluginSettingsRow {
  return {
    plugin_id: String(r.plugin_id),
    scope_key: String(r.scope_key),
    tenant_id: (r.tenant_id as string | null) ?? null,
    enabled: r.enabled === null || r.enabled === undefined ? null : num(r.enabled) === 1,
    config: String(r.config),
    secrets_sealed: (r.secrets_sealed as string | null) ?? null,
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
  };
}

const flag = (v: boolean | null) => (v === null ? null : v ? 1 : 0);

/** Insert or update one scope's row (the caller's transaction holds the generation row lock). */
async function upsert(db: Db, scopeKey: string, tenantId: string | null, w: PluginSettingsWrite): Promise<void> {
  const changed = await exec(
    db,
    'UPDATE plugin_settings SET enabled = ?, config = ?, secrets_sealed = ?, updated_at = ? ' +
      'WHERE plugin_id = ? AND scope_key = ?' +
      (tenantId === null ? ' AND tenant_id IS NULL' : ' AND tenant_id = ?'),
    [flag(w.enabled), w.config, w.secretsSealed, w.now, w.pluginId, scopeKey, ...(tenantId === null ? [] : [tenantId])],
  );
  if (changed > 0) return;
  await exec(db, `INSERT INTO plugin_settings (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [
    w.pluginId,
    scopeKey,
    tenantId,
    flag(w.enabled),
    w.config,
    w.secretsSealed,
    w.now,
    w.now,
  ]);
}

/** One tenant's plugin settings. */
export class ScopedPluginSettings {
  constructor(private readonly s: ScopeRef) {}

  async get(pluginId: string): Promise<PluginSettingsRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT ${COLUMNS} FROM plugin_settings WHERE tenant_id = ? AND scope_key = ? AND plugin_id = ?`,
      [this.s.tenantId, this.s.tenantId, pluginId],
    );
    return r && settingsRow(r);
  }

  async list(): Promise<PluginSettingsRow[]> {
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT ${COLUMNS} FROM plugin_settings WHERE tenant_id = ? AND scope_key = ?`,
      [this.s.tenantId, this.s.tenantId],
    );
    return rows.map(settingsRow);
  }

  put(w: PluginSettingsWrite): Promise<void> {
    return upsert(this.s.db, this.s.tenantId, this.s.tenantId, w);
  }
}

export type PluginOperationState = 'pending' | 'succeeded' | 'failed';

export interface PluginOperationRow {
  id: string;
  plugin_id: string;
  scope_key: string;
  tenant_id: string | null;
  kind: string;
  state: PluginOperationState;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

const OP_COLUMNS =
  'id, plugin_id, scope_key, tenant_id, kind, state, attempts, next_attempt_at, last_error, created_at, updated_at, ' +
  'finished_at';

function opRow(r: Record<string, unknown>): PluginOperationRow {
  return {
    id: String(r.id),
    plugin_id: String(r.plugin_id),
    scope_key: String(r.scope_key),
    tenant_id: (r.tenant_id as string | null) ?? null,
    kind: String(r.kind),
    state: r.state as PluginOperationState,
    attempts: num(r.attempts),
    next_attempt_at: num(r.next_attempt_at),
    last_error: (r.last_error as string | null) ?? null,
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
    finished_at: r.finished_at === null || r.finished_at === undefined ? null : num(r.finished_at),
  };
}

/** Platform-level plugin rows: the platform's settings, the generation, the operations queue. */
export class PlatformPlugins {
  constructor(private readonly db: Db) {}

  async get(pluginId: string): Promise<PluginSettingsRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.db,
      `SELECT ${COLUMNS} FROM plugin_settings WHERE scope_key = ? AND tenant_id IS NULL AND plugin_id = ?`,
      [PLATFORM_SCOPE_KEY, pluginId],
    );
    return r && settingsRow(r);
  }

  async list(): Promise<PluginSettingsRow[]> {
    const rows = await all<Record<string, unknown>>(
      this.db,
      `SELECT ${COLUMNS} FROM plugin_settings WHERE scope_key = ? AND tenant_id IS NULL`,
      [PLATFORM_SCOPE_KEY],
    );
    return rows.map(settingsRow);
  }

  put(w: PluginSettingsWrite): Promise<void> {
    return upsert(this.db, PLATFORM_SCOPE_KEY, null, w);
  }

  /** The config generation: one primary-key read, made on every use of a plugin. */
  async generation(): Promise<number> {
    const r = await one<{ generation: unknown }>(this.db, 'SELECT generation FROM plugin_generation WHERE id = 1');
    return r ? num(r.generation) : 0;
  }

  /**
   * Bumps the generation; call it first in the transaction that changes plugin state, so the
   * row lock also serialises concurrent plugin writes (MySQL) and the change commits with it.
   */
  async bumpGeneration(): Promise<void> {
    await exec(this.db, 'UPDATE plugin_generation SET generation = generation + 1 WHERE id = 1');
  }

  async insertOperation(o: {
    id: string;
    pluginId: string;
    scopeKey: string;
    tenantId: string | null;
    kind: string;
    now: number;
  }): Promise<void> {
    await exec(
      this.db,
      'INSERT INTO plugin_operations (id, plugin_id, scope_key, tenant_id, kind, state, attempts, ' +
        'next_attempt_at, claimed_by, claimed_until, last_error, created_at, updated_at, finished_at) ' +
        "VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, NULL, NULL, NULL, ?, ?, NULL)",
      [o.id, o.pluginId, o.scopeKey, o.tenantId, o.kind, o.now, o.now, o.now],
    );
  }

  /** The latest operation of a plugin in a scope. */
  async latestOperation(pluginId: string, scopeKey: string): Promise<PluginOperationRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.db,
      `SELECT ${OP_COLUMNS} FROM plugin_operations WHERE plugin_id = ? AND scope_key = ? ` +
        'ORDER BY created_at DESC, id DESC LIMIT 1',
      [pluginId, scopeKey],
    );
    return r && opRow(r);
  }

  async operation(id: string): Promise<PluginOperationRow | undefined> {
    const r = await one<Record<string, unknown>>(this.db, `SELECT ${OP_COLUMNS} FROM plugin_operations WHERE id = ?`, [
      id,
    ]);
    return r && opRow(r);
  }

  /** Ends pending operations of a plugin in a scope (a newer enable or a disable supersedes them). */
  async supersede(pluginId: string, scopeKey: string, now: number): Promise<void> {
    await exec(
      this.db,
      "UPDATE plugin_operations SET state = 'failed', last_error = 'superseded', finished_at = ?, updated_at = ? " +
        "WHERE plugin_id = ? AND scope_key = ? AND state = 'pending'",
      [now, now, pluginId, scopeKey],
    );
  }

  /** Ids of pending operations that are due (not claimed, or their claim expired). */
  async dueOperations(now: number, limit: number): Promise<string[]> {
    const rows = await all<{ id: string }>(
      this.db,
      "SELECT id FROM plugin_operations WHERE state = 'pending' AND next_attempt_at <= ? " +
        'ORDER BY next_attempt_at LIMIT ?',
      [now, limit],
    );
    return rows.map((r) => r.id);
  }

  /** One-winner claim of a due operation: counts an attempt and holds it until `until`. */
  async claim(id: string, token: string, until: number, now: number): Promise<boolean> {
    const n = await exec(
      this.db,
      'UPDATE plugin_operations SET attempts = attempts + 1, claimed_by = ?, claimed_until = ?, next_attempt_at = ?, ' +
        "updated_at = ? WHERE id = ? AND state = 'pending' AND next_attempt_at <= ?",
      [token, until, until, now, id, now],
    );
    return n === 1;
  }

  /** Records the outcome of an attempt made under claim `token`. */
  async finish(
    id: string,
    token: string,
    outcome: { state: PluginOperationState; lastError: string | null; nextAttemptAt: number },
    now: number,
  ): Promise<void> {
    await exec(
      this.db,
      'UPDATE plugin_operations SET state = ?, last_error = ?, next_attempt_at = ?, claimed_by = NULL, ' +
        'claimed_until = NULL, updated_at = ?, finished_at = ? WHERE id = ? AND claimed_by = ?',
      [
        outcome.state,
        outcome.lastError,
        outcome.nextAttemptAt,
        now,
        outcome.state === 'pending' ? null : now,
        id,
        token,
      ],
    );
  }
}
