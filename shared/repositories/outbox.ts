/**
 * The outbox: platform-level rows (`tenant_id` is nullable: mail of the platform itself has
 * none), so no TenantScope. The deliverer claims due rows across tenants; its scans and claims
 * are these statements:
 *
 *   due:    SELECT id … WHERE status = ? AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?
 *   claim:  UPDATE … SET status = 'sending', claimed_by = <token>, claimed_until = now + claimMs …
 *            WHERE id IN (…) AND ((status = 'pending' AND next_attempt_at <= now)
 *                                 OR (status = 'sending' AND claimed_until < now))
 *
 * A claim is one-winner (the conditional UPDATE), and every later write of an outcome is
 * matched with the token it was claimed under, so a later claim of the same row (after this one
 * expired) is never overwritten. Claiming copies claimed_until into next_attempt_at, so one
 * index range (status, next_attempt_at) finds both due and abandoned rows.
 *
 * Statements go through shared/db/sql.ts: the INSERT runs inside a login's transaction, once
 * per code sent, and the deliverer runs hundreds of claims and outcomes a second under load.
 */
import type { JsonObject } from '../db/entities.js';
import type { Db } from '../db/index.js';
import { deleteInChunks } from '../db/purge.js';
import { all, exec, json, num } from '../db/sql.js';
import { clampLimit } from './common.js';

export type OutboxStatus = 'pending' | 'sending' | 'delivered' | 'failed';
export const OUTBOX_STATUSES: readonly OutboxStatus[] = ['pending', 'sending', 'delivered', 'failed'];

/** A new row, as the caller's transaction writes it. */
export interface NewOutboxRow {
  id: string;
  tenantId: string | null;
  kind: string;
  payloadSealed: string;
  now: number;
}

/** A row the deliverer has claimed. */
export interface ClaimedOutboxRow {
  id: string;
  tenant_id: string | null;
  payload_sealed: string;
  attempts: number;
  /** The tenant's `settings`, read with the claim (null: no tenant, none stored, or unreadable). */
  settings: JsonObject | null;
}

/** A failed attempt to record: back to `pending` (retry at `nextAttemptAt`) or `failed` for good. */
export interface OutboxFailure {
  id: string;
  token: string;
  final: boolean;
  nextAttemptAt: number;
  errorCode: string;
  cause: string;
}

/** What an operator sees of a row: everything but the payload. */
export interface OutboxEntryRow {
  id: string;
  tenant_id: string | null;
  kind: string;
  status: OutboxStatus;
  attempts: number;
  next_attempt_at: number;
  last_error_code: string | null;
  last_error: string | null;
  delivered_via: string | null;
  created_at: number;
  updated_at: number;
}

export interface OutboxListFilter {
  tenantId?: string;
  status?: OutboxStatus;
  limit?: number;
}

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

export class OutboxRepository {
  constructor(private readonly db: Db) {}

  /** One statement, in the caller's transaction (a login's, for its code mail). */
  async insert(r: NewOutboxRow): Promise<void> {
    await exec(
      this.db,
      'INSERT INTO outbox (id, tenant_id, kind, payload_sealed, status, attempts, next_attempt_at, claimed_by, ' +
        'claimed_until, last_error, delivered_via, created_at, updated_at) ' +
        "VALUES (?, ?, ?, ?, 'pending', 0, ?, NULL, NULL, NULL, NULL, ?, ?)",
      [r.id, r.tenantId, r.kind, r.payloadSealed, r.now, r.now, r.now],
    );
  }

  /**
   * Ids of rows in `status` whose next_attempt_at has passed, oldest first: `pending` rows are
   * due, `sending` rows are abandoned claims. One equality on status per query, so each reads
   * the (status, next_attempt_at) index in order and stops at LIMIT even behind a large
   * backlog (an IN list of statuses would sort it all).
   */
  async dueIds(status: 'pending' | 'sending', now: number, limit: number, kind = 'email'): Promise<string[]> {
    // Each deliverer takes its own kind only (mail, audit webhook deliveries): the
    // (kind, status, next_attempt_at) index of migration 0017 serves the range in order.
    const rows =
      status === 'pending'
        ? await all<{ id: string }>(
            this.db,
            "SELECT id FROM outbox WHERE kind = ? AND status = 'pending' AND next_attempt_at <= ? " +
              'ORDER BY next_attempt_at LIMIT ?',
            [kind, now, limit],
          )
        : await all<{ id: string }>(
            this.db,
            "SELECT id FROM outbox WHERE kind = ? AND status = 'sending' AND next_attempt_at <= ? " +
              'ORDER BY next_attempt_at LIMIT ?',
            [kind, now, limit],
          );
    return rows.map((r) => r.id);
  }

  /** Claims those of `ids` that are due (one-winner); returns how many this claim won. */
  claim(ids: string[], token: string, until: number, now: number): Promise<number> {
    return exec(
      this.db,
      "UPDATE outbox SET status = 'sending', attempts = attempts + 1, claimed_by = ?, claimed_until = ?, " +
        'next_attempt_at = ?, updated_at = ? ' +
        `WHERE id IN (${placeholders(ids.length)}) ` +
        "AND ((status = 'pending' AND next_attempt_at <= ?) OR (status = 'sending' AND claimed_until < ?))",
      [token, until, until, now, ...ids, now, now],
    );
  }

  /**
   * The rows of `ids` held by claim `token` (exactly what that claim won), with their tenant's
   * settings (read at claim time, so a change of provider order applies at once).
   */
  async claimed(ids: string[], token: string): Promise<ClaimedOutboxRow[]> {
    const rows = await all<{
      id: string;
      tenant_id: string | null;
      payload_sealed: string;
      attempts: number | string;
      settings: unknown;
    }>(
      this.db,
      'SELECT o.id, o.tenant_id, o.payload_sealed, o.attempts, t.settings ' +
        'FROM outbox o LEFT JOIN tenants t ON t.id = o.tenant_id ' +
        `WHERE o.id IN (${placeholders(ids.length)}) AND o.claimed_by = ?`,
      [...ids, token],
    );
    // Parsed once per tenant: a claim of 200 login mails is usually a handful of tenants.
    const settings = new Map<string, JsonObject | null>();
    return rows.map((r) => {
      let s: JsonObject | null = null;
      if (r.tenant_id) {
        if (settings.has(r.tenant_id)) s = settings.get(r.tenant_id)!;
        else {
          try {
            s = r.settings === null || r.settings === undefined ? null : json<JsonObject>(r.settings);
          } catch {
            s = null; // unreadable settings: the caller falls back to the default order
          }
          settings.set(r.tenant_id, s);
        }
      }
      return {
        id: r.id,
        tenant_id: r.tenant_id,
        payload_sealed: r.payload_sealed,
        attempts: num(r.attempts),
        settings: s,
      };
    });
  }

  /** Gives claimed rows back, due now, without counting the attempt (a stopping daemon). */
  handBack(ids: string[], token: string, now: number): Promise<number> {
    return exec(
      this.db,
      "UPDATE outbox SET status = 'pending', attempts = attempts - 1, claimed_by = NULL, claimed_until = NULL, " +
        `next_attempt_at = ?, updated_at = ? WHERE id IN (${placeholders(ids.length)}) AND claimed_by = ?`,
      [now, now, ...ids, token],
    );
  }

  /**
   * Marks rows delivered through `via`, each matched with the claim it was sent under. The
   * payload is erased: the login code in it has no business staying.
   */
  markDelivered(via: string, rows: { id: string; token: string }[], now: number): Promise<number> {
    return exec(
      this.db,
      "UPDATE outbox SET status = 'delivered', delivered_via = ?, payload_sealed = '', claimed_by = NULL, " +
        'claimed_until = NULL, updated_at = ? WHERE ' +
        rows.map(() => '(id = ? AND claimed_by = ?)').join(' OR '),
      [via, now, ...rows.flatMap((r) => [r.id, r.token])],
    );
  }

  /** Records a failed attempt: its error code and sanitised cause, and when to try again. */
  markFailed(f: OutboxFailure, now: number): Promise<number> {
    return exec(
      this.db,
      'UPDATE outbox SET status = ?, next_attempt_at = ?, last_error_code = ?, last_error = ?, claimed_by = NULL, ' +
        'claimed_until = NULL, updated_at = ? WHERE id = ? AND claimed_by = ?',
      [f.final ? 'failed' : 'pending', f.final ? now : f.nextAttemptAt, f.errorCode, f.cause, now, f.id, f.token],
    );
  }

  /**
   * The rows not delivered, counted by kind and status, with the oldest `next_attempt_at` of
   * each (the metrics read it at scrape time). The (kind, status, next_attempt_at) index of
   * migration 0017 answers it without reading the rows; delivered rows are not counted.
   */
  async backlog(): Promise<{ kind: string; status: 'pending' | 'sending' | 'failed'; n: number; oldest: number }[]> {
    const rows = await all<{ kind: string; status: 'pending' | 'sending' | 'failed'; n: unknown; oldest: unknown }>(
      this.db,
      'SELECT kind, status, COUNT(*) AS n, MIN(next_attempt_at) AS oldest FROM outbox ' +
        "WHERE status IN ('pending', 'sending', 'failed') GROUP BY kind, status",
      [],
    );
    return rows.map((r) => ({ kind: r.kind, status: r.status, n: num(r.n), oldest: num(r.oldest) }));
  }

  /** Deletes rows in `status` last changed before `before`, in chunks; returns how many. */
  purge(status: 'delivered' | 'failed', before: number, signal?: AbortSignal): Promise<number> {
    return deleteInChunks(this.db, {
      table: 'outbox',
      key: 'id',
      where: 'status = ? AND updated_at < ?',
      params: [status, before],
      signal,
    });
  }

  /**
   * Rows for an operator, most recently changed first, without the payload. With a status the
   * (status, updated_at) index serves the order; without one it is a scan of the table, which
   * the purge job keeps to about a day of mail.
   */
  async list(f: OutboxListFilter = {}): Promise<OutboxEntryRow[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (f.status) {
      where.push('status = ?');
      params.push(f.status);
    }
    if (f.tenantId) {
      where.push('tenant_id = ?');
      params.push(f.tenantId);
    }
    const rows = await all<OutboxEntryRow>(
      this.db,
      'SELECT id, tenant_id, kind, status, attempts, next_attempt_at, last_error_code, last_error, delivered_via, ' +
        'created_at, updated_at ' +
        `FROM outbox${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY updated_at DESC, id DESC LIMIT ?`,
      [...params, clampLimit(f.limit)],
    );
    return rows.map((r) => ({
      ...r,
      attempts: num(r.attempts),
      next_attempt_at: num(r.next_attempt_at),
      created_at: num(r.created_at),
      updated_at: num(r.updated_at),
    }));
  }
}
