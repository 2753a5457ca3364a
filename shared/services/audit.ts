/**
 * The audit log: `audit()` appends an event inside the caller's transaction (so the event and
 * the change it records commit together); AuditLog reads it for GET /api/admin/audit, newest
 * first, with keyset pagination over (created_at, id). The cursor is opaque to callers and signed
 * (shared/cursor.ts), so one the endpoint did not return is refused with 400.
 */
import { randomUUID } from 'node:crypto';
import type { AuditEvent } from '../db/entities.js';
import type { Database, Db } from '../db/index.js';
import { CursorSigner } from '../cursor.js';
import { AuditReader, AuditWriter } from '../repositories/index.js';

/** Who made a change: an operator at the CLI, an API client, or the service itself. */
export interface Actor {
  type: 'cli' | 'client' | 'user' | 'system';
  id: string;
  requestId?: string;
}

/**
 * Something that must happen with every audit event, in the event's own transaction (the audit
 * webhook plugin writes its outbox entry so: shared/services/plugins/audit-webhook.ts). Set
 * by the composition roots; none by default.
 */
export interface AuditSink {
  onEvent(db: Db, event: AuditEvent): Promise<void>;
}
let sink: AuditSink | undefined;

/** Installs the process's audit sink; returns the function that removes it. */
export function setAuditSink(s: AuditSink): () => void {
  sink = s;
  return () => {
    if (sink === s) sink = undefined;
  };
}

/** Appends one event; returns its id. Call it with the transaction that makes the change. */
export async function audit(
  db: Db,
  actor: Actor,
  e: {
    tenantId: string | null;
    action: string;
    targetType: string;
    targetId: string;
    outcome?: 'success' | 'failure';
    summary?: Record<string, unknown>;
  },
): Promise<string> {
  const id = randomUUID();
  const event: AuditEvent = {
    id,
    tenant_id: e.tenantId,
    actor_type: actor.type,
    actor_id: actor.id,
    action: e.action,
    target_type: e.targetType,
    target_id: e.targetId,
    outcome: e.outcome ?? 'success',
    request_id: actor.requestId ?? null,
    summary: e.summary ?? {},
    created_at: Date.now(),
  };
  await new AuditWriter(db).append(event);
  if (sink) await sink.onEvent(db, event);
  return id;
}

export const AUDIT_DEFAULT_LIMIT = 50;
export const AUDIT_MAX_LIMIT = 200;

/** The filters of one page; `tenantId` confines it to one tenant's events. */
export interface AuditQuery {
  tenantId?: string;
  action?: string;
  actorId?: string;
  targetId?: string;
  outcome?: 'success' | 'failure';
  since?: number;
  until?: number;
  limit?: number;
  cursor?: string;
}

export interface AuditPage {
  events: AuditEvent[];
  /** Present when there may be more: pass it back as `cursor` for the next page. */
  next_cursor?: string;
}

export class AuditLog {
  private readonly cursors: CursorSigner;

  constructor(
    private readonly db: Database,
    secretKey: string,
  ) {
    this.cursors = new CursorSigner(secretKey, 'audit');
  }

  /** One page of events, newest first; a cursor that is not one of ours is 400 `invalid_request`. */
  async page(q: AuditQuery): Promise<AuditPage> {
    const limit = Math.min(Math.max(q.limit ?? AUDIT_DEFAULT_LIMIT, 1), AUDIT_MAX_LIMIT);
    // One row more than asked tells whether another page exists without a COUNT.
    const rows = await new AuditReader(this.db).page({
      tenantId: q.tenantId,
      action: q.action,
      actorId: q.actorId,
      targetId: q.targetId,
      outcome: q.outcome,
      since: q.since,
      until: q.until,
      after: q.cursor === undefined ? undefined : this.cursors.decode(q.cursor),
      limit: limit + 1,
    });
    const events = rows.slice(0, limit);
    const last = events[events.length - 1];
    return {
      events,
      ...(rows.length > limit && last ? { next_cursor: this.cursors.encode(last.created_at, last.id) } : {}),
    };
  }
}
