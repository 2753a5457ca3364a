/**
 * Operational notification states (docs/federation.md, "Operational notification states"):
 * what an operator must act on, raised by the metadata poller and the field-mapping jobs.
 *
 * - `raise` opens one state per (condition, subject); while it is open a repeated raise only
 *   refreshes its details and counts the occurrence. The database enforces "one open state"
 *   (UNIQUE(tenant_id, open_key)); two raisers racing both end with the one row.
 * - `clear` is called when the condition has ended: the open state resolves itself
 *   (resolution `automatic`).
 * - `resolve` is the operator's move (API and CLI): any prior state becomes `resolved`
 *   (resolution `operator`) and the prior value is returned as `previousState`. Resolving a
 *   state that is already resolved changes nothing and answers `idempotent: true`. When an
 *   operator resolves a state whose condition still holds, the same condition is not raised
 *   again for that subject until it has ended (a `clear`), so a poll every 15 minutes does not
 *   reopen what the operator has just dealt with.
 */
import { isUniqueViolation, type Database, type Db } from '../db/index.js';
import { newId } from '../crypto.js';
import { notFound } from '../errors.js';
import { TenantScope, type NotificationFilter, type NotificationStateRow } from '../repositories/index.js';
import { audit, type Actor } from './audit.js';
import type { IdempotencyHandle } from './idempotency.js';
import type { NotificationStateView } from '../schemas/federation.js';

/** Conditions raised today; the column takes any short code, so later raisers add their own. */
export const NOTIFICATION_CONDITIONS = [
  'metadata_expiring',
  'metadata_expired',
  'signing_identity_changed',
  'refresh_failing',
] as const;
export type NotificationCondition = (typeof NOTIFICATION_CONDITIONS)[number] | (string & {});

export const NOTIFICATION_STATES = ['open', 'resolved'] as const;

export const NOTIFICATIONS_DEFAULT_LIMIT = 50;
export const NOTIFICATIONS_MAX_LIMIT = 200;

/** The subject a state is about, e.g. `{type: 'federation_trust_source', id: 'fts_…'}`. */
export interface NotificationSubject {
  type: string;
  id: string;
}

/** A state as the API and the CLI show it (declared once, in shared/schemas/federation.ts). */
export type { NotificationStateView };
export interface NotificationTransitionResult {
  id: string;
  previousState: string;
  state: 'resolved';
  idempotent: boolean;
}

/**
 * What `raise` did: opened a new state, refreshed the open one, or nothing (`quiet`: the
 * operator resolved it while the condition holds).
 */
export interface RaiseOutcome {
  id: string | null;
  outcome: 'opened' | 'refreshed' | 'quiet';
}

const keyOf = (condition: string, subject: NotificationSubject): string => `${condition}:${subject.type}:${subject.id}`;

export function notificationView(r: NotificationStateRow): NotificationStateView {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    condition: r.condition_code,
    subjectType: r.subject_type,
    subjectId: r.subject_id,
    state: r.state,
    details: r.details,
    assignedTo: r.assigned_to,
    resolution: r.resolution,
    occurrences: r.raise_count,
    raisedAt: r.raised_at,
    updatedAt: r.updated_at,
    resolvedAt: r.resolved_at,
  };
}

export class NotificationStates {
  constructor(private readonly db: Database) {}

  /**
   * Raises `condition` for `subject` (no duplicate while open). Pass `db` to raise inside the
   * caller's transaction.
   */
  async raise(
    tenantId: string,
    condition: NotificationCondition,
    subject: NotificationSubject,
    details: Record<string, unknown> = {},
    db: Db = this.db,
  ): Promise<RaiseOutcome> {
    const scope = new TenantScope(db, tenantId).notificationStates;
    const key = keyOf(condition, subject);
    const now = Date.now();
    if ((await scope.touchOpen(key, details, now)) > 0) {
      return { id: (await scope.byOpenKey(key))?.id ?? null, outcome: 'refreshed' };
    }
    if (await scope.quieted(key)) return { id: null, outcome: 'quiet' };
    const id = newId('ons');
    try {
      await scope.insertOpen({ id, condition, subjectType: subject.type, subjectId: subject.id, details, key, now });
      return { id, outcome: 'opened' };
    } catch (e) {
      // Another raiser opened it between our update and insert: the unique open key kept it one.
      if (!isUniqueViolation(e)) throw e;
      await scope.touchOpen(key, details, now);
      return { id: (await scope.byOpenKey(key))?.id ?? null, outcome: 'refreshed' };
    }
  }

  /** The condition has ended for `subject`: its open state resolves itself. Returns whether one was open. */
  async clear(
    tenantId: string,
    condition: NotificationCondition,
    subject: NotificationSubject,
    db: Db = this.db,
  ): Promise<boolean> {
    return (await new TenantScope(db, tenantId).notificationStates.clear(keyOf(condition, subject), Date.now())) > 0;
  }

  /** The open state of `condition` for `subject`, if any. */
  async open(
    tenantId: string,
    condition: NotificationCondition,
    subject: NotificationSubject,
  ): Promise<NotificationStateView | undefined> {
    const r = await new TenantScope(this.db, tenantId).notificationStates.byOpenKey(keyOf(condition, subject));
    return r ? notificationView(r) : undefined;
  }

  async list(
    tenantId: string,
    filter: NotificationFilter,
    limit = NOTIFICATIONS_DEFAULT_LIMIT,
    offset = 0,
  ): Promise<NotificationStateView[]> {
    const n = Math.min(Math.max(limit, 1), NOTIFICATIONS_MAX_LIMIT);
    const rows = await new TenantScope(this.db, tenantId).notificationStates.list(filter, n, Math.max(offset, 0));
    return rows.map(notificationView);
  }

  async get(tenantId: string, id: string): Promise<NotificationStateView> {
    const r = await new TenantScope(this.db, tenantId).notificationStates.get(id);
    if (!r) throw notFound(`Operational notification state ${id}`);
    return notificationView(r);
  }

  /**
   * The operator resolves a state (interface specification, "States and transitions"). One
   * transaction: the change, its audit event and (with an Idempotency-Key) the recorded answer
   * commit together.
   */
  async resolve(
    tenantId: string,
    id: string,
    assignedTo: string | null | undefined,
    actor: Actor,
    idempotency?: IdempotencyHandle,
  ): Promise<{ result: NotificationTransitionResult }> {
    return this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId).notificationStates;
      const before = await scope.get(id);
      if (!before) throw notFound(`Operational notification state ${id}`);
      const changed = (await scope.resolve(id, assignedTo, Date.now())) > 0;
      const result: NotificationTransitionResult = {
        id,
        previousState: before.state,
        state: 'resolved',
        idempotent: !changed,
      };
      if (changed) {
        await audit(tx, actor, {
          tenantId,
          action: 'notification_state.resolve',
          targetType: 'operational_notification_state',
          targetId: id,
          summary: { condition: before.condition_code, previousState: before.state, assignedTo: assignedTo ?? null },
        });
      }
      const out = { result };
      await idempotency?.complete(tx, 200, out);
      return out;
    });
  }
}
