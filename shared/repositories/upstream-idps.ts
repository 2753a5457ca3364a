/**
 * Identity brokering (docs/identity-providers.md): a tenant's upstream OpenID providers and the
 * pending upstream authorization requests of browsers signing in. The links of its users to
 * upstream subjects, with their sealed upstream tokens, are in upstream-links.ts.
 *
 * Sealed columns hold AES-256-GCM envelopes made by the service (shared/services/upstream-idp/
 * sealing.ts); this layer never sees a plaintext secret. Every statement is bound to the
 * scope's tenant.
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
