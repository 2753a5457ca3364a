/**
 * Token families, refresh tokens and revoked access tokens.
 *
 * Every token descending from one grant shares a family, so revoking the family (logout,
 * refresh-token reuse, a withdrawn consent, a signed-out device) revokes them all. A refresh
 * token is found by its hash through lookups.ts; the family, its rotation and its revocation go
 * through the tenant's scope here. `revoked_access_tokens` holds the jti of each access token
 * revoked before its expiry (RFC 7009), and the spent ID-JAG assertions (single-use `jti`).
 *
 * The revocation check of introspection is one prepared statement (shared/db/prepared.ts):
 * introspection answers it on every request, cache hits included.
 */
import type { DataSource } from 'typeorm';
import type { Db } from '../db/index.js';
import { preparedGet, type PreparedGet } from '../db/prepared.js';
import { deleteInChunks } from '../db/purge.js';
import { all, exec, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

type Row = Record<string, unknown>;

/** A token family: one grant and every token descending from it. */
export interface FamilyRow {
  id: string;
  tenant_id: string;
  user_id: string | null;
  client_id: string;
  session_id: string | null;
  consent_id: string | null;
  scope: string[];
  /** The resource indicators (RFC 8707) granted at authorization; null for none. */
  resource: string[] | null;
  /** RFC 9449 §5: the DPoP key a public client's refresh tokens are bound to; null for none. */
  dpop_jkt: string | null;
  revoked_at: number | null;
}

/** A refresh token as its lookup finds it (lookups.ts); `id` is its hash. */
export interface RefreshTokenRow {
  id: string;
  tenant_id: string;
  family_id: string;
  expires_at: number;
  consumed_at: number | null;
}

/** Maps the refresh token lookup's row (lookups.ts). */
export function toRefreshTokenRow(r: Row): RefreshTokenRow {
  return {
    id: String(r.id),
    tenant_id: String(r.tenant_id),
    family_id: String(r.family_id),
    expires_at: num(r.expires_at),
    consumed_at: r.consumed_at === null || r.consumed_at === undefined ? null : num(r.consumed_at),
  };
}

/**
 * What introspection's one statement answers: the token's own revocation (jti), its family's,
 * and the states of its client, tenant and user. Null or undefined columns mean "no such row".
 */
export interface RevocationState {
  r_jti: unknown;
  r_fam: unknown;
  c_status: unknown;
  /** The client's access-token watermark, seconds (clients.tokens_revoked_before); null for none. */
  c_wm: unknown;
  t_state: unknown;
  u_status: unknown;
  /** The current generation of the token's agent grant (docs/agents.md); null without one. */
  g_gen: unknown;
}

const REVOCATION_SQL = `SELECT
  (SELECT 1 FROM revoked_access_tokens WHERE jti = ? AND tenant_id = ?) AS r_jti,
  (SELECT revoked_at FROM token_families WHERE id = ? AND tenant_id = ?) AS r_fam,
  (SELECT status FROM clients WHERE client_id = ? AND tenant_id = ?) AS c_status,
  (SELECT tokens_revoked_before FROM clients WHERE client_id = ? AND tenant_id = ?) AS c_wm,
  (SELECT lifecycle_state FROM tenants WHERE id = ?) AS t_state,
  (SELECT status FROM users WHERE tenant_id = ? AND id = ?) AS u_status,
  (SELECT generation FROM agent_grants WHERE id = ? AND tenant_id = ?) AS g_gen`;

/** One prepared revocation statement per data source, made on first use. */
const revocationStatements = new WeakMap<DataSource, PreparedGet<RevocationState>>();

const dataSourceOf = (db: Db): DataSource => ('manager' in db ? db : db.connection);

function toFamily(r: Row): FamilyRow {
  return {
    id: String(r.id),
    tenant_id: String(r.tenant_id),
    user_id: (r.user_id as string) ?? null,
    client_id: String(r.client_id),
    session_id: (r.session_id as string) ?? null,
    consent_id: (r.consent_id as string) ?? null,
    scope: String(r.scope).split(' ').filter(Boolean),
    resource: typeof r.resource === 'string' ? (JSON.parse(r.resource) as string[]) : null,
    dpop_jkt: typeof r.dpop_jkt === 'string' ? r.dpop_jkt : null,
    revoked_at: r.revoked_at === null || r.revoked_at === undefined ? null : num(r.revoked_at),
  };
}

/** A tenant's token families, refresh tokens and revoked access tokens. */
export class ScopedTokens {
  constructor(private readonly s: ScopeRef) {}

  // ---- families ----

  async createFamily(f: {
    id: string;
    userId: string | null;
    clientId: string;
    sessionId: string | null;
    consentId: string | null;
    scope: string[];
    /** RFC 8707 resource indicators granted; none is NULL. */
    resource?: string[] | null;
    /** RFC 9449 §5: the DPoP key its refresh tokens are bound to (a public client's); none is NULL. */
    dpopJkt?: string | null;
    createdAt: number;
  }): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO token_families (id, tenant_id, user_id, client_id, session_id, consent_id, scope, resource,
         dpop_jkt, created_at, revoked_at, revoked_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)`,
      [
        f.id,
        this.s.tenantId,
        f.userId,
        f.clientId,
        f.sessionId,
        f.consentId,
        f.scope.join(' '),
        f.resource?.length ? JSON.stringify(f.resource) : null,
        f.dpopJkt ?? null,
        f.createdAt,
      ],
    );
  }

  async family(id: string): Promise<FamilyRow | undefined> {
    const r = await one<Row>(this.s.db, 'SELECT * FROM token_families WHERE tenant_id = ? AND id = ?', [
      this.s.tenantId,
      id,
    ]);
    return r ? toFamily(r) : undefined;
  }

  /** Revokes one family; 0 when it was already revoked (or is not this tenant's). */
  revokeFamily(id: string, reason: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE token_families SET revoked_at = ?, revoked_reason = ?
        WHERE tenant_id = ? AND id = ? AND revoked_at IS NULL`,
      [now, reason, this.s.tenantId, id],
    );
  }

  /** Revokes every family granted through a browser session (logout, a device signed out). */
  revokeFamiliesOfSession(sessionId: string, reason: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE token_families SET revoked_at = ?, revoked_reason = ?
        WHERE tenant_id = ? AND session_id = ? AND revoked_at IS NULL`,
      [now, reason, this.s.tenantId, sessionId],
    );
  }

  /** Revokes a user's families granted under a consent, and every other one at its client. */
  revokeFamiliesOfConsent(
    userId: string,
    consent: { id: string; clientId: string },
    reason: string,
    now: number,
  ): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE token_families SET revoked_at = ?, revoked_reason = ?
        WHERE tenant_id = ? AND user_id = ? AND (consent_id = ? OR client_id = ?) AND revoked_at IS NULL`,
      [now, reason, this.s.tenantId, userId, consent.id, consent.clientId],
    );
  }

  /**
   * The applications signed in through each of a user's sessions: each session's families,
   * oldest first, with the client's name (null when the client is gone).
   */
  async appsOfSessions(
    userId: string,
    sessionIds: string[],
  ): Promise<{ session_id: string; client_id: string; name: string | null }[]> {
    if (!sessionIds.length) return [];
    const rows = await all<Row>(
      this.s.db,
      `SELECT f.session_id, f.client_id, f.created_at, cl.name FROM token_families f
         LEFT JOIN clients cl ON cl.tenant_id = f.tenant_id AND cl.client_id = f.client_id
        WHERE f.tenant_id = ? AND f.user_id = ? AND f.session_id IN (${sessionIds.map(() => '?').join(', ')})
        ORDER BY f.created_at ASC`,
      [this.s.tenantId, userId, ...sessionIds],
    );
    return rows.map((r) => ({
      session_id: String(r.session_id),
      client_id: String(r.client_id),
      name: (r.name as string | null) ?? null,
    }));
  }

  // ---- refresh tokens ----

  async insertRefreshToken(t: { id: string; familyId: string; createdAt: number; expiresAt: number }): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO refresh_tokens (id, tenant_id, family_id, created_at, expires_at, consumed_at)
       VALUES (?, ?, ?, ?, ?, NULL)`,
      [t.id, this.s.tenantId, t.familyId, t.createdAt, t.expiresAt],
    );
  }

  /** One winner: true for the one rotation that consumed it (RFC 9700 §4.14.2). */
  async consumeRefreshToken(id: string, now: number): Promise<boolean> {
    return (
      (await exec(
        this.s.db,
        'UPDATE refresh_tokens SET consumed_at = ? WHERE tenant_id = ? AND id = ? AND consumed_at IS NULL',
        [now, this.s.tenantId, id],
      )) === 1
    );
  }

  // ---- revoked access tokens ----

  /** Records an access token's revocation (RFC 7009); throws when the jti is already recorded. */
  async revokeAccessToken(jti: string, expiresAt: number, now: number): Promise<void> {
    await exec(
      this.s.db,
      'INSERT INTO revoked_access_tokens (jti, tenant_id, expires_at, revoked_at) VALUES (?, ?, ?, ?)',
      [jti, this.s.tenantId, expiresAt, now],
    );
  }

  /** True when the access token's jti, or its family, has been revoked. One statement. */
  async isAccessTokenRevoked(jti: string, familyId: string | undefined): Promise<boolean> {
    const r = await one<{ n: unknown }>(
      this.s.db,
      `SELECT (SELECT COUNT(*) FROM revoked_access_tokens WHERE jti = ? AND tenant_id = ?)
            + (SELECT COUNT(*) FROM token_families WHERE id = ? AND tenant_id = ? AND revoked_at IS NOT NULL) AS n`,
      [jti, this.s.tenantId, familyId ?? '', this.s.tenantId],
    );
    return num(r?.n) > 0;
  }

  /**
   * Introspection's revocation check, one prepared statement: the token's jti and family, its
   * client, this tenant and, for a user's token, the user. Runs outside transactions only (on
   * SQLite it waits for the gate, which an open transaction holds).
   */
  revocationState(c: {
    jti: string;
    familyId: string;
    clientId: string;
    sub: string;
    /** Absent or '' for a token without an agent grant: a primary-key probe that finds nothing. */
    agentGrantId?: string;
  }): Promise<RevocationState | undefined> {
    const ds = dataSourceOf(this.s.db);
    let get = revocationStatements.get(ds);
    if (!get) revocationStatements.set(ds, (get = preparedGet<RevocationState>(ds, REVOCATION_SQL)));
    const t = this.s.tenantId;
    return Promise.resolve(
      get([c.jti, t, c.familyId, t, c.clientId, t, c.clientId, t, t, t, c.sub, c.agentGrantId ?? '', t]),
    );
  }

  /**
   * Records a spent single-use value (an ID-JAG's `jti`, under a key that cannot collide with
   * an access token's jti) until `expiresAt`. False when it was already recorded: a replay.
   * One winner under races, across tenants too (the key is the primary key).
   */
  async recordSpentJti(key: string, expiresAt: number, now: number): Promise<boolean> {
    const ignore = dataSourceOf(this.s.db).options.type === 'mysql' ? 'INSERT IGNORE' : 'INSERT OR IGNORE';
    return (
      (await exec(
        this.s.db,
        `${ignore} INTO revoked_access_tokens (jti, tenant_id, expires_at, revoked_at) VALUES (?, ?, ?, ?)`,
        [key, this.s.tenantId, expiresAt, now],
      )) === 1
    );
  }
}

/**
 * Deletes token rows of every tenant once they can no longer matter (the auth-purge job), in
 * chunks by primary key (shared/db/purge.ts). Each method returns how many it deleted.
 */
export class TokenHousekeeping {
  constructor(private readonly db: Db) {}

  /** Refresh tokens that expired before `before`. */
  refreshTokens(before: number, signal?: AbortSignal): Promise<number> {
    return deleteInChunks(this.db, {
      table: 'refresh_tokens',
      key: 'id',
      where: 'expires_at < ?',
      params: [before],
      signal,
    });
  }

  /** Revocation records of access tokens (and spent assertions) that expired before `before`. */
  revokedAccessTokens(before: number, signal?: AbortSignal): Promise<number> {
    return deleteInChunks(this.db, {
      table: 'revoked_access_tokens',
      key: 'jti',
      where: 'expires_at < ?',
      params: [before],
      signal,
    });
  }
}
