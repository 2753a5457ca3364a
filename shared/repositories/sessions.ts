/**
 * The sign-in's rows: email codes, browser sessions and direct-auth artifacts. (The users table,
 * as sign-in reads it too, is users.ts; authorization requests and codes, the protocol's rows a
 * login continues and ends in, are authorization.ts.)
 *
 * A row found by the hash of a value only its holder knows (a session cookie, an artifact, a
 * code, a challenge id) is found through lookups.ts, which returns its tenant id; everything
 * after that (consuming it, touching it, revoking it) goes through that tenant's scope here,
 * and every statement binds `tenant_id`.
 *
 * These are the login's hot paths (five requests per login, one or two statements each), so
 * every statement goes through shared/db/sql.ts: one point statement, `?` placeholders,
 * prepared once and cached on SQLite. One-winner races (a code used twice, an artifact
 * redeemed twice) are conditional updates whose affected-row count the caller checks.
 */
import type { Db } from '../db/index.js';
import { deleteInChunks } from '../db/purge.js';
import { all, exec, json, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

type Row = Record<string, unknown>;

/** The latest unconsumed code of an address, as verification reads it. */
export interface LiveEmailCode {
  id: string;
  user_id: string | null;
  client_id: string;
  code_hash: string;
  attempts: number;
  expires_at: number;
}

/** Email codes: stored as an HMAC, counted and consumed by conditional updates. */
export class ScopedEmailCodes {
  constructor(private readonly s: ScopeRef) {}

  /**
   * Marks the address's unconsumed codes of one login transaction (`binding`) consumed: a new
   * code supersedes them. Another transaction's codes stay live.
   */
  supersede(email: string, binding: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE email_codes SET consumed_at = ?
        WHERE tenant_id = ? AND email = ? AND binding = ? AND consumed_at IS NULL`,
      [now, this.s.tenantId, email, binding],
    );
  }

  async insert(c: {
    id: string;
    email: string;
    userId: string | null;
    clientId: string;
    binding: string;
    codeHash: string;
    createdAt: number;
    expiresAt: number;
  }): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO email_codes (id, tenant_id, email, user_id, client_id, binding, code_hash, attempts, created_at,
         expires_at, consumed_at) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, NULL)`,
      [c.id, this.s.tenantId, c.email, c.userId, c.clientId, c.binding, c.codeHash, c.createdAt, c.expiresAt],
    );
  }

  /**
   * The address's newest unconsumed code of one login transaction (expired or not: the caller
   * tells them apart).
   */
  async latestLive(email: string, binding: string): Promise<LiveEmailCode | undefined> {
    const r = await one<Row>(
      this.s.db,
      `SELECT id, user_id, client_id, code_hash, attempts, expires_at FROM email_codes
        WHERE tenant_id = ? AND email = ? AND binding = ? AND consumed_at IS NULL ORDER BY created_at DESC LIMIT 1`,
      [this.s.tenantId, email, binding],
    );
    if (!r) return undefined;
    return {
      id: String(r.id),
      user_id: (r.user_id as string | null) ?? null,
      client_id: String(r.client_id),
      code_hash: String(r.code_hash),
      attempts: num(r.attempts),
      expires_at: num(r.expires_at),
    };
  }

  /** Counts a wrong attempt; false when the code is spent or its attempts are used up. */
  async countAttempt(id: string, maxAttempts: number): Promise<boolean> {
    return (
      (await exec(
        this.s.db,
        `UPDATE email_codes SET attempts = attempts + 1
          WHERE tenant_id = ? AND id = ? AND consumed_at IS NULL AND attempts < ?`,
        [this.s.tenantId, id, maxAttempts],
      )) === 1
    );
  }

  /** Counts the right attempt and consumes the code in one write; false when another won. */
  async consume(id: string, maxAttempts: number, now: number): Promise<boolean> {
    return (
      (await exec(
        this.s.db,
        `UPDATE email_codes SET attempts = attempts + 1, consumed_at = ?
          WHERE tenant_id = ? AND id = ? AND consumed_at IS NULL AND attempts < ?`,
        [now, this.s.tenantId, id, maxAttempts],
      )) === 1
    );
  }

  /** When the code was consumed, or null (not consumed, or no such code). */
  async consumedAt(id: string): Promise<number | null> {
    const r = await one<{ consumed_at: unknown }>(
      this.s.db,
      'SELECT consumed_at FROM email_codes WHERE tenant_id = ? AND id = ?',
      [this.s.tenantId, id],
    );
    return r?.consumed_at == null ? null : num(r.consumed_at);
  }
}

/** A browser session; `id` is the SHA-256 of the cookie value, never the value. */
export interface SessionRow {
  id: string;
  tenant_id: string;
  user_id: string;
  created_at: number;
  expires_at: number;
  auth_time: number;
  acr: string;
  amr: string[];
  user_agent: string | null;
  last_seen_at: number;
}

/** A session as the cookie lookup finds it: with its user and the state of its tenant. */
export interface SessionWithUser {
  session: SessionRow;
  user: { email: string; name: string; status: string };
  tenantState: string;
  /** The tenant's settings' `sessions` section as stored (its timeouts), read by the same join;
   * undefined when the settings are absent or not a JSON object. */
  sessionsSection: unknown;
}

/** The `sessions` section of a settings document read as text or JSON; a malformed one reads as none. */
function sessionsSectionOf(settings: unknown): unknown {
  let doc = settings;
  if (typeof doc === 'string') {
    try {
      doc = JSON.parse(doc);
    } catch {
      return undefined;
    }
  }
  return doc && typeof doc === 'object' ? (doc as { sessions?: unknown }).sessions : undefined;
}

/** Maps the cookie lookup's joined row (lookups.ts). */
export function toSessionWithUser(r: Row): SessionWithUser {
  return {
    session: {
      id: String(r.id),
      tenant_id: String(r.tenant_id),
      user_id: String(r.user_id),
      created_at: num(r.created_at),
      expires_at: num(r.expires_at),
      auth_time: num(r.auth_time),
      acr: String(r.acr),
      amr: json<string[]>(r.amr),
      user_agent: (r.user_agent as string) ?? null,
      last_seen_at: num(r.last_seen_at),
    },
    user: { email: String(r.email), name: String(r.name), status: String(r.status) },
    tenantState: String(r.lifecycle_state),
    sessionsSection: sessionsSectionOf(r.settings),
  };
}

/** One row of the account's devices page. */
export interface DeviceSessionRow {
  id: string;
  created_at: number;
  user_agent: string | null;
  last_seen_at: number;
  /** The address the session signed in from (the account page shows it as the device's place). */
  ip: string | null;
}

/** Browser sessions. */
export class ScopedSessions {
  constructor(private readonly s: ScopeRef) {}

  async insert(row: SessionRow & { ip: string | null }): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO sessions (id, tenant_id, user_id, created_at, expires_at, auth_time, acr, amr, user_agent, ip,
         last_seen_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
      [
        row.id,
        this.s.tenantId,
        row.user_id,
        row.created_at,
        row.expires_at,
        row.auth_time,
        row.acr,
        JSON.stringify(row.amr),
        row.user_agent,
        row.ip,
        row.last_seen_at,
      ],
    );
  }

  /** Records that the session was used (the caller limits how often). */
  touch(id: string, now: number): Promise<number> {
    return exec(this.s.db, 'UPDATE sessions SET last_seen_at = ? WHERE tenant_id = ? AND id = ?', [
      now,
      this.s.tenantId,
      id,
    ]);
  }

  /**
   * A fresh sign-in on a live session (step-up re-authentication): its auth_time, acr and amr
   * become those of the new sign-in. 0 when the session has ended (or is not this tenant's).
   */
  reauthenticate(id: string, authTime: number, acr: string, amr: string[]): Promise<number> {
    return exec(
      this.s.db,
      'UPDATE sessions SET auth_time = ?, acr = ?, amr = ? WHERE tenant_id = ? AND id = ? AND revoked_at IS NULL',
      [authTime, acr, JSON.stringify(amr), this.s.tenantId, id],
    );
  }

  /** Ends the session; 0 when it had already ended (or is not this tenant's). */
  revoke(id: string, now: number): Promise<number> {
    return exec(this.s.db, 'UPDATE sessions SET revoked_at = ? WHERE tenant_id = ? AND id = ? AND revoked_at IS NULL', [
      now,
      this.s.tenantId,
      id,
    ]);
  }

  /** True when the session has not been revoked and its user is active (at code redemption). */
  async isLiveWithActiveUser(id: string): Promise<boolean> {
    const r = await one<{ n: unknown }>(
      this.s.db,
      `SELECT COUNT(*) AS n FROM sessions s JOIN users u ON u.id = s.user_id AND u.tenant_id = s.tenant_id
        WHERE s.tenant_id = ? AND s.id = ? AND s.revoked_at IS NULL AND u.status = 'active'`,
      [this.s.tenantId, id],
    );
    return num(r?.n) > 0;
  }

  /**
   * One page of a user's live sessions, newest first (created_at desc, id asc), starting after
   * `after`; `limit` rows at most (an integer: it is part of the statement text).
   */
  async listLive(
    userId: string,
    now: number,
    limit: number,
    after?: { createdAt: number; id: string },
  ): Promise<DeviceSessionRow[]> {
    const params: unknown[] = [this.s.tenantId, userId, now];
    let where = 's.tenant_id = ? AND s.user_id = ? AND s.revoked_at IS NULL AND s.expires_at > ?';
    if (after) {
      where += ' AND (s.created_at < ? OR (s.created_at = ? AND s.id > ?))';
      params.push(after.createdAt, after.createdAt, after.id);
    }
    const rows = await all<Row>(
      this.s.db,
      `SELECT s.id, s.created_at, s.user_agent, s.last_seen_at, s.ip FROM sessions s WHERE ${where}
        ORDER BY s.created_at DESC, s.id ASC LIMIT ${Math.trunc(limit)}`,
      params,
    );
    return rows.map((r) => ({
      id: String(r.id),
      created_at: num(r.created_at),
      user_agent: (r.user_agent as string | null) ?? null,
      last_seen_at: num(r.last_seen_at),
      ip: (r.ip as string | null) ?? null,
    }));
  }

  /** The ids of a user's live sessions. */
  async liveIds(userId: string, now: number): Promise<string[]> {
    const rows = await all<{ id: string }>(
      this.s.db,
      'SELECT id FROM sessions WHERE tenant_id = ? AND user_id = ? AND revoked_at IS NULL AND expires_at > ?',
      [this.s.tenantId, userId, now],
    );
    return rows.map((r) => String(r.id));
  }
}

/** A direct-auth artifact as its lookup finds it (lookups.ts); `id` is its hash. */
export interface ArtifactRow {
  id: string;
  tenantId: string;
  clientId: string;
  userId: string;
  channel: string;
  providerId: string;
  codeChallenge: string;
  authRequestId: string | null;
  authTime: number;
  amr: string[];
  /** The acr the session gets; null for an email-code artifact (its acr is the email code's). */
  acr: string | null;
  /** The passkey of a passkey sign-in, re-checked at redemption; null otherwise. */
  passkeyId: string | null;
  expiresAt: number;
  consumed: boolean;
}

/** Maps the artifact lookup's row (lookups.ts). */
export function toArtifactRow(r: Row): ArtifactRow {
  return {
    id: String(r.id),
    tenantId: String(r.tenant_id),
    clientId: String(r.client_id),
    userId: String(r.user_id),
    channel: String(r.channel),
    providerId: String(r.provider_id),
    codeChallenge: String(r.code_challenge),
    authRequestId: (r.auth_request_id as string) ?? null,
    authTime: num(r.auth_time),
    amr: json<string[]>(r.amr),
    acr: (r.acr as string | null) ?? null,
    passkeyId: (r.passkey_id as string | null) ?? null,
    expiresAt: num(r.expires_at),
    consumed: r.consumed_at !== null && r.consumed_at !== undefined,
  };
}

/** Direct-auth artifacts: single-use, short-lived, bound to a client, channel and PKCE challenge. */
export class ScopedArtifacts {
  constructor(private readonly s: ScopeRef) {}

  async insert(a: Omit<ArtifactRow, 'tenantId' | 'consumed'> & { createdAt: number }): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO direct_auth_artifacts (id, tenant_id, client_id, user_id, channel, provider_id, code_challenge,
         auth_request_id, auth_time, amr, acr, passkey_id, created_at, expires_at, consumed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
      [
        a.id,
        this.s.tenantId,
        a.clientId,
        a.userId,
        a.channel,
        a.providerId,
        a.codeChallenge,
        a.authRequestId,
        a.authTime,
        JSON.stringify(a.amr),
        a.acr,
        a.passkeyId,
        a.createdAt,
        a.expiresAt,
      ],
    );
  }

  /** One winner: true for the one caller that consumed it. */
  async consume(id: string, now: number): Promise<boolean> {
    return (
      (await exec(
        this.s.db,
        'UPDATE direct_auth_artifacts SET consumed_at = ? WHERE tenant_id = ? AND id = ? AND consumed_at IS NULL',
        [now, this.s.tenantId, id],
      )) === 1
    );
  }
}

/**
 * Deletes the sign-in's rows of every tenant once they can no longer matter (the auth-purge
 * job), in chunks by primary key (shared/db/purge.ts). Each method returns how many it deleted.
 */
export class LoginHousekeeping {
  constructor(private readonly db: Db) {}

  /** Authorization requests that expired before `before`. */
  authRequests(before: number, signal?: AbortSignal): Promise<number> {
    return this.purge('auth_requests', 'expires_at < ?', [before], signal);
  }
  /** Direct-auth artifacts that expired before `before`. */
  artifacts(before: number, signal?: AbortSignal): Promise<number> {
    return this.purge('direct_auth_artifacts', 'expires_at < ?', [before], signal);
  }
  /** Email codes that expired before `before`. */
  emailCodes(before: number, signal?: AbortSignal): Promise<number> {
    return this.purge('email_codes', 'expires_at < ?', [before], signal);
  }
  /** Authorization codes that expired before `before`. */
  authCodes(before: number, signal?: AbortSignal): Promise<number> {
    return this.purge('auth_codes', 'expires_at < ?', [before], signal);
  }
  /** Sessions that expired, or were revoked, before `before`. */
  sessions(before: number, signal?: AbortSignal): Promise<number> {
    return this.purge('sessions', '(expires_at < ? OR revoked_at < ?)', [before, before], signal);
  }

  private purge(table: string, where: string, params: unknown[], signal?: AbortSignal): Promise<number> {
    return deleteInChunks(this.db, { table, key: 'id', where, params, signal });
  }
}
