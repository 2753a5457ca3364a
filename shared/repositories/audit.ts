/**
 * The audit log: append-only (database triggers refuse UPDATE and DELETE, migrations/0001).
 * A tenant's events are read through its scope; AuditWriter appends events of any tenant or of
 * the platform (tenant_id null), as the actor that caused them may be a platform operator.
 */
import { AuditEventEntity, type AuditEvent } from '../db/entities.js';
import type { Db } from '../db/index.js';
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
