/**
 * The users as SCIM /Users reads and writes them (docs/scim.md): the directory's own rows,
 * with the SCIM columns of migration 0041 (user_name, user_name_key, external_id,
 * scim_attributes). Each lookup a SCIM filter can be answered by uses an index:
 * - `byUserName`: ux_users_user_name (tenant_id, user_name_key), or, for a user the SCIM
 *   client never named (created by the admin API or a sign-up), ux_users_tenant_email: such a
 *   user's userName is its address;
 * - `byExternalId`: ux_users_external_id; `get`: the primary key;
 * - `page`: ix_users_tenant_created (tenant_id, created_at, id), the keyset scan of the
 *   filters no index answers.
 */
import type { Db } from '../db/index.js';
import { all, exec, json, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

export interface ScimUserRow {
  id: string;
  email: string;
  name: string;
  status: string;
  standard_claims: Record<string, unknown> | null;
  user_name: string | null;
  external_id: string | null;
  scim_attributes: Record<string, unknown> | null;
  created_at: number;
  updated_at: number;
}

/** What a SCIM create or replace writes. */
export interface ScimUserWrite {
  email: string;
  name: string;
  standard_claims: Record<string, unknown> | null;
  user_name: string;
  external_id: string | null;
  scim_attributes: Record<string, unknown>;
}

const COLUMNS =
  'id, email, name, status, standard_claims, user_name, external_id, scim_attributes, created_at, updated_at';
const isMysql = (db: Db): boolean => ('manager' in db ? db : db.connection).options.type === 'mysql';

function toRow(r: Record<string, unknown>): ScimUserRow {
  return {
    id: String(r.id),
    email: String(r.email),
    name: String(r.name),
    status: String(r.status),
    standard_claims: json<Record<string, unknown> | null>(r.standard_claims ?? null) ?? null,
    user_name: typeof r.user_name === 'string' ? r.user_name : null,
    external_id: typeof r.external_id === 'string' ? r.external_id : null,
    scim_attributes: json<Record<string, unknown> | null>(r.scim_attributes ?? null) ?? null,
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
  };
}

const jsonOrNull = (v: Record<string, unknown> | null) => (v && Object.keys(v).length ? JSON.stringify(v) : null);

export class ScopedScimUsers {
  constructor(private readonly s: ScopeRef) {}

  /** By id; `forUpdate` locks the row on MySQL until the transaction ends (SQLite serialises writers). */
  async get(id: string, opts: { forUpdate?: boolean } = {}): Promise<ScimUserRow | undefined> {
    const lock = opts.forUpdate && isMysql(this.s.db) ? ' FOR UPDATE' : '';
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT ${COLUMNS} FROM users WHERE tenant_id = ? AND id = ?${lock}`,
      [this.s.tenantId, id],
    );
    return r ? toRow(r) : undefined;
  }

  /**
   * The user whose userName is `userName` without case: user_name_key, or the address of a user
   * without a user_name (both unique per tenant). At most two rows; the named one first.
   */
  async byUserName(userName: string): Promise<ScimUserRow[]> {
    const key = userName.toLowerCase();
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT ${COLUMNS} FROM users WHERE tenant_id = ? AND user_name_key = ?
       UNION ALL
       SELECT ${COLUMNS} FROM users WHERE tenant_id = ? AND email = ? AND user_name_key IS NULL`,
      [this.s.tenantId, key, this.s.tenantId, key.trim()],
    );
    return rows.map(toRow);
  }

  async byExternalId(externalId: string): Promise<ScimUserRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT ${COLUMNS} FROM users WHERE tenant_id = ? AND external_id = ?`,
      [this.s.tenantId, externalId],
    );
    return r ? toRow(r) : undefined;
  }

  /** The ids of the tenant's users holding this address (exactly, lower case). */
  async idsByEmail(email: string): Promise<string[]> {
    const rows = await all<{ id: string }>(this.s.db, 'SELECT id FROM users WHERE tenant_id = ? AND email = ?', [
      this.s.tenantId,
      email,
    ]);
    return rows.map((r) => String(r.id));
  }

  /** One batch of the tenant's users after `after`, in (created_at, id) order. */
  async page(after: { created_at: number; id: string } | undefined, limit: number): Promise<ScimUserRow[]> {
    const cursor = after ? ' AND (created_at > ? OR (created_at = ? AND id > ?))' : '';
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT ${COLUMNS} FROM users WHERE tenant_id = ?${cursor} ORDER BY created_at, id LIMIT ?`,
      [this.s.tenantId, ...(after ? [after.created_at, after.created_at, after.id] : []), limit],
    );
    return rows.map(toRow);
  }

  /** The tenant's number of users (SCIM totalResults of an unfiltered list). */
  async count(): Promise<number> {
    const r = await one<{ n: unknown }>(this.s.db, 'SELECT COUNT(*) AS n FROM users WHERE tenant_id = ?', [
      this.s.tenantId,
    ]);
    return num(r?.n ?? 0);
  }

  /**
   * Users `offset` to `offset + limit` in (created_at, id) order (ix_users_tenant_created): an
   * unfiltered list's page (RFC 7644 §3.4.2.4 pages by a 1-based index, not a cursor).
   */
  async slice(offset: number, limit: number): Promise<ScimUserRow[]> {
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT ${COLUMNS} FROM users WHERE tenant_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?`,
      [this.s.tenantId, limit, offset],
    );
    return rows.map(toRow);
  }

  /** A new active user (the address not verified: the provisioning client vouches for it, not the user). */
  async insert(id: string, u: ScimUserWrite, now: number): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO users (id, tenant_id, email, name, status, standard_claims, email_verified, user_name,
         user_name_key, external_id, scim_attributes, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'active', ?, 0, ?, ?, ?, ?, ?, ?)`,
      [
        id,
        this.s.tenantId,
        u.email,
        u.name,
        jsonOrNull(u.standard_claims),
        u.user_name,
        u.user_name.toLowerCase(),
        u.external_id,
        JSON.stringify(u.scim_attributes),
        now,
        now,
      ],
    );
  }

  /**
   * Replaces the SCIM-managed columns; a changed address is no longer verified. Returns the
   * rows changed (0: no such user in the tenant).
   */
  update(id: string, u: ScimUserWrite, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE users SET email_verified = CASE WHEN email = ? THEN email_verified ELSE 0 END, email = ?, name = ?,
         standard_claims = ?, user_name = ?, user_name_key = ?, external_id = ?, scim_attributes = ?, updated_at = ?
       WHERE tenant_id = ? AND id = ?`,
      [
        u.email,
        u.email,
        u.name,
        jsonOrNull(u.standard_claims),
        u.user_name,
        u.user_name.toLowerCase(),
        u.external_id,
        JSON.stringify(u.scim_attributes),
        now,
        this.s.tenantId,
        id,
      ],
    );
  }
}
