/**
 * Identity brokering (docs/identity-providers.md): the links of a tenant's users to upstream
 * subjects, with their sealed upstream tokens and the refresh lease. The providers the links
 * point at and the pending upstream sign-ins are in upstream-idps.ts.
 *
 * Sealed columns hold AES-256-GCM envelopes made by the service (shared/services/upstream-idp/
 * sealing.ts); this layer never sees a plaintext token. Every statement is bound to the scope's
 * tenant. The scan for due links that crosses tenants returns tenant ids only
 * (UpstreamLinkQueue below).
 */
import type { Db } from '../db/index.js';
import { all, exec, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

type Row = Record<string, unknown>;

export type UpstreamLinkState = 'active' | 'reauthentication_required';

/** A local user's link to an upstream subject, with the upstream tokens sealed. */
export interface UpstreamLinkRow {
  id: string;
  tenant_id: string;
  provider_id: string;
  user_id: string;
  upstream_iss: string;
  upstream_sub: string;
  access_token_sealed: string;
  refresh_token_sealed: string | null;
  id_token_sealed: string | null;
  /** The key that sealed every token column of this row. */
  key_id: string;
  access_expires_at: number | null;
  state: UpstreamLinkState;
  lease_holder: string | null;
  lease_until: number | null;
  last_refreshed_at: number | null;
  refresh_failures: number;
  last_error_code: string | null;
  created_at: number;
  updated_at: number;
}

/** The sealed token columns of a link, written together under one key id. */
export interface SealedLinkTokens {
  access_token_sealed: string;
  refresh_token_sealed: string | null;
  id_token_sealed: string | null;
  key_id: string;
  access_expires_at: number | null;
}

const nullableNum = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
// Text columns: a string or NULL on both drivers.
const nullableStr = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export function toUpstreamLink(r: Row): UpstreamLinkRow {
  return {
    id: String(r.id),
    tenant_id: String(r.tenant_id),
    provider_id: String(r.provider_id),
    user_id: String(r.user_id),
    upstream_iss: String(r.upstream_iss),
    upstream_sub: String(r.upstream_sub),
    access_token_sealed: String(r.access_token_sealed),
    refresh_token_sealed: nullableStr(r.refresh_token_sealed),
    id_token_sealed: nullableStr(r.id_token_sealed),
    key_id: String(r.key_id),
    access_expires_at: nullableNum(r.access_expires_at),
    state: String(r.state) as UpstreamLinkState,
    lease_holder: nullableStr(r.lease_holder),
    lease_until: nullableNum(r.lease_until),
    last_refreshed_at: nullableNum(r.last_refreshed_at),
    refresh_failures: num(r.refresh_failures),
    last_error_code: nullableStr(r.last_error_code),
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
  };
}

/** A tenant's links of local users to upstream subjects. */
export class ScopedUpstreamLinks {
  constructor(private readonly s: ScopeRef) {}

  async insert(l: Omit<UpstreamLinkRow, 'tenant_id'>): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO upstream_identity_links (id, tenant_id, provider_id, user_id, upstream_iss, upstream_sub,
         access_token_sealed, refresh_token_sealed, id_token_sealed, key_id, access_expires_at, state, lease_holder,
         lease_until, last_refreshed_at, refresh_failures, last_error_code, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        l.id,
        this.s.tenantId,
        l.provider_id,
        l.user_id,
        l.upstream_iss,
        l.upstream_sub,
        l.access_token_sealed,
        l.refresh_token_sealed,
        l.id_token_sealed,
        l.key_id,
        l.access_expires_at,
        l.state,
        l.lease_holder,
        l.lease_until,
        l.last_refreshed_at,
        l.refresh_failures,
        l.last_error_code,
        l.created_at,
        l.updated_at,
      ],
    );
  }

  async get(id: string): Promise<UpstreamLinkRow | undefined> {
    const r = await one<Row>(this.s.db, 'SELECT * FROM upstream_identity_links WHERE tenant_id = ? AND id = ?', [
      this.s.tenantId,
      id,
    ]);
    return r ? toUpstreamLink(r) : undefined;
  }

  /** The link of an upstream subject at a provider (OIDC Core §5.7: `sub` is unique per issuer). */
  async findBySubject(providerId: string, sub: string): Promise<UpstreamLinkRow | undefined> {
    const r = await one<Row>(
      this.s.db,
      'SELECT * FROM upstream_identity_links WHERE tenant_id = ? AND provider_id = ? AND upstream_sub = ?',
      [this.s.tenantId, providerId, sub],
    );
    return r ? toUpstreamLink(r) : undefined;
  }

  /** A user's links, oldest first. */
  async listForUser(userId: string): Promise<UpstreamLinkRow[]> {
    const rows = await all<Row>(
      this.s.db,
      'SELECT * FROM upstream_identity_links WHERE tenant_id = ? AND user_id = ? ORDER BY created_at, id',
      [this.s.tenantId, userId],
    );
    return rows.map(toUpstreamLink);
  }

  /**
   * Links whose upstream access token expires before `before` and that are not re-authentication
   * cases, soonest first, at most `limit`, optionally one user's only (the refresh scan's page).
   */
  async listDue(before: number, limit: number, userId?: string): Promise<UpstreamLinkRow[]> {
    const rows = await all<Row>(
      this.s.db,
      userId === undefined
        ? `SELECT * FROM upstream_identity_links WHERE tenant_id = ? AND state = 'active'
             AND access_expires_at IS NOT NULL AND access_expires_at < ?
             ORDER BY access_expires_at, id LIMIT ?`
        : `SELECT * FROM upstream_identity_links WHERE tenant_id = ? AND state = 'active'
             AND access_expires_at IS NOT NULL AND access_expires_at < ? AND user_id = ?
             ORDER BY access_expires_at, id LIMIT ?`,
      userId === undefined ? [this.s.tenantId, before, limit] : [this.s.tenantId, before, userId, limit],
    );
    return rows.map(toUpstreamLink);
  }

  /**
   * New tokens after a sign-in through the upstream: the link is active again, its failures
   * and lease cleared.
   */
  storeSignIn(id: string, t: SealedLinkTokens, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE upstream_identity_links SET access_token_sealed = ?, refresh_token_sealed = ?, id_token_sealed = ?,
         key_id = ?, access_expires_at = ?, state = 'active', lease_holder = NULL, lease_until = NULL,
         refresh_failures = 0, last_error_code = NULL, updated_at = ?
       WHERE tenant_id = ? AND id = ?`,
      [
        t.access_token_sealed,
        t.refresh_token_sealed,
        t.id_token_sealed,
        t.key_id,
        t.access_expires_at,
        now,
        this.s.tenantId,
        id,
      ],
    );
  }

  /**
   * Takes the refresh lease of a link until `until` when nobody holds a live one: 1 for the
   * winner, 0 for everyone else (one upstream call per link among concurrent scanners).
   */
  claimLease(id: string, holder: string, until: number, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE upstream_identity_links SET lease_holder = ?, lease_until = ?
        WHERE tenant_id = ? AND id = ? AND state = 'active' AND (lease_until IS NULL OR lease_until < ?)`,
      [holder, until, this.s.tenantId, id, now],
    );
  }

  /** Gives the lease back without a change (nothing to do, or an error recorded separately). */
  releaseLease(id: string, holder: string): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE upstream_identity_links SET lease_holder = NULL, lease_until = NULL
        WHERE tenant_id = ? AND id = ? AND lease_holder = ?`,
      [this.s.tenantId, id, holder],
    );
  }

  /** The refreshed tokens, written only by the lease holder; the lease is released. */
  storeRefreshed(id: string, holder: string, t: SealedLinkTokens, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE upstream_identity_links SET access_token_sealed = ?, refresh_token_sealed = ?, id_token_sealed = ?,
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

  /** A failed refresh by the lease holder: counted, its code kept, the lease released. */
  recordFailure(id: string, holder: string, errorCode: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE upstream_identity_links SET refresh_failures = refresh_failures + 1, last_error_code = ?,
         lease_holder = NULL, lease_until = NULL, updated_at = ?
       WHERE tenant_id = ? AND id = ? AND lease_holder = ?`,
      [errorCode, now, this.s.tenantId, id, holder],
    );
  }

  /**
   * The upstream refused the refresh token for good (invalid_grant): the user must sign in
   * through the upstream again. Conditional on the lease holder, so a caller that re-read the
   * row and lost its lease changes nothing.
   */
  markReauthenticationRequired(id: string, holder: string, errorCode: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE upstream_identity_links SET state = 'reauthentication_required', last_error_code = ?,
         refresh_failures = refresh_failures + 1, lease_holder = NULL, lease_until = NULL, updated_at = ?
       WHERE tenant_id = ? AND id = ? AND lease_holder = ?`,
      [errorCode, now, this.s.tenantId, id, holder],
    );
  }

  /** The user's links that need a sign-in through their upstream, at active providers. */
  async needingReauthentication(userId: string): Promise<UpstreamLinkRow[]> {
    const rows = await all<Row>(
      this.s.db,
      `SELECT l.* FROM upstream_identity_links l
         JOIN upstream_identity_providers p ON p.tenant_id = l.tenant_id AND p.id = l.provider_id
        WHERE l.tenant_id = ? AND l.user_id = ? AND l.state = 'reauthentication_required' AND p.status = 'active'
        ORDER BY l.created_at, l.id`,
      [this.s.tenantId, userId],
    );
    return rows.map(toUpstreamLink);
  }
}

/**
 * The refresh scan's queue across tenants: which tenants have links due, as tenant ids only
 * (round-robin after `afterTenantId`); each tenant's rows are then read through its scope.
 */
export class UpstreamLinkQueue {
  constructor(private readonly db: Db) {}

  async tenantsWithDueLinks(before: number, afterTenantId: string, limit: number): Promise<string[]> {
    const rows = await all<{ tenant_id: string }>(
      this.db,
      `SELECT DISTINCT tenant_id FROM upstream_identity_links
        WHERE state = 'active' AND access_expires_at IS NOT NULL AND access_expires_at < ? AND tenant_id > ?
        ORDER BY tenant_id LIMIT ?`,
      [before, afterTenantId, limit],
    );
    return rows.map((r) => String(r.tenant_id));
  }
}
