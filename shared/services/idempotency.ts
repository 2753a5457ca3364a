/**
 * Idempotency-Key (docs/tenant-lifecycle.md): the first request with a key claims it with an
 * `in_flight` row (the unique index on (principal, route, key) makes it the one winner); a
 * replay with the same key and payload gets the stored response; another payload is 422
 * `idempotency_key_mismatch`; a duplicate while the first runs is 409 `idempotency_in_flight`.
 *
 * Crash-correct: the response is recorded in the key's row by the handler's own transaction,
 * through the IdempotencyHandle the middleware hands it (`complete`/`fail` with the handler's
 * `tx`), so the change and the record of its answer commit together or not at all. A daemon
 * that dies after that commit leaves a `done` row, which a retry replays. An `in_flight` row is
 * left only by a request that committed nothing; once it is older than any request lives
 * (IDEMPOTENCY_ABANDONED_MS; the server's request timeout is 30 s) a retry takes it over and runs.
 * Answers decided without a change (a refusal, a 4xx before any write) are recorded by the
 * middleware after the handler, as before; so are those of handlers that take no handle.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Database, Tx } from '../db/index.js';
import { ApiError } from '../errors.js';
import { IdempotencyRepository } from '../repositories/index.js';

export const IDEMPOTENCY_RETENTION_MS = 24 * 3_600_000;
/** An `in_flight` row older than this was left by a daemon that died mid-request. */
export const IDEMPOTENCY_ABANDONED_MS = 120_000;

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

/** What a key is bound to: the route and the canonical JSON of the body. */
export function idempotencyRequestHash(route: string, body: unknown): string {
  return createHash('sha256')
    .update(`${route}\n${canonical(body ?? null)}`)
    .digest('hex');
}

/** The stored form of an ApiError below 500 (what the error renderer answers); undefined for anything else. */
export function errorResponse(err: unknown): { status: number; body: Record<string, unknown> } | undefined {
  if (err instanceof ApiError && err.status < 500) {
    return {
      status: err.status,
      body: { error: err.error, error_description: err.message, message: err.message, ...err.extra },
    };
  }
  return undefined;
}

/**
 * The claim of one request on its key, handed to the service that makes the change: it records
 * the final response inside that change's transaction. If the row is no longer this request's
 * (taken over as abandoned), recording fails with 409 `idempotency_in_flight` and the
 * transaction rolls back, so the change is not made twice.
 */
export interface IdempotencyHandle {
  /** Records `status` and `body` as the answer, inside `tx`. */
  complete(tx: Tx, status: number, body: unknown): Promise<void>;
  /** Records a refusal (an ApiError below 500) as the answer, inside `tx`. */
  fail(tx: Tx, err: ApiError): Promise<void>;
}

export interface IdempotentRequest {
  principal: string;
  tenantId: string | null;
  route: string;
  key: string;
  requestHash: string;
}

/** What `begin` decided: run the request (with its claim), or answer with the stored response. */
export type Begun = { replay: false; claim: IdempotencyClaim } | { replay: true; status: number; body: unknown };

const inFlight = () =>
  new ApiError(409, 'idempotency_in_flight', 'A request with this Idempotency-Key is in progress; retry later.');

const serialise = (body: unknown): string | null => (body === undefined || body === null ? null : JSON.stringify(body));

/** One request's `in_flight` row. */
export class IdempotencyClaim implements IdempotencyHandle {
  constructor(
    private readonly db: Database,
    readonly id: string,
  ) {}

  async complete(tx: Tx, status: number, body: unknown): Promise<void> {
    if ((await new IdempotencyRepository(tx).complete(this.id, status, serialise(body))) !== 1) throw inFlight();
  }

  async fail(tx: Tx, err: ApiError): Promise<void> {
    const r = errorResponse(err);
    if (r) await this.complete(tx, r.status, r.body);
  }

  /**
   * After the handler: records its answer unless its transaction already did (a `done` row is
   * left as it is). Autocommit: nothing else commits with it.
   */
  async finish(status: number, body: unknown): Promise<void> {
    await new IdempotencyRepository(this.db).complete(this.id, status, serialise(body));
  }

  /** Drops the row so a retry can run, unless a committed answer is recorded in it. Never throws. */
  async release(): Promise<void> {
    await new IdempotencyRepository(this.db).release(this.id).catch(() => 0);
  }
}

export class IdempotencyService {
  private readonly repo: IdempotencyRepository;
  private readonly retentionMs: number;

  constructor(
    private readonly db: Database,
    opts: { retentionMs?: number } = {},
  ) {
    this.repo = new IdempotencyRepository(db);
    this.retentionMs = opts.retentionMs ?? IDEMPOTENCY_RETENTION_MS;
  }

  /**
   * Claims the key for this request, or finds the answer to replay. Throws 409
   * `idempotency_in_flight` (the first request is still running) or 422
   * `idempotency_key_mismatch` (the key was used with another payload).
   */
  async begin(r: IdempotentRequest): Promise<Begun> {
    const id = randomUUID();
    const insert = () => {
      const now = Date.now();
      return this.repo.insertInFlight({
        id,
        tenantId: r.tenantId,
        principal: r.principal,
        route: r.route,
        key: r.key,
        requestHash: r.requestHash,
        now,
        expiresAt: now + this.retentionMs,
      });
    };
    const claimed: Begun = { replay: false, claim: new IdempotencyClaim(this.db, id) };
    if (await insert()) return claimed;

    const row = await this.repo.find(r.principal, r.route, r.key);
    const now = Date.now();
    const abandonedBefore = now - IDEMPOTENCY_ABANDONED_MS;
    if (row && row.expires_at <= now) {
      // Past its retention and not yet purged: it no longer counts. One winner deletes it.
      await this.repo.deleteExpired(row.id, now);
    } else if (
      row &&
      row.status === 'in_flight' &&
      row.created_at <= abandonedBefore &&
      row.request_hash === r.requestHash
    ) {
      // Left by a daemon that died mid-request. Its answer is recorded in the same transaction
      // as its change, so an `in_flight` row means nothing committed. One winner takes over.
      await this.repo.deleteAbandoned(row.id, abandonedBefore);
    } else if (row) {
      if (row.request_hash !== r.requestHash)
        throw new ApiError(
          422,
          'idempotency_key_mismatch',
          'This Idempotency-Key was used with a different request payload.',
        );
      if (row.status !== 'done') throw inFlight();
      return {
        replay: true,
        status: row.response_status ?? 200,
        body: row.response_body === null ? null : (JSON.parse(row.response_body) as unknown),
      };
    }
    // The row was deleted above, or between our insert and read (a failed first attempt):
    // try once more; losing again means another request holds it now.
    if (await insert()) return claimed;
    throw inFlight();
  }

  /** Deletes keys past their retention (the idempotency-purge job). */
  purgeExpired(signal?: AbortSignal): Promise<number> {
    return this.repo.purgeExpired(Date.now(), signal);
  }
}
