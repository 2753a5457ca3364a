/**
 * Idempotency-Key for routes that opt in (place it after the bearer middleware). The first
 * request with a key inserts an `in_flight` row (the unique index on (principal, route, key)
 * makes it the one winner), runs, and stores its response. A replay with the same key and the
 * same request hash gets the stored response (JSON objects gain `idempotent_replay: true`); the
 * same key with another payload is 422 `idempotency_key_mismatch`; a duplicate while the first
 * is still running is 409 `idempotency_in_flight`. A 5xx first attempt deletes its row so a
 * retry can run; so does a crash, after IDEMPOTENCY_ABANDONED_MS: the daemon holding an
 * `in_flight` row that old died mid-request (no request lives that long: the server's request
 * timeout is 30 s), its transaction rolled back, and a retry with the same key runs afresh. Keys are kept 24 h (IDEMPOTENCY_RETENTION_MS); `idempotency-purge` deletes
 * them afterwards. No header, no idempotency. See docs/tenant-lifecycle.md.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { DataSource } from 'typeorm';
import { ApiError } from '../../shared/errors.js';
import { isUniqueViolation } from '../../shared/db/retry.js';
import { exec, num, one } from '../../shared/db/sql.js';
import type { AppState } from '../context.js';

export const IDEMPOTENCY_RETENTION_MS = 24 * 3_600_000;
/** An `in_flight` row older than this was left by a daemon that died mid-request. */
export const IDEMPOTENCY_ABANDONED_MS = 120_000;
const KEY = /^[\x20-\x7E]{1,255}$/;

interface Row {
  id: string;
  request_hash: string;
  status: string;
  response_status: unknown;
  response_body: string | null;
  created_at: unknown;
  expires_at: unknown;
}

/** Canonical JSON: object keys sorted, so key order does not change the hash. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function errorBody(err: unknown): { status: number; body: Record<string, unknown> } | undefined {
  if (err instanceof ApiError && err.status < 500) {
    return {
      status: err.status,
      body: { error: err.error, error_description: err.message, message: err.message, ...err.extra },
    };
  }
  return undefined;
}

/** What a key is bound to: the route and the canonical JSON of the body. */
export function idempotencyRequestHash(route: string, body: unknown): string {
  return createHash('sha256')
    .update(`${route}\n${canonical(body ?? null)}`)
    .digest('hex');
}

export function idempotency(ds: DataSource, opts: { retentionMs?: number } = {}): Middleware<AppState> {
  const retention = opts.retentionMs ?? IDEMPOTENCY_RETENTION_MS;
  return async (ctx, next) => {
    const key = ctx.get('Idempotency-Key');
    if (!ctx.headers['idempotency-key']) return next();
    if (!KEY.test(key))
      throw new ApiError(
        400,
        'invalid_request',
        'header.Idempotency-Key: must be 1 to 255 printable ASCII characters.',
      );
    const principal = String(ctx.state.auth?.client_id ?? 'anonymous');
    const tenantId = ctx.state.auth?.tenant_id ? String(ctx.state.auth.tenant_id) : null;
    const route = `${ctx.method} ${ctx.path}`.slice(0, 255);
    const hash = idempotencyRequestHash(route, (ctx.request as { body?: unknown }).body);
    const id = randomUUID();

    const insert = async (): Promise<boolean> => {
      const now = Date.now();
      try {
        await exec(
          ds,
          `INSERT INTO idempotency_keys (id, tenant_id, principal, route, idem_key, request_hash, status, response_status, response_body, created_at, expires_at)
          VALUES (?, ?, ?, ?, ?, ?, 'in_flight', NULL, NULL, ?, ?)`,
          [id, tenantId, principal, route, key, hash, now, now + retention],
        );
        return true;
      } catch (e) {
        if (isUniqueViolation(e)) return false;
        throw e;
      }
    };

    let won = await insert();
    if (!won) {
      const row = await one<Row>(
        ds,
        'SELECT id, request_hash, status, response_status, response_body, created_at, expires_at FROM idempotency_keys WHERE principal = ? AND route = ? AND idem_key = ?',
        [principal, route, key],
      );
      const abandonedBefore = Date.now() - IDEMPOTENCY_ABANDONED_MS;
      if (row && num(row.expires_at) <= Date.now()) {
        // Past its retention and not yet purged: it no longer counts. One winner deletes it.
        await exec(ds, 'DELETE FROM idempotency_keys WHERE id = ? AND expires_at <= ?', [row.id, Date.now()]);
        won = await insert();
        if (!won)
          throw new ApiError(
            409,
            'idempotency_in_flight',
            'A request with this Idempotency-Key is in progress; retry later.',
          );
      } else if (
        row &&
        row.status === 'in_flight' &&
        num(row.created_at) <= abandonedBefore &&
        row.request_hash === hash
      ) {
        // Left by a daemon that died mid-request: nothing it did committed. One winner takes over.
        await exec(ds, "DELETE FROM idempotency_keys WHERE id = ? AND status = 'in_flight' AND created_at <= ?", [
          row.id,
          abandonedBefore,
        ]);
        won = await insert();
        if (!won)
          throw new ApiError(
            409,
            'idempotency_in_flight',
            'A request with this Idempotency-Key is in progress; retry later.',
          );
      } else if (!row) {
        // Deleted between our insert and read (a failed first attempt): try once more.
        won = await insert();
        if (!won)
          throw new ApiError(
            409,
            'idempotency_in_flight',
            'A request with this Idempotency-Key is in progress; retry later.',
          );
      } else {
        if (row.request_hash !== hash)
          throw new ApiError(
            422,
            'idempotency_key_mismatch',
            'This Idempotency-Key was used with a different request payload.',
          );
        if (row.status !== 'done')
          throw new ApiError(
            409,
            'idempotency_in_flight',
            'A request with this Idempotency-Key is in progress; retry later.',
          );
        const body = row.response_body === null ? null : (JSON.parse(row.response_body) as unknown);
        ctx.status = num(row.response_status);
        ctx.set('Idempotent-Replayed', 'true');
        ctx.body =
          body && typeof body === 'object' && !Array.isArray(body)
            ? { ...(body as Record<string, unknown>), idempotent_replay: true }
            : body;
        return;
      }
    }

    const store = (status: number, body: unknown) =>
      exec(ds, `UPDATE idempotency_keys SET status = 'done', response_status = ?, response_body = ? WHERE id = ?`, [
        status,
        body === undefined || body === null ? null : JSON.stringify(body),
        id,
      ]);
    const release = () => exec(ds, 'DELETE FROM idempotency_keys WHERE id = ?', [id]).catch(() => 0);
    try {
      await next();
    } catch (err) {
      const known = errorBody(err);
      if (known) await store(known.status, known.body).catch(release);
      else await release();
      throw err;
    }
    if (ctx.status >= 500) await release();
    else await store(ctx.status, ctx.body);
  };
}
