/**
 * A tenant's operational notification states (migration 0020, docs/federation.md,
 * "Operational notification states"). `open_key` (`condition:subjectType:subjectId`) is set
 * while a state is open and NULL after, so the database refuses a second open state for one
 * condition and subject (UNIQUE(tenant_id, open_key)). `quiet_key` holds the same value after
 * an operator resolved a state whose condition still held, until the condition ends.
 */
import { all, exec, json, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

type Row = Record<string, unknown>;

export interface NotificationStateRow {
  id: string;
  tenant_id: string;
  condition_code: string;
  subject_type: string;
  subject_id: string;
  state: string;
  details: Record<string, unknown>;
  assigned_to: string | null;
  /** `operator` (resolved through the API or CLI) or `automatic` (the condition ended); null while open. */
  resolution: string | null;
  raise_count: number;
  raised_at: number;
  updated_at: number;
  resolved_at: number | null;
  open_key: string | null;
  quiet_key: string | null;
}

export interface NotificationFilter {
  state?: string;
  condition?: string;
  subjectType?: string;
  subjectId?: string;
}

const COLS = `id, tenant_id, condition_code, subject_type, subject_id, state, details, assigned_to, resolution,
  raise_count, raised_at, updated_at, resolved_at, open_key, quiet_key`;

const s = (v: unknown): string | null =>
  v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);

const toRow = (r: Row): NotificationStateRow => ({
  id: String(r.id),
  tenant_id: String(r.tenant_id),
  condition_code: String(r.condition_code),
  subject_type: String(r.subject_type),
  subject_id: String(r.subject_id),
  state: String(r.state),
  details: json<Record<string, unknown>>(r.details),
  assigned_to: s(r.assigned_to),
  resolution: s(r.resolution),
  raise_count: num(r.raise_count),
  raised_at: num(r.raised_at),
  updated_at: num(r.updated_at),
  resolved_at: r.resolved_at === null || r.resolved_at === undefined ? null : num(r.resolved_at),
  open_key: s(r.open_key),
  quiet_key: s(r.quiet_key),
});

export class ScopedNotificationStates {
  constructor(private readonly sc: ScopeRef) {}

  /** Inserts an open state; a unique violation means one is already open for the key. */
  async insertOpen(r: {
    id: string;
    condition: string;
    subjectType: string;
    subjectId: string;
    details: Record<string, unknown>;
    key: string;
    now: number;
  }): Promise<void> {
    await exec(
      this.sc.db,
      `INSERT INTO operational_notification_states (${COLS})
       VALUES (?, ?, ?, ?, ?, 'open', ?, NULL, NULL, 1, ?, ?, NULL, ?, NULL)`,
      [r.id, this.sc.tenantId, r.condition, r.subjectType, r.subjectId, JSON.stringify(r.details), r.now, r.now, r.key],
    );
  }

  async byOpenKey(key: string): Promise<NotificationStateRow | undefined> {
    const r = await one<Row>(
      this.sc.db,
      `SELECT ${COLS} FROM operational_notification_states WHERE tenant_id = ? AND open_key = ?`,
      [this.sc.tenantId, key],
    );
    return r ? toRow(r) : undefined;
  }

  /** Whether an operator resolved this condition and subject while it still held (and it has not ended since). */
  async quieted(key: string): Promise<boolean> {
    const r = await one<Row>(
      this.sc.db,
      'SELECT 1 AS found FROM operational_notification_states WHERE tenant_id = ? AND quiet_key = ? LIMIT 1',
      [this.sc.tenantId, key],
    );
    return r !== undefined;
  }

  /** A repeated raise of an open state: newer details, one more occurrence. */
  async touchOpen(key: string, details: Record<string, unknown>, now: number): Promise<number> {
    return exec(
      this.sc.db,
      `UPDATE operational_notification_states SET details = ?, raise_count = raise_count + 1, updated_at = ?
        WHERE tenant_id = ? AND open_key = ?`,
      [JSON.stringify(details), now, this.sc.tenantId, key],
    );
  }

  /** The condition ended: the open state resolves itself and an operator's quiet ends. */
  async clear(key: string, now: number): Promise<number> {
    const resolved = await exec(
      this.sc.db,
      `UPDATE operational_notification_states SET state = 'resolved', resolution = 'automatic', resolved_at = ?,
        updated_at = ?, open_key = NULL WHERE tenant_id = ? AND open_key = ?`,
      [now, now, this.sc.tenantId, key],
    );
    await exec(
      this.sc.db,
      'UPDATE operational_notification_states SET quiet_key = NULL WHERE tenant_id = ? AND quiet_key = ?',
      [this.sc.tenantId, key],
    );
    return resolved;
  }

  /**
   * An operator resolves a state that is not resolved yet (one winner): it leaves the open key
   * for the quiet key, so the same condition is not raised again until it has ended.
   */
  async resolve(id: string, assignedTo: string | null | undefined, now: number): Promise<number> {
    const assign = assignedTo === undefined ? '' : ', assigned_to = ?';
    return exec(
      this.sc.db,
      `UPDATE operational_notification_states SET state = 'resolved', resolution = 'operator', resolved_at = ?,
        updated_at = ?, quiet_key = open_key, open_key = NULL${assign}
        WHERE tenant_id = ? AND id = ? AND state <> 'resolved'`,
      assignedTo === undefined ? [now, now, this.sc.tenantId, id] : [now, now, assignedTo, this.sc.tenantId, id],
    );
  }

  async get(id: string): Promise<NotificationStateRow | undefined> {
    const r = await one<Row>(
      this.sc.db,
      `SELECT ${COLS} FROM operational_notification_states WHERE tenant_id = ? AND id = ?`,
      [this.sc.tenantId, id],
    );
    return r ? toRow(r) : undefined;
  }

  /** Newest first. */
  async list(f: NotificationFilter, limit: number, offset: number): Promise<NotificationStateRow[]> {
    const where = ['tenant_id = ?'];
    const params: unknown[] = [this.sc.tenantId];
    const add = (column: string, value: string | undefined) => {
      if (!value) return;
      where.push(`${column} = ?`);
      params.push(value);
    };
    add('state', f.state);
    add('condition_code', f.condition);
    add('subject_type', f.subjectType);
    add('subject_id', f.subjectId);
    const rows = await all<Row>(
      this.sc.db,
      `SELECT ${COLS} FROM operational_notification_states WHERE ${where.join(' AND ')}
        ORDER BY raised_at DESC, id DESC LIMIT ? OFFSET ?`,
      [...params, limit, offset],
    );
    return rows.map(toRow);
  }
}
