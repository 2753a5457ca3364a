/**
 * Agent grants (docs/agents.md): the grant rows, their consent versions and the access tokens
 * issued under them. Every statement is bound to the scope's tenant.
 */
import { all, exec, json, num, one } from '../db/sql.js';
import type { DataSource } from 'typeorm';
import type { Db } from '../db/index.js';
import { deleteInChunks } from '../db/purge.js';
import type { AgentGrantImmutableTerms, AgentGrantView } from '../schemas/agents.js';
import type { ScopeRef } from './common.js';

type Row = Record<string, unknown>;

const dataSourceOf = (db: Db): DataSource => ('manager' in db ? db : db.connection);

/**
 * A stored grant: the served shape (AgentGrantView, declared once in shared/schemas/agents.ts)
 * with its stored id, its status as the column allows, and the immutable terms in one JSON
 * column. The consent state (`consent_required`) is not a column: it is read from the consents.
 */
export type AgentGrantRow = Omit<
  AgentGrantView,
  'grant_id' | 'status' | 'consent_required' | keyof AgentGrantImmutableTerms
> & {
  id: string;
  status: 'active' | 'revoked';
  immutable_terms: AgentGrantImmutableTerms;
};

const nullable = (v: unknown): string | null =>
  typeof v === 'string' ? v : v === null || v === undefined ? null : JSON.stringify(v);

function toGrant(r: Row): AgentGrantRow {
  return {
    id: String(r.id),
    tenant_id: String(r.tenant_id),
    client_id: String(r.client_id),
    grantor_user_id: String(r.grantor_user_id),
    delegator_user_id: nullable(r.delegator_user_id),
    machine_principal_id: nullable(r.machine_principal_id),
    authorization_details: json(r.authorization_details),
    purpose: nullable(r.purpose),
    expires_at: num(r.expires_at),
    status: String(r.status) as AgentGrantRow['status'],
    generation: num(r.generation),
    consent_version: num(r.consent_version),
    immutable_terms: json(r.immutable_terms),
    ceilings: json(r.ceilings),
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
  };
}

export class ScopedAgentGrants {
  constructor(private readonly s: ScopeRef) {}

  async insert(g: Omit<AgentGrantRow, 'tenant_id'>): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO agent_grants (id, tenant_id, client_id, grantor_user_id, delegator_user_id, machine_principal_id,
         authorization_details, purpose, expires_at, status, generation, consent_version, immutable_terms, ceilings,
         created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        g.id,
        this.s.tenantId,
        g.client_id,
        g.grantor_user_id,
        g.delegator_user_id,
        g.machine_principal_id,
        JSON.stringify(g.authorization_details),
        g.purpose,
        g.expires_at,
        g.status,
        g.generation,
        g.consent_version,
        JSON.stringify(g.immutable_terms),
        JSON.stringify(g.ceilings),
        g.created_at,
        g.updated_at,
      ],
    );
  }

  /**
   * `forUpdate` locks the row on MySQL for the rest of the caller's transaction (a token bound to
   * the grant is recorded under the generation read, and a PATCH's bump waits for it); SQLite's
   * transactions are exclusive already.
   */
  async get(id: string, opts: { forUpdate?: boolean } = {}): Promise<AgentGrantRow | undefined> {
    const lock = opts.forUpdate && dataSourceOf(this.s.db).options.type === 'mysql' ? ' FOR UPDATE' : '';
    const r = await one<Row>(this.s.db, `SELECT * FROM agent_grants WHERE tenant_id = ? AND id = ?${lock}`, [
      this.s.tenantId,
      id,
    ]);
    return r ? toGrant(r) : undefined;
  }

  /** The tenant's grants, newest first (the console's list). */
  async list(limit: number): Promise<AgentGrantRow[]> {
    const rows = await all<Row>(
      this.s.db,
      'SELECT * FROM agent_grants WHERE tenant_id = ? ORDER BY created_at DESC, id DESC LIMIT ?',
      [this.s.tenantId, limit],
    );
    return rows.map(toGrant);
  }

  /**
   * The PATCH's write: new terms, generation and consent version raised by one, guarded by the
   * generation read (optimistic: 0 when a concurrent update got there first).
   */
  bump(
    id: string,
    expectGeneration: number,
    t: { authorization_details: Record<string, unknown>[]; purpose: string | null; expires_at: number },
    now: number,
  ): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE agent_grants SET authorization_details = ?, purpose = ?, expires_at = ?,
         generation = generation + 1, consent_version = consent_version + 1, updated_at = ?
        WHERE tenant_id = ? AND id = ? AND generation = ?`,
      [JSON.stringify(t.authorization_details), t.purpose, t.expires_at, now, this.s.tenantId, id, expectGeneration],
    );
  }

  /**
   * The revoke's write: status `revoked` and the generation raised by one (every token of the
   * grant is then below it, so introspection refuses them all at once), guarded by the
   * generation read and the `active` status: 0 when a concurrent update or revoke got there first.
   */
  revoke(id: string, expectGeneration: number, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE agent_grants SET status = 'revoked', generation = generation + 1, updated_at = ?
        WHERE tenant_id = ? AND id = ? AND generation = ? AND status = 'active'`,
      [now, this.s.tenantId, id, expectGeneration],
    );
  }

  // ---- consents ----

  async insertConsent(grantId: string, version: number, now: number): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO agent_grant_consents (tenant_id, grant_id, consent_version, granted_at, revoked_at)
        VALUES (?, ?, ?, ?, NULL)`,
      [this.s.tenantId, grantId, version, now],
    );
  }

  /** Revokes every live consent of the grant below `version`; returns how many. */
  revokeConsentsBelow(grantId: string, version: number, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE agent_grant_consents SET revoked_at = ?
        WHERE tenant_id = ? AND grant_id = ? AND consent_version < ? AND revoked_at IS NULL`,
      [now, this.s.tenantId, grantId, version],
    );
  }

  async consents(
    grantId: string,
  ): Promise<{ consent_version: number; granted_at: number; revoked_at: number | null }[]> {
    const rows = await all<Row>(
      this.s.db,
      `SELECT consent_version, granted_at, revoked_at FROM agent_grant_consents
        WHERE tenant_id = ? AND grant_id = ? ORDER BY consent_version`,
      [this.s.tenantId, grantId],
    );
    return rows.map((r) => ({
      consent_version: num(r.consent_version),
      granted_at: num(r.granted_at),
      revoked_at: r.revoked_at === null || r.revoked_at === undefined ? null : num(r.revoked_at),
    }));
  }

  async hasLiveConsent(grantId: string, version: number): Promise<boolean> {
    const r = await one<Row>(
      this.s.db,
      `SELECT 1 AS ok FROM agent_grant_consents
        WHERE tenant_id = ? AND grant_id = ? AND consent_version = ? AND revoked_at IS NULL`,
      [this.s.tenantId, grantId, version],
    );
    return !!r;
  }

  // ---- tokens (each its own family) ----

  async insertToken(t: { jti: string; grantId: string; generation: number; expiresAt: number }, now: number) {
    await exec(
      this.s.db,
      `INSERT INTO agent_grant_tokens (tenant_id, jti, grant_id, generation, expires_at, created_at, revoked_at)
        VALUES (?, ?, ?, ?, ?, ?, NULL)`,
      [this.s.tenantId, t.jti, t.grantId, t.generation, t.expiresAt, now],
    );
  }

  /** Live (unrevoked, unexpired) token families of the grant issued under a generation below `generation`. */
  async countLiveBelow(grantId: string, generation: number, now: number): Promise<number> {
    const r = await one<Row>(
      this.s.db,
      `SELECT COUNT(*) AS n FROM agent_grant_tokens
        WHERE tenant_id = ? AND grant_id = ? AND generation < ? AND revoked_at IS NULL AND expires_at > ?`,
      [this.s.tenantId, grantId, generation, now],
    );
    return num(r?.n ?? 0);
  }

  async liveBelow(grantId: string, generation: number): Promise<{ jti: string; expires_at: number }[]> {
    const rows = await all<Row>(
      this.s.db,
      `SELECT jti, expires_at FROM agent_grant_tokens
        WHERE tenant_id = ? AND grant_id = ? AND generation < ? AND revoked_at IS NULL`,
      [this.s.tenantId, grantId, generation],
    );
    return rows.map((r) => ({ jti: String(r.jti), expires_at: num(r.expires_at) }));
  }

  /**
   * Revokes one token family: its access token's jti goes into revoked_access_tokens, which
   * introspection checks on every request, cache hits included (shared/services/introspection.ts).
   */
  async revokeToken(jti: string, expiresAt: number, now: number): Promise<void> {
    const ignore = dataSourceOf(this.s.db).options.type === 'mysql' ? 'INSERT IGNORE' : 'INSERT OR IGNORE';
    await exec(
      this.s.db,
      `${ignore} INTO revoked_access_tokens (jti, tenant_id, expires_at, revoked_at) VALUES (?, ?, ?, ?)`,
      [jti, this.s.tenantId, expiresAt, now],
    );
    await exec(
      this.s.db,
      'UPDATE agent_grant_tokens SET revoked_at = ? WHERE tenant_id = ? AND jti = ? AND revoked_at IS NULL',
      [now, this.s.tenantId, jti],
    );
  }
}

/**
 * Deletes agent grant token records of every tenant once their token has expired (the
 * auth-purge job): an expired token introspects inactive anyway, so there is nothing left to revoke.
 */
export class AgentGrantTokenHousekeeping {
  constructor(private readonly db: Db) {}

  expired(before: number, signal?: AbortSignal): Promise<number> {
    return deleteInChunks(this.db, {
      table: 'agent_grant_tokens',
      key: 'jti',
      where: 'expires_at < ?',
      params: [before],
      signal,
    });
  }
}
