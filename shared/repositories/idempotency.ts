/**
 * Idempotency keys (`idempotency_keys`): one row per (principal, route, key), platform-level (the
 * principal may be a platform admin acting on any tenant). The unique index on the triple makes
 * the first request the one winner. A row is `in_flight` until the response is recorded, then
 * `done`; the writes that finish or drop a row are conditional on `in_flight`, so a response
 * recorded in the handler's own transaction is never overwritten or deleted afterwards.
 */
import type { Db } from '../db/index.js';
import { isUniqueViolation } from '../db/retry.js';
import { deleteInChunks } from '../db/purge.js';
import { exec, num, one } from '../db/sql.js';

export interface IdempotencyRow {
  id: string;
  request_hash: string;
  status: 'in_flight' | 'done';
  response_status: number | null;
  response_body: string | null;
  created_at: number;
  expires_at: number;
}

export interface NewIdempotencyKey {
  id: string;
  tenantId: string | null;
  principal: string;
  route: string;
  key: string;
  requestHash: string;
  now: number;
  expiresAt: number;
}

export class IdempotencyRepository {
  constructor(private readonly db: Db) {}

  /** Inserts the `in_flight` row; false when the (principal, route, key) row exists already. */
  async insertInFlight(k: NewIdempotencyKey): Promise<boolean> {
    try {
      await exec(
        this.db,
        `INSERT INTO idempotency_keys (id, tenant_id, principal, route, idem_key, request_hash, status,
          response_status, response_body, created_at, expires_at)
        VALUES (?, ?, ?, ?, ?, ?, 'in_flight', NULL, NULL, ?, ?)`,
        [k.id, k.tenantId, k.principal, k.route, k.key, k.requestHash, k.now, k.expiresAt],
      );
      return true;
    } catch (e) {
      if (isUniqueViolation(e)) return false;
      throw e;
    }
  }

  async find(principal: string, route: string, key: string): Promise<IdempotencyRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.db,
      `SELECT id, request_hash, status, response_status, response_body, created_at, expires_at FROM idempotency_keys
        WHERE principal = ? AND route = ? AND idem_key = ?`,
      [principal, route, key],
    );
    if (!r) return undefined;
    return {
      id: String(r.id),
      request_hash: String(r.request_hash),
      status: r.status as IdempotencyRow['status'],
      response_status: r.response_status === null ? null : num(r.response_status),
      response_body: (r.response_body as string | null) ?? null,
      created_at: num(r.created_at),
      expires_at: num(r.expires_at),
    };
  }

  /** Deletes the row if it is past its retention at `now` (one winner among racing requests). */
  deleteExpired(id: string, now: number): Promise<number> {
    return exec(this.db, 'DELETE FROM idempotency_keys WHERE id = ? AND expires_at <= ?', [id, now]);
  }

  /** Deletes the row if it is still `in_flight` and was made at or before `before` (one winner). */
  deleteAbandoned(id: string, before: number): Promise<number> {
    return exec(this.db, "DELETE FROM idempotency_keys WHERE id = ? AND status = 'in_flight' AND created_at <= ?", [
      id,
      before,
    ]);
  }

  /** Records the response of an `in_flight` row; 0 when it is done already or no longer exists. */
  complete(id: string, status: number, body: string | null): Promise<number> {
    return exec(
      this.db,
      `UPDATE idempotency_keys SET status = 'done', response_status = ?, response_body = ?
      WHERE id = ? AND status = 'in_flight'`,
      [status, body, id],
    );
  }

  /** Drops an `in_flight` row so a retry can run; a `done` row stays. */
  release(id: string): Promise<number> {
    return exec(this.db, "DELETE FROM idempotency_keys WHERE id = ? AND status = 'in_flight'", [id]);
  }

  /** Deletes rows past their retention, in chunks (the idempotency-purge job). */
  purgeExpired(now: number, signal?: AbortSignal): Promise<number> {
    return deleteInChunks(this.db, {
      table: 'idempotency_keys',
      key: 'id',
      where: 'expires_at < ?',
      params: [now],
      signal,
    });
  }
}
