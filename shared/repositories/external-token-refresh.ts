/**
 * The data of the scan that keeps upstream tokens fresh (shared/services/external-token-refresh/):
 * - `ScopedLinkRefresh` (through TenantScope): the refresh side of a tenant's upstream identity
 *   links: due links, the per-link lease (one conditional UPDATE, one winner), and the writes
 *   that end a lease (refreshed, backed off, re-authentication required, released).
 * - `ExternalTokenRefreshRepository`: platform rows: the round-robin tenant cursor, the
 *   circuit per upstream issuer, the run records, and the one cross-tenant question the
 *   scheduler asks (which tenants have an active upstream provider), answered with ids only.
 */
import type { Db } from '../db/index.js';
import { all, exec, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

/** A link as the scan sees it: never the access token, only what a refresh needs. */
export interface RefreshLinkRow {
  id: string;
  provider_id: string;
  user_id: string;
  upstream_iss: string;
  refresh_token_sealed: string | null;
  id_token_sealed: string | null;
  key_id: string;
  access_expires_at: number | null;
  state: string;
  lease_holder: string | null;
  lease_until: number | null;
  refresh_failures: number;
}

const LINK_COLUMNS = `id, provider_id, user_id, upstream_iss, refresh_token_sealed, id_token_sealed, key_id,
  access_expires_at, state,
  lease_holder, lease_until, refresh_failures`;

const linkRow = (r: Record<string, unknown>): RefreshLinkRow => ({
  id: String(r.id),
  provider_id: String(r.provider_id),
  user_id: String(r.user_id),
  upstream_iss: String(r.upstream_iss),
  refresh_token_sealed: (r.refresh_token_sealed as string | null) ?? null,
  id_token_sealed: (r.id_token_sealed as string | null) ?? null,
  key_id: String(r.key_id),
  access_expires_at:
    r.access_expires_at === null || r.access_expires_at === undefined ? null : num(r.access_expires_at),
  state: String(r.state),
  lease_holder: (r.lease_holder as string | null) ?? null,
  lease_until: r.lease_until === null || r.lease_until === undefined ? null : num(r.lease_until),
  refresh_failures: num(r.refresh_failures ?? 0),
});

/** The token columns after a refresh, all sealed together under one key id. */
export interface RefreshedTokens {
  access_token_sealed: string;
  refresh_token_sealed: string | null;
  id_token_sealed: string | null;
  key_id: string;
  access_expires_at: number | null;
}

export class ScopedLinkRefresh {
  constructor(private readonly s: ScopeRef) {}

  /** Whether the tenant has an active upstream identity provider: the refresh bridge's binding. */
  async hasActiveProvider(): Promise<boolean> {
    const r = await one<{ id: string }>(
      this.s.db,
      "SELECT id FROM upstream_identity_providers WHERE tenant_id = ? AND status = 'active' LIMIT 1",
      [this.s.tenantId],
    );
    return !!r;
  }

  /**
   * Links of the tenant that are due: active, at an active provider, with a refresh token, the
   * access token expiring at or before `dueBefore` (or unknown), and not leased or backed off
   * past `now`. Soonest first, at most `limit` rows; the (state, access_expires_at) index serves it.
   */
  async due(p: { dueBefore: number; now: number; limit: number; userId?: string }): Promise<RefreshLinkRow[]> {
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT ${LINK_COLUMNS} FROM upstream_identity_links
        WHERE tenant_id = ? AND state = 'active' AND refresh_token_sealed IS NOT NULL
          AND (access_expires_at IS NULL OR access_expires_at <= ?)
          AND (lease_until IS NULL OR lease_until < ?)${p.userId ? ' AND user_id = ?' : ''}
          AND provider_id IN (SELECT id FROM upstream_identity_providers WHERE tenant_id = ? AND status = 'active')
        ORDER BY access_expires_at, id LIMIT ${Math.max(1, Math.floor(p.limit))}`,
      [this.s.tenantId, p.dueBefore, p.now, ...(p.userId ? [p.userId] : []), this.s.tenantId],
    );
    return rows.map(linkRow);
  }

  /** Active links of one user that are not due (a manual run counts them as skipped). */
  async countNotDue(p: { dueBefore: number; userId: string }): Promise<number> {
    const r = await one<{ n: unknown }>(
      this.s.db,
      `SELECT COUNT(*) AS n FROM upstream_identity_links WHERE tenant_id = ? AND user_id = ? AND state = 'active'
        AND access_expires_at > ?`,
      [this.s.tenantId, p.userId, p.dueBefore],
    );
    return num(r?.n ?? 0);
  }

  async get(id: string): Promise<RefreshLinkRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT ${LINK_COLUMNS} FROM upstream_identity_links WHERE tenant_id = ? AND id = ?`,
      [this.s.tenantId, id],
    );
    return r && linkRow(r);
  }

  /**
   * The per-link lease: one conditional UPDATE; the database serialises concurrent UPDATEs of
   * one row, so of several scanners exactly one sees a row changed and calls the upstream.
   */
  claim(id: string, holder: string, until: number, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE upstream_identity_links SET lease_holder = ?, lease_until = ?
        WHERE tenant_id = ? AND id = ? AND state = 'active' AND (lease_until IS NULL OR lease_until < ?)`,
      [holder, until, this.s.tenantId, id, now],
    );
  }

  /** Stores a refresh's tokens and ends the lease; 0 when the lease was lost meanwhile. */
  storeRefreshed(id: string, holder: string, t: RefreshedTokens, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE upstream_identity_links SET access_token_sealed = ?,
          refresh_token_sealed = ?, id_token_sealed = ?,
          key_id = ?, access_expires_at = ?, last_refreshed_at = ?, refresh_failures = 0, last_error_code = NULL,
          lease_holder = NULL, lease_until = NULL, updated_at = ?
        WHERE tenant_id = ? AND id = ? AND lease_holder = ?`,
      [
        t.access_token_sealed,
        t.refresh_token_sealed,
        t.id_token_sealed,
        t.key_id,
        t.access_expires_at,
        now,
        now,
        this.s.tenantId,
        id,
        holder,
      ],
    );
  }

  /**
   * Marks the link `reauthentication_required`, only if it still holds the refresh token that
   * was refused (`usedRefreshSealed`): a link another scanner rotated meanwhile is left alone.
   */
  markReauthentication(id: string, holder: string, usedRefreshSealed: string, code: string, now: number) {
    return exec(
      this.s.db,
      `UPDATE upstream_identity_links SET state = 'reauthentication_required', last_error_code = ?,
          lease_holder = NULL, lease_until = NULL, updated_at = ?
        WHERE tenant_id = ? AND id = ? AND lease_holder = ? AND refresh_token_sealed = ?`,
      [code, now, this.s.tenantId, id, holder, usedRefreshSealed],
    );
  }

  /** A retryable failure: counts it and keeps the link unclaimable until `notBefore` (the backoff). */
  backOff(id: string, holder: string, notBefore: number, code: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE upstream_identity_links SET refresh_failures = refresh_failures + 1, last_error_code = ?,
          lease_holder = NULL, lease_until = ?, updated_at = ?
        WHERE tenant_id = ? AND id = ? AND lease_holder = ?`,
      [code, notBefore, now, this.s.tenantId, id, holder],
    );
  }

  /** Ends the lease without a change (skipped: circuit open, or nothing to do). */
  release(id: string, holder: string): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE upstream_identity_links SET lease_holder = NULL, lease_until = NULL
        WHERE tenant_id = ? AND id = ? AND lease_holder = ?`,
      [this.s.tenantId, id, holder],
    );
  }
}

export interface CircuitRow {
  consecutive_failures: number;
  open_until: number | null;
}

export interface RefreshRunRow {
  id: string;
  trigger_kind: string;
  tenant_id: string | null;
  user_id: string | null;
  tenants: string[];
  holder: string;
  started_at: number;
  finished_at: number;
  refreshed: number;
  skipped_not_due: number;
  invalid_grant: number;
  backoff: number;
  circuit_open: number;
  errors: number;
}

const CURSOR = 'tenant_cursor';

export class ExternalTokenRefreshRepository {
  constructor(private readonly db: Db) {}

  /**
   * Tenant ids (ids only) with an active upstream identity provider, after `after` in id order,
   * at most `limit`: the scheduled scan's round robin walks this list from its cursor.
   */
  async tenantsWithProviders(after: string | null, limit: number): Promise<string[]> {
    const rows = await all<{ tenant_id: string }>(
      this.db,
      `SELECT DISTINCT tenant_id FROM upstream_identity_providers
        WHERE status = 'active'${after ? ' AND tenant_id > ?' : ''}
        ORDER BY tenant_id LIMIT ${Math.max(1, Math.floor(limit))}`,
      after ? [after] : [],
    );
    return rows.map((r) => r.tenant_id);
  }

  async cursor(): Promise<string | null> {
    const r = await one<{ value: string | null }>(
      this.db,
      'SELECT value FROM external_token_refresh_state WHERE name = ?',
      [CURSOR],
    );
    return r?.value ?? null;
  }

  /** Moves the cursor (insert on first use; a concurrent first insert is retried as an update by the caller). */
  async setCursor(value: string | null, now: number): Promise<void> {
    const n = await exec(this.db, 'UPDATE external_token_refresh_state SET value = ?, updated_at = ? WHERE name = ?', [
      value,
      now,
      CURSOR,
    ]);
    if (n === 0)
      await exec(this.db, 'INSERT INTO external_token_refresh_state (name, value, updated_at) VALUES (?, ?, ?)', [
        CURSOR,
        value,
        now,
      ]);
  }

  async circuit(issuerHash: string): Promise<CircuitRow | undefined> {
    const r = await one<{ consecutive_failures: unknown; open_until: unknown }>(
      this.db,
      'SELECT consecutive_failures, open_until FROM external_token_refresh_circuits WHERE issuer_hash = ?',
      [issuerHash],
    );
    return (
      r && {
        consecutive_failures: num(r.consecutive_failures),
        open_until: r.open_until === null ? null : num(r.open_until),
      }
    );
  }

  /** Writes the circuit's state (insert on first failure). */
  async writeCircuit(issuerHash: string, issuer: string, c: CircuitRow, now: number): Promise<void> {
    const n = await exec(
      this.db,
      `UPDATE external_token_refresh_circuits SET consecutive_failures = ?, open_until = ?, updated_at = ?
        WHERE issuer_hash = ?`,
      [c.consecutive_failures, c.open_until, now, issuerHash],
    );
    if (n === 0)
      await exec(
        this.db,
        `INSERT INTO external_token_refresh_circuits (issuer_hash, issuer, consecutive_failures, open_until, updated_at)
          VALUES (?, ?, ?, ?, ?)`,
        [issuerHash, issuer, c.consecutive_failures, c.open_until, now],
      );
  }

  async insertRun(r: RefreshRunRow): Promise<void> {
    await exec(
      this.db,
      `INSERT INTO external_token_refresh_runs (id, trigger_kind, tenant_id, user_id, tenants, holder, started_at,
        finished_at, refreshed, skipped_not_due, invalid_grant, backoff, circuit_open, errors)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        r.id,
        r.trigger_kind,
        r.tenant_id,
        r.user_id,
        JSON.stringify(r.tenants),
        r.holder,
        r.started_at,
        r.finished_at,
        r.refreshed,
        r.skipped_not_due,
        r.invalid_grant,
        r.backoff,
        r.circuit_open,
        r.errors,
      ],
    );
  }

  /** Drops run records that started before `before` (the records are a recent history, not an archive). */
  pruneRuns(before: number): Promise<number> {
    return exec(this.db, 'DELETE FROM external_token_refresh_runs WHERE started_at < ?', [before]);
  }

  /** The latest runs, newest first. */
  async runs(limit: number): Promise<RefreshRunRow[]> {
    const rows = await all<Record<string, unknown>>(
      this.db,
      `SELECT * FROM external_token_refresh_runs ORDER BY started_at DESC, id DESC
        LIMIT ${Math.max(1, Math.min(1000, Math.floor(limit)))}`,
    );
    return rows.map((r) => ({
      id: String(r.id),
      trigger_kind: String(r.trigger_kind),
      tenant_id: (r.tenant_id as string | null) ?? null,
      user_id: (r.user_id as string | null) ?? null,
      tenants: JSON.parse(String(r.tenants)) as string[],
      holder: String(r.holder),
      started_at: num(r.started_at),
      finished_at: num(r.finished_at),
      refreshed: num(r.refreshed),
      skipped_not_due: num(r.skipped_not_due),
      invalid_grant: num(r.invalid_grant),
      backoff: num(r.backoff),
      circuit_open: num(r.circuit_open),
      errors: num(r.errors),
    }));
  }
}
