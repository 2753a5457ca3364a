/**
 * The audit log: append-only (database triggers refuse UPDATE and DELETE, migrations/0001).
 * A tenant's events are read through its scope; AuditWriter appends events of any tenant or of
 * the platform (tenant_id null), as the actor that caused them may be a platform operator.
 * AuditReader is the admin API's filtered, keyset-paginated view of the whole log.
 */
import { AuditEventEntity, type AuditEvent, type JsonObject } from '../db/entities.js';
import type { Db } from '../db/index.js';
import { deleteInChunks } from '../db/purge.js';
import { all, exec, json, num, one } from '../db/sql.js';
import { clampLimit, manager, type Page, type ScopeRef } from './common.js';
import { SIGN_IN_EVENT } from './users.js';

export class ScopedAudit {
  constructor(private readonly s: ScopeRef) {}
  list(page: Page = {}): Promise<AuditEvent[]> {
    return manager(this.s.db)
      .getRepository(AuditEventEntity)
      .find({
        where: { tenant_id: this.s.tenantId },
        order: { created_at: 'DESC', id: 'DESC' },
        take: clampLimit(page.limit),
        skip: page.offset ?? 0,
      });
  }
}

/** Append-only audit writer; there is deliberately no update or delete here (nor in the DB). */
export class AuditWriter {
  constructor(private readonly db: Db) {}
  async append(e: AuditEvent): Promise<void> {
    await manager(this.db).getRepository(AuditEventEntity).insert(e);
  }
}

/** The filters of GET /api/admin/audit; each one given narrows the page. */
export interface AuditFilter {
  tenantId?: string;
  action?: string;
  actorId?: string;
  targetId?: string;
  outcome?: string;
  /** created_at at or after (epoch ms). */
  since?: number;
  /** created_at before (epoch ms). */
  until?: number;
  /** Keyset cursor: only events that sort after this one (created_at, id), newest first. */
  after?: { createdAt: number; id: string };
  limit: number;
}

/**
 * Reads of the whole audit log (every tenant's events and the platform's), newest first. The
 * caller confines a tenant admin to its tenant with `tenantId`.
 */
export class AuditReader {
  constructor(private readonly db: Db) {}

  async page(f: AuditFilter): Promise<AuditEvent[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const eq = (col: string, v: unknown) => {
      if (v !== undefined) {
        where.push(`${col} = ?`);
        params.push(v);
      }
    };
    eq('tenant_id', f.tenantId);
    eq('action', f.action);
    eq('actor_id', f.actorId);
    eq('target_id', f.targetId);
    eq('outcome', f.outcome);
    if (f.since !== undefined) {
      where.push('created_at >= ?');
      params.push(f.since);
    }
    if (f.until !== undefined) {
      where.push('created_at < ?');
      params.push(f.until);
    }
    if (f.after !== undefined) {
      // Pages neither skip nor repeat rows while events are appended: they sort before the cursor.
      where.push('(created_at < ? OR (created_at = ? AND id < ?))');
      params.push(f.after.createdAt, f.after.createdAt, f.after.id);
    }
    const rows = await all<Record<string, unknown>>(
      this.db,
      `SELECT id, tenant_id, actor_type, actor_id, action, target_type, target_id, outcome, request_id, summary,
        created_at
      FROM audit_events ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY created_at DESC, id DESC LIMIT ?`,
      [...params, f.limit],
    );
    return rows.map((r) => ({
      id: String(r.id),
      tenant_id: (r.tenant_id as string | null) ?? null,
      actor_type: String(r.actor_type),
      actor_id: String(r.actor_id),
      action: String(r.action),
      target_type: String(r.target_type),
      target_id: String(r.target_id),
      outcome: r.outcome as AuditEvent['outcome'],
      request_id: (r.request_id as string | null) ?? null,
      summary: json<JsonObject | null>(r.summary) ?? {},
      created_at: num(r.created_at),
    }));
  }
}

/** One sign-in event of the authentication history (a user's own history, and support's). */
export interface AuthHistoryRow {
  id: string;
  user_id: string | null;
  event: string;
  outcome: 'success' | 'failure';
  reason: string | null;
  client_id: string | null;
  ip: string | null;
  user_agent: string | null;
  created_at: number;
}

/** The filters of one page of the sign-in history; each one given narrows it. */
export interface SignInFilter {
  /** The sign-in events (the methods asked for). */
  events: string[];
  userId?: string;
  outcome?: 'success' | 'failure';
  clientId?: string;
  /** The start of the address as recorded: digits, hex, '.' and ':' only (the caller checks). */
  ipPrefix?: string;
  /** created_at at or after (epoch ms). */
  since?: number;
  /** created_at before (epoch ms). */
  until?: number;
  /** Keyset cursor: only rows that sort after this one (created_at, id), newest first. */
  after?: { createdAt: number; id: string };
  limit: number;
}

/**
 * The authentication history: every login attempt and its outcome, appended on the login's hot
 * path (inside its transaction), so through shared/db/sql.ts. The user's data export reads it
 * (exports.ts); the sign-in history pages it (shared/services/sign-ins.ts).
 */
export class ScopedAuthHistory {
  constructor(private readonly s: ScopeRef) {}
  async append(e: AuthHistoryRow): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO auth_history (id, tenant_id, user_id, event, outcome, reason, client_id, ip, user_agent, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [e.id, this.s.tenantId, e.user_id, e.event, e.outcome, e.reason, e.client_id, e.ip, e.user_agent, e.created_at],
    );
  }

  /**
   * The scope's sign-in rows, newest first in (created_at, id) order: a keyset page that neither
   * skips nor repeats rows while new ones are appended (they sort before the cursor).
   */
  async page(f: SignInFilter): Promise<AuthHistoryRow[]> {
    if (f.events.length === 0) return [];
    const where = ['tenant_id = ?', `event IN (${f.events.map(() => '?').join(', ')})`];
    const params: unknown[] = [this.s.tenantId, ...f.events];
    const add = (clause: string, ...v: unknown[]) => {
      where.push(clause);
      params.push(...v);
    };
    if (f.userId !== undefined) add('user_id = ?', f.userId);
    if (f.outcome !== undefined) add('outcome = ?', f.outcome);
    if (f.clientId !== undefined) add('client_id = ?', f.clientId);
    // No LIKE wildcard can be in the prefix (the caller allows digits, hex, '.' and ':').
    if (f.ipPrefix !== undefined) add('ip LIKE ?', `${f.ipPrefix}%`);
    if (f.since !== undefined) add('created_at >= ?', f.since);
    if (f.until !== undefined) add('created_at < ?', f.until);
    if (f.after !== undefined)
      add('(created_at < ? OR (created_at = ? AND id < ?))', f.after.createdAt, f.after.createdAt, f.after.id);
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT id, user_id, event, outcome, reason, client_id, ip, user_agent, created_at FROM auth_history
        WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ?`,
      [...params, f.limit],
    );
    return rows.map((r) => ({
      id: String(r.id),
      user_id: (r.user_id as string | null) ?? null,
      event: String(r.event),
      outcome: r.outcome === 'success' ? 'success' : 'failure',
      reason: (r.reason as string | null) ?? null,
      client_id: (r.client_id as string | null) ?? null,
      ip: (r.ip as string | null) ?? null,
      user_agent: (r.user_agent as string | null) ?? null,
      created_at: num(r.created_at),
    }));
  }

  /** The user's latest successful sign-in (the history's new session), or undefined: never signed in. */
  lastSignIn(userId: string): Promise<{ created_at: number; client_id: string | null } | undefined> {
    return one<{ created_at: number; client_id: string | null }>(
      this.s.db,
      `SELECT created_at, client_id FROM auth_history
        WHERE tenant_id = ? AND user_id = ? AND event = ? AND outcome = 'success'
        ORDER BY created_at DESC LIMIT 1`,
      [this.s.tenantId, userId, SIGN_IN_EVENT],
    ).then((r) => (r ? { created_at: num(r.created_at), client_id: r.client_id ?? null } : undefined));
  }
}

/** The purge of history rows past their retention, across tenants (shared/services/auth/purge.ts). */
export class AuthHistoryHousekeeping {
  constructor(private readonly db: Db) {}

  olderThan(before: number, signal?: AbortSignal): Promise<number> {
    return deleteInChunks(this.db, {
      table: 'auth_history',
      key: 'id',
      where: 'created_at < ?',
      params: [before],
      signal,
    });
  }
}
