/**
 * Consents: what a user allowed a client. A consent is widened in place when the user grants
 * more, and withdrawn (revoked_at) rather than deleted, so the user's data export still lists it.
 * Every statement is bound to the scope's tenant and names the user, so another user's consent
 * id is simply not found.
 */
import { all, exec, json, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

type Row = Record<string, unknown>;

/** A consent as stored: the scopes a user allowed a client, and the policy versions shown. */
export interface ConsentRow {
  id: string;
  tenant_id: string;
  user_id: string;
  client_id: string;
  scopes: string[];
  granted_at: number;
  expires_at: number | null;
  privacy_policy_version: string | null;
  tos_version: string | null;
  consent_version: number;
}

/** A live consent as the user's own listing shows it, with the client's name and logo when it has them. */
export interface ConsentListRow extends Omit<ConsentRow, 'tenant_id' | 'user_id'> {
  client_name: string | null;
  client_logo_uri: string | null;
}

function toConsent(r: Row): ConsentRow {
  return {
    id: String(r.id),
    tenant_id: String(r.tenant_id),
    user_id: String(r.user_id),
    client_id: String(r.client_id),
    scopes: json<string[]>(r.scopes),
    granted_at: num(r.granted_at),
    expires_at: r.expires_at === null || r.expires_at === undefined ? null : num(r.expires_at),
    privacy_policy_version: (r.privacy_policy_version as string) ?? null,
    tos_version: (r.tos_version as string) ?? null,
    consent_version: num(r.consent_version),
  };
}

/** A tenant's consents. */
export class ScopedConsents {
  constructor(private readonly s: ScopeRef) {}

  /** The user's newest unwithdrawn consent at a client (expired or not: the caller decides). */
  async latest(userId: string, clientId: string): Promise<ConsentRow | undefined> {
    const r = await one<Row>(
      this.s.db,
      `SELECT * FROM consents WHERE tenant_id = ? AND user_id = ? AND client_id = ? AND revoked_at IS NULL
        ORDER BY granted_at DESC LIMIT 1`,
      [this.s.tenantId, userId, clientId],
    );
    return r ? toConsent(r) : undefined;
  }

  async insert(c: Omit<ConsentRow, 'tenant_id'>): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO consents (id, tenant_id, user_id, client_id, scopes, granted_at, expires_at, privacy_policy_version,
         tos_version, consent_version, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
      [
        c.id,
        this.s.tenantId,
        c.user_id,
        c.client_id,
        JSON.stringify(c.scopes),
        c.granted_at,
        c.expires_at,
        c.privacy_policy_version,
        c.tos_version,
        c.consent_version,
      ],
    );
  }

  /** Replaces a consent's scopes (a wider grant), the policy versions it was given under, and its grant time. */
  regrant(
    id: string,
    g: { scopes: string[]; privacy_policy_version: string | null; tos_version: string | null; now: number },
  ): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE consents SET scopes = ?, privacy_policy_version = ?, tos_version = ?, granted_at = ?
        WHERE tenant_id = ? AND id = ?`,
      [JSON.stringify(g.scopes), g.privacy_policy_version, g.tos_version, g.now, this.s.tenantId, id],
    );
  }

  /** The user's unwithdrawn consents, newest first, with each client's name and logo. */
  async listWithClientNames(userId: string): Promise<ConsentListRow[]> {
    const rows = await all<Row>(
      this.s.db,
      `SELECT c.id, c.client_id, c.scopes, c.granted_at, c.expires_at, c.privacy_policy_version, c.tos_version,
              c.consent_version, cl.name AS client_name, cl.logo_uri AS client_logo_uri
         FROM consents c LEFT JOIN clients cl ON cl.tenant_id = c.tenant_id AND cl.client_id = c.client_id
        WHERE c.tenant_id = ? AND c.user_id = ? AND c.revoked_at IS NULL
        ORDER BY c.granted_at DESC, c.id`,
      [this.s.tenantId, userId],
    );
    return rows.map((r) => ({
      id: String(r.id),
      client_id: String(r.client_id),
      scopes: json<string[]>(r.scopes),
      granted_at: num(r.granted_at),
      expires_at: r.expires_at === null || r.expires_at === undefined ? null : num(r.expires_at),
      privacy_policy_version: (r.privacy_policy_version as string | null) ?? null,
      tos_version: (r.tos_version as string | null) ?? null,
      consent_version: num(r.consent_version),
      client_name: typeof r.client_name === 'string' ? r.client_name : null,
      client_logo_uri: typeof r.client_logo_uri === 'string' ? r.client_logo_uri : null,
    }));
  }

  /** The client of the user's unwithdrawn consent `id`, or undefined. */
  async liveClientOf(userId: string, id: string): Promise<string | undefined> {
    const r = await one<{ client_id: string }>(
      this.s.db,
      'SELECT client_id FROM consents WHERE id = ? AND tenant_id = ? AND user_id = ? AND revoked_at IS NULL',
      [id, this.s.tenantId, userId],
    );
    return r ? String(r.client_id) : undefined;
  }

  /** Withdraws the user's consent `id`; 0 when it was not live (or not theirs). */
  withdraw(userId: string, id: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      'UPDATE consents SET revoked_at = ? WHERE id = ? AND tenant_id = ? AND user_id = ? AND revoked_at IS NULL',
      [now, id, this.s.tenantId, userId],
    );
  }
}
