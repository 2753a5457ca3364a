/**
 * The audit log: append-only (database triggers refuse UPDATE and DELETE, migrations/0001).
 * A tenant's events are read through its scope; AuditWriter appends events of any tenant or of
 * the platform (tenant_id null), as the actor that caused them may be a platform operator.
 */
import { AuditEventEntity, type AuditEvent } from '../db/entities.js';
import type { Db } from '../db/index.js';
import { exec } from '../db/sql.js';
import { clampLimit, manager, type Page, type ScopeRef } from './common.js';

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

/**
 * The authentication history: every login attempt and its outcome, appended on the login's hot
 * path (inside its transaction), so through shared/db/sql.ts. The user's data export reads it
 * (exports.ts).
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
}
