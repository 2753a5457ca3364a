/**
 * Dynamic client registration's rows (RFC 7591, RFC 7592; docs/registration.md): a registered
 * client's registration record (`client_registrations`) and the tenant's initial access tokens
 * (`initial_access_tokens`). Token values are never stored: only their SHA-256, looked up by
 * index (a hash lookup leaks nothing about the value through timing, so no constant-time
 * comparison is needed: whoever can steer the lookup already knows the value they hash).
 */
import type { Db } from '../db/index.js';
import { all, exec, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

export interface RegistrationRow {
  client_id: string;
  access_token_hash: string;
  /** The initial access token that admitted it; null: registered anonymously (the open policy). */
  initial_access_token_id: string | null;
  application_type: 'web' | 'native';
  software_id: string | null;
  software_version: string | null;
  contacts: string[];
  /** Seconds since the epoch; 0: the secret never expires (RFC 7591 §3.2.1). */
  client_secret_expires_at: number;
  used_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface InitialAccessTokenRow {
  id: string;
  max_uses: number;
  uses: number;
  scope_ceiling: string[] | null;
  created_by: string;
  created_at: number;
  expires_at: number;
}

/** A nullable text column as read (both drivers answer a string or null). */
const text = (v: unknown): string | null => (v == null ? null : typeof v === 'string' ? v : JSON.stringify(v));

const regOf = (r: Record<string, unknown>): RegistrationRow => ({
  client_id: String(r.client_id),
  access_token_hash: String(r.access_token_hash),
  initial_access_token_id: text(r.initial_access_token_id),
  application_type: r.application_type === 'native' ? 'native' : 'web',
  software_id: text(r.software_id),
  software_version: text(r.software_version),
  contacts: r.contacts == null ? [] : (JSON.parse(text(r.contacts)!) as string[]),
  client_secret_expires_at: num(r.client_secret_expires_at),
  used_at: r.used_at == null ? null : num(r.used_at),
  created_at: num(r.created_at),
  updated_at: num(r.updated_at),
});

const iatOf = (r: Record<string, unknown>): InitialAccessTokenRow => ({
  id: String(r.id),
  max_uses: num(r.max_uses),
  uses: num(r.uses),
  scope_ceiling: r.scope_ceiling == null ? null : text(r.scope_ceiling)!.split(' ').filter(Boolean),
  created_by: String(r.created_by),
  created_at: num(r.created_at),
  expires_at: num(r.expires_at),
});

const IAT_COLUMNS = 'id, max_uses, uses, scope_ceiling, created_by, created_at, expires_at';

/** A tenant's registration records and initial access tokens. */
export class ScopedRegistrations {
  constructor(private readonly s: ScopeRef) {}

  async insert(r: Omit<RegistrationRow, 'used_at' | 'updated_at'>): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO client_registrations (tenant_id, client_id, access_token_hash, initial_access_token_id,
         application_type, software_id, software_version, contacts, client_secret_expires_at, used_at,
         created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)`,
      [
        this.s.tenantId,
        r.client_id,
        r.access_token_hash,
        r.initial_access_token_id,
        r.application_type,
        r.software_id,
        r.software_version,
        r.contacts.length ? JSON.stringify(r.contacts) : null,
        r.client_secret_expires_at,
        r.created_at,
        r.created_at,
      ],
    );
  }

  async get(clientId: string): Promise<RegistrationRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      'SELECT * FROM client_registrations WHERE tenant_id = ? AND client_id = ?',
      [this.s.tenantId, clientId],
    );
    return r ? regOf(r) : undefined;
  }

  /** RFC 7592 §2.2: a new registration access token (its hash) and the metadata kept here. */
  update(
    clientId: string,
    f: Pick<
      RegistrationRow,
      'access_token_hash' | 'application_type' | 'software_id' | 'software_version' | 'contacts'
    >,
    now: number,
  ): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE client_registrations SET access_token_hash = ?, application_type = ?, software_id = ?,
         software_version = ?, contacts = ?, updated_at = ? WHERE tenant_id = ? AND client_id = ?`,
      [
        f.access_token_hash,
        f.application_type,
        f.software_id,
        f.software_version,
        f.contacts.length ? JSON.stringify(f.contacts) : null,
        now,
        this.s.tenantId,
        clientId,
      ],
    );
  }

  /** Marks the client as used (a token was issued to it): the unused-client expiry spares it. */
  markUsed(clientId: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      'UPDATE client_registrations SET used_at = ? WHERE tenant_id = ? AND client_id = ? AND used_at IS NULL',
      [now, this.s.tenantId, clientId],
    );
  }

  /** Anonymous registrations created before `before` with no use recorded yet, oldest first. */
  async unusedBefore(before: number, limit: number): Promise<RegistrationRow[]> {
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT * FROM client_registrations
        WHERE tenant_id = ? AND used_at IS NULL AND created_at < ? AND initial_access_token_id IS NULL
        ORDER BY created_at, client_id LIMIT ?`,
      [this.s.tenantId, before, limit],
    );
    return rows.map(regOf);
  }

  /**
   * Whether a token was ever issued to the client: a token family (every code redemption makes
   * one) or a successful token event in the sign-in history. Read-only over those tables.
   */
  async tokensIssued(clientId: string): Promise<boolean> {
    const t = this.s.tenantId;
    const r = await one<{ n: unknown }>(
      this.s.db,
      `SELECT (SELECT COUNT(*) FROM token_families WHERE tenant_id = ? AND client_id = ?)
            + (SELECT COUNT(*) FROM auth_history WHERE tenant_id = ? AND client_id = ? AND event = 'token'
                AND outcome = 'success') AS n`,
      [t, clientId, t, clientId],
    );
    return num(r?.n ?? 0) > 0;
  }

  // ---- initial access tokens ----

  async insertInitialToken(x: InitialAccessTokenRow & { token_hash: string }): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO initial_access_tokens (id, tenant_id, token_hash, max_uses, uses, scope_ceiling, created_by,
         created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        x.id,
        this.s.tenantId,
        x.token_hash,
        x.max_uses,
        x.uses,
        x.scope_ceiling ? x.scope_ceiling.join(' ') : null,
        x.created_by,
        x.created_at,
        x.expires_at,
      ],
    );
  }

  async initialToken(id: string): Promise<InitialAccessTokenRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT ${IAT_COLUMNS} FROM initial_access_tokens WHERE tenant_id = ? AND id = ?`,
      [this.s.tenantId, id],
    );
    return r ? iatOf(r) : undefined;
  }

  async initialTokens(): Promise<InitialAccessTokenRow[]> {
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT ${IAT_COLUMNS} FROM initial_access_tokens WHERE tenant_id = ? ORDER BY created_at, id LIMIT 1000`,
      [this.s.tenantId],
    );
    return rows.map(iatOf);
  }

  removeInitialToken(id: string): Promise<number> {
    return exec(this.s.db, 'DELETE FROM initial_access_tokens WHERE tenant_id = ? AND id = ?', [this.s.tenantId, id]);
  }

  /**
   * Spends one use of the token, with one winner per use: the UPDATE's condition is the limit,
   * so two registrations at once cannot both take the last use. 1 when a use was taken.
   */
  spendInitialToken(id: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE initial_access_tokens SET uses = uses + 1
        WHERE tenant_id = ? AND id = ? AND uses < max_uses AND expires_at > ?`,
      [this.s.tenantId, id, now],
    );
  }
}

/**
 * The two registration lookups that cross tenants, each answering tenant ids only: the tenant
 * of an initial access token presented before the tenant is known, and the tenants that hold
 * anonymous registrations old enough for the unused-client expiry to look at.
 */
export class RegistrationLookups {
  constructor(private readonly db: Db) {}

  async initialTokenTenant(tokenHash: string): Promise<{ tenantId: string; id: string } | undefined> {
    const r = await one<{ tenant_id: string; id: string }>(
      this.db,
      'SELECT tenant_id, id FROM initial_access_tokens WHERE token_hash = ?',
      [tokenHash],
    );
    return r ? { tenantId: String(r.tenant_id), id: String(r.id) } : undefined;
  }

  async tenantsWithUnused(before: number, limit: number): Promise<string[]> {
    const rows = await all<{ tenant_id: string }>(
      this.db,
      `SELECT DISTINCT tenant_id FROM client_registrations
        WHERE used_at IS NULL AND created_at < ? AND initial_access_token_id IS NULL
        ORDER BY tenant_id LIMIT ?`,
      [before, limit],
    );
    return rows.map((r) => String(r.tenant_id));
  }
}
