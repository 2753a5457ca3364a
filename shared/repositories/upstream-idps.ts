/**
 * Identity brokering (docs/identity-providers.md): a tenant's upstream OpenID providers, the
 * links of its users to upstream subjects with their sealed upstream tokens, and the pending
 * upstream authorization requests of browsers signing in.
 *
 * Sealed columns hold AES-256-GCM envelopes made by the service (shared/services/upstream-idp/
 * sealing.ts); this layer never sees a plaintext secret or token. Every statement is bound to
 * the scope's tenant. The scan for due links that crosses tenants returns tenant ids only
 * (UpstreamLinkQueue below).
 */
import type { Db } from '../db/index.js';
import { deleteInChunks } from '../db/purge.js';
import { all, exec, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

type Row = Record<string, unknown>;

export type UpstreamIdpStatus = 'active' | 'disabled';

/** A registered upstream OpenID provider, as stored (its client secret sealed). */
export interface UpstreamIdpRow {
  id: string;
  tenant_id: string;
  slug: string;
  display_name: string;
  issuer: string;
  client_id: string;
  client_secret_sealed: string;
  secret_key_id: string;
  /** Space-separated, as in an authorization request (RFC 6749 §3.3). */
  scopes: string;
  link_by_verified_email: boolean;
  status: UpstreamIdpStatus;
  created_at: number;
  updated_at: number;
}

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

/** A pending upstream authorization request (state, nonce, PKCE verifier). */
export interface UpstreamLoginStateRow {
  id: string;
  tenant_id: string;
  provider_id: string;
  /** SHA-256 of the `state` sent upstream; the state itself is never stored. */
  state_hash: string;
  /** The authorization request (login transaction) the upstream sign-in continues. */
  auth_request_id: string;
  /** SHA-256 of the cookie of the browser that started it. */
  binding: string;
  nonce: string;
  code_verifier_sealed: string;
  key_id: string;
  /** The local user who must come back as this upstream subject (re-authentication), if any. */
  user_hint: string | null;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

const nullableNum = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
// Text columns: a string or NULL on both drivers.
const nullableStr = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function toIdp(r: Row): UpstreamIdpRow {
  return {
    id: String(r.id),
    tenant_id: String(r.tenant_id),
    slug: String(r.slug),
    display_name: String(r.display_name),
    issuer: String(r.issuer),
    client_id: String(r.client_id),
    client_secret_sealed: String(r.client_secret_sealed),
    secret_key_id: String(r.secret_key_id),
    scopes: String(r.scopes),
    link_by_verified_email: num(r.link_by_verified_email) === 1,
    status: String(r.status) as UpstreamIdpStatus,
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
  };
}

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

function toState(r: Row): UpstreamLoginStateRow {
  return {
    id: String(r.id),
    tenant_id: String(r.tenant_id),
    provider_id: String(r.provider_id),
    state_hash: String(r.state_hash),
    auth_request_id: String(r.auth_request_id),
    binding: String(r.binding),
    nonce: String(r.nonce),
    code_verifier_sealed: String(r.code_verifier_sealed),
    key_id: String(r.key_id),
    user_hint: nullableStr(r.user_hint),
    created_at: num(r.created_at),
    expires_at: num(r.expires_at),
    consumed_at: nullableNum(r.consumed_at),
  };
}

/** A tenant's upstream OpenID providers. */
export class ScopedUpstreamIdps {
  constructor(private readonly s: ScopeRef) {}

  async insert(p: Omit<UpstreamIdpRow, 'tenant_id'> & { issuer_hash: string }): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO upstream_identity_providers (id, tenant_id, slug, display_name, issuer, issuer_hash, client_id,
         client_secret_sealed, secret_key_id, scopes, link_by_verified_email, status, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        p.id,
        this.s.tenantId,
        p.slug,
        p.display_name,
        p.issuer,
        p.issuer_hash,
        p.client_id,
        p.client_secret_sealed,
        p.secret_key_id,
        p.scopes,
        p.link_by_verified_email ? 1 : 0,
        p.status,
        p.created_at,
        p.updated_at,
      ],
    );
  }

  async get(id: string): Promise<UpstreamIdpRow | undefined> {
    const r = await one<Row>(this.s.db, 'SELECT * FROM upstream_identity_providers WHERE tenant_id = ? AND id = ?', [
      this.s.tenantId,
      id,
    ]);
    return r ? toIdp(r) : undefined;
  }

  async getBySlug(slug: string): Promise<UpstreamIdpRow | undefined> {
    const r = await one<Row>(this.s.db, 'SELECT * FROM upstream_identity_providers WHERE tenant_id = ? AND slug = ?', [
      this.s.tenantId,
      slug,
    ]);
    return r ? toIdp(r) : undefined;
  }

  /** The registration of this (issuer, client_id), if any: one per pair (the unique key). */
  async findByIssuerClient(issuerHash: string, clientId: string): Promise<UpstreamIdpRow | undefined> {
    const r = await one<Row>(
      this.s.db,
      'SELECT * FROM upstream_identity_providers WHERE tenant_id = ? AND issuer_hash = ? AND client_id = ?',
      [this.s.tenantId, issuerHash, clientId],
    );
    return r ? toIdp(r) : undefined;
  }

  /** Every provider of the tenant, oldest first (the order of the login page's buttons). */
  async list(opts: { activeOnly?: boolean } = {}): Promise<UpstreamIdpRow[]> {
    const rows = await all<Row>(
      this.s.db,
      opts.activeOnly
        ? "SELECT * FROM upstream_identity_providers WHERE tenant_id = ? AND status = 'active' ORDER BY created_at, id"
        : 'SELECT * FROM upstream_identity_providers WHERE tenant_id = ? ORDER BY created_at, id',
      [this.s.tenantId],
    );
    return rows.map(toIdp);
  }

  setStatus(id: string, status: UpstreamIdpStatus, now: number): Promise<number> {
    return exec(
      this.s.db,
      'UPDATE upstream_identity_providers SET status = ?, updated_at = ? WHERE tenant_id = ? AND id = ?',
      [status, now, this.s.tenantId, id],
    );
  }
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

/** A tenant's pending upstream authorization requests. */
export class ScopedUpstreamLoginStates {
  constructor(private readonly s: ScopeRef) {}

  async insert(r: Omit<UpstreamLoginStateRow, 'tenant_id' | 'consumed_at'>): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO upstream_login_states (id, tenant_id, provider_id, state_hash, auth_request_id, binding, nonce,
         code_verifier_sealed, key_id, user_hint, created_at, expires_at, consumed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
      [
        r.id,
        this.s.tenantId,
        r.provider_id,
        r.state_hash,
        r.auth_request_id,
        r.binding,
        r.nonce,
        r.code_verifier_sealed,
        r.key_id,
        r.user_hint,
        r.created_at,
        r.expires_at,
      ],
    );
  }

  async getByStateHash(stateHash: string): Promise<UpstreamLoginStateRow | undefined> {
    const r = await one<Row>(this.s.db, 'SELECT * FROM upstream_login_states WHERE tenant_id = ? AND state_hash = ?', [
      this.s.tenantId,
      stateHash,
    ]);
    return r ? toState(r) : undefined;
  }

  /** Single use: 1 for the one caller that consumes a live, unconsumed request, else 0. */
  consume(id: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE upstream_login_states SET consumed_at = ?
        WHERE tenant_id = ? AND id = ? AND consumed_at IS NULL AND expires_at > ?`,
      [now, this.s.tenantId, id, now],
    );
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

/** Deletes pending upstream sign-ins of every tenant that expired (the auth-purge job). */
export class UpstreamLoginStateHousekeeping {
  constructor(private readonly db: Db) {}
  /** Pending upstream sign-ins that expired before `before`. */
  expired(before: number, signal?: AbortSignal): Promise<number> {
    return deleteInChunks(this.db, {
      table: 'upstream_login_states',
      key: 'id',
      where: 'expires_at < ?',
      params: [before],
      signal,
    });
  }
}
