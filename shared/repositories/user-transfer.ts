/**
 * The directory's import and export (docs/directory.md, "Users: import and export"): the point
 * reads and writes one imported record needs, and the export's pages. Every statement is bound
 * to the scope's tenant. Run as cached prepared statements (shared/db/sql.ts): an import of
 * 50,000 users runs each of them tens of thousands of times.
 */
import { all, exec, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

type Row = Record<string, unknown>;

/** A user as the import compares one and the export writes one. */
export interface TransferUser {
  id: string;
  email: string;
  name: string;
  /** 1 or 0 (users.email_verified). */
  email_verified: number;
}

/** One of a user's custom claim values, under its schema's current key. */
export interface TransferClaimValue {
  user_id: string;
  field_key: string;
  value_json: string;
}

/** One of a user's upstream links, named by its provider's issuer. */
export interface TransferLink {
  user_id: string;
  issuer: string;
  upstream_sub: string;
}

const placeholders = (n: number): string => Array.from({ length: n }, () => '?').join(', ');
const toUser = (r: Row): TransferUser => ({
  id: String(r.id),
  email: String(r.email),
  name: String(r.name),
  email_verified: num(r.email_verified),
});

export class ScopedUserTransfer {
  constructor(private readonly s: ScopeRef) {}

  /** The user with this (normalised) address, or undefined. */
  async byEmail(email: string): Promise<TransferUser | undefined> {
    const r = await one<Row>(
      this.s.db,
      'SELECT id, email, name, email_verified FROM users WHERE tenant_id = ? AND email = ?',
      [this.s.tenantId, email],
    );
    return r ? toUser(r) : undefined;
  }

  /** An imported user: active. */
  async insertUser(u: TransferUser, now: number): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO users (id, tenant_id, email, name, status, email_verified, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'active', ?, ?, ?)`,
      [u.id, this.s.tenantId, u.email, u.name, u.email_verified, now, now],
    );
  }

  /** Sets an imported user's name and whether the address is verified. */
  updateUser(id: string, u: { name: string; email_verified: number }, now: number): Promise<number> {
    return exec(
      this.s.db,
      'UPDATE users SET name = ?, email_verified = ?, updated_at = ? WHERE tenant_id = ? AND id = ?',
      [u.name, u.email_verified, now, this.s.tenantId, id],
    );
  }

  /**
   * A link made by an import: no upstream tokens yet (the first sign-in through the upstream
   * stores them, UpstreamBroker), so no expiry and nothing for the refresh scan to pick up.
   * The token columns are NOT NULL: the empty string under the empty key id stands for none.
   */
  async insertLink(l: { id: string; provider_id: string; user_id: string; iss: string; sub: string }, now: number) {
    await exec(
      this.s.db,
      `INSERT INTO upstream_identity_links (id, tenant_id, provider_id, user_id, upstream_iss, upstream_sub,
         access_token_sealed, refresh_token_sealed, id_token_sealed, key_id, access_expires_at, state,
         refresh_failures, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, '', NULL, NULL, '', NULL, 'active', 0, ?, ?)`,
      [l.id, this.s.tenantId, l.provider_id, l.user_id, l.iss, l.sub, now, now],
    );
  }

  /**
   * The export's page: users whose address sorts after `afterEmail`, in address order, at most
   * `limit` (keyset pagination on the unique (tenant_id, email) index: each page is an index
   * range, with no sort and no scan of the pages before it).
   */
  async page(afterEmail: string, limit: number): Promise<TransferUser[]> {
    const rows = await all<Row>(
      this.s.db,
      `SELECT id, email, name, email_verified FROM users WHERE tenant_id = ? AND email > ? ORDER BY email LIMIT ?`,
      [this.s.tenantId, afterEmail, limit],
    );
    return rows.map(toUser);
  }

  /** The values of active custom schemas held by these users, under the schemas' current keys. */
  async claimValues(userIds: string[]): Promise<TransferClaimValue[]> {
    if (userIds.length === 0) return [];
    const rows = await all<Row>(
      this.s.db,
      `SELECT v.user_id, s.field_key, v.value_json
         FROM custom_claim_schemas s
         JOIN custom_claim_values v ON v.tenant_id = s.tenant_id AND v.field_key = s.field_key
        WHERE s.tenant_id = ? AND s.is_system = 0 AND s.is_active = 1
          AND v.user_id IN (${placeholders(userIds.length)})
        ORDER BY v.user_id, s.field_key`,
      [this.s.tenantId, ...userIds],
    );
    return rows.map((r) => ({
      user_id: String(r.user_id),
      field_key: String(r.field_key),
      value_json: String(r.value_json),
    }));
  }

  /** These users' upstream links, each named by its provider's issuer, oldest first. */
  async links(userIds: string[]): Promise<TransferLink[]> {
    if (userIds.length === 0) return [];
    const rows = await all<Row>(
      this.s.db,
      `SELECT l.user_id, p.issuer, l.upstream_sub
         FROM upstream_identity_links l
         JOIN upstream_identity_providers p ON p.tenant_id = l.tenant_id AND p.id = l.provider_id
        WHERE l.tenant_id = ? AND l.user_id IN (${placeholders(userIds.length)})
        ORDER BY l.user_id, l.created_at, l.id`,
      [this.s.tenantId, ...userIds],
    );
    return rows.map((r) => ({
      user_id: String(r.user_id),
      issuer: String(r.issuer),
      upstream_sub: String(r.upstream_sub),
    }));
  }
}
