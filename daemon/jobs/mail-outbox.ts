/**
 * The outbox deliverer: sends `outbox` emails through each tenant's provider order.
 *
 * It runs on every daemon (`lease: false`): every 2 s, and at once when Outbox.kick() is called
 * after a commit. Rows are claimed one-winner, in batches:
 *
 *   UPDATE outbox SET status = 'sending', claimed_by = <batch token>, claimed_until = now + claimMs …
 *    WHERE id IN (…) AND ((status = 'pending' AND next_attempt_at <= now)
 *                         OR (status = 'sending' AND claimed_until < now))
 *
 * so two daemons never send the same row at once, and a row claimed by a daemon that died is
 * taken over when its claim expires. Claiming copies claimed_until into next_attempt_at, so
 * one index range (status, next_attempt_at) finds both due and abandoned rows.
 *
 * Outcomes: `delivered` (with delivered_via; the sealed payload is erased), or back to
 * `pending` with exponential backoff and jitter, or, after `maxAttempts` attempts (12 by
 * default, about half an hour), `failed`. `attempts` counts claims, so a message whose
 * delivery keeps killing the daemon still ends up `failed`. Delivery is at-least-once: a
 * daemon killed after the relay accepted a message but before it recorded that sends it again
 * when the claim expires, with the same Message-ID.
 */
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { retryTransient } from '../../shared/db/retry.js';
import { all, exec, json } from '../../shared/db/sql.js';
import type { JsonObject } from '../../shared/db/entities.js';
import { MailDeliveryError, type EmailProviders } from '../../shared/services/mail/index.js';
import type { Outbox } from '../../shared/services/outbox.js';
import type { JobSpec } from './scheduler.js';

export const MAIL_OUTBOX_JOB = 'mail-outbox';

export interface MailOutboxOptions {
  /** Rows claimed per statement. */
  batchSize: number;
  /** Messages in flight at once; the SMTP pool spreads them over its connections. */
  concurrency: number;
  /** How long a claim protects a row; after that another daemon may send it. */
  claimMs: number;
  /** Attempts before a message is marked `failed`. */
  maxAttempts: number;
  /** First retry delay; doubled per attempt up to backoffMaxMs. */
  backoffBaseMs: number;
  backoffMaxMs: number;
}

/**
 * Retry delays (before jitter): 2 s, 4 s, 8 s, … 256 s, then 5 min; the 12th attempt is the
 * last, about 30 minutes after the first. Longer would not help a login code anyway.
 */
export const MAIL_OUTBOX_DEFAULTS: MailOutboxOptions = {
  batchSize: 200,
  concurrency: 32,
  claimMs: 60_000,
  maxAttempts: 12,
  backoffBaseMs: 2_000,
  backoffMaxMs: 300_000,
};

/**
 * Exponential backoff with "equal jitter": half the delay is fixed, half random, so retries of
 * a burst that failed together (relay down) spread out instead of returning as one burst.
 */
export function backoffMs(attempts: number, base: number, max: number, random: () => number = Math.random): number {
  const d = Math.min(max, base * 2 ** Math.max(0, attempts - 1));
  return Math.round(d / 2 + random() * (d / 2));
}

export interface DrainStats {
  claimed: number;
  delivered: number;
  retried: number;
  failed: number;
}

export interface ClaimedRow { id: string; tenant_id: string | null; payload_sealed: string; attempts: number | string }

type Result =
  | { kind: 'delivered'; via: string; fallback: boolean }
  | { kind: 'error'; error: string; fatal: boolean };

const MAX_ERROR_CHARS = 500;

/**
 * A failure as stored in `last_error` and logged: codes and the relay's message, never the
 * payload; credentials in URLs and email addresses are masked.
 */
export function describeFailure(e: unknown): string {
  const one = (err: unknown) => {
    const x = err as { code?: string; responseCode?: number; message?: string };
    return [x?.code, x?.responseCode, x?.message ?? String(err)].filter((v) => v !== undefined && v !== '').join(' ');
  };
  const text = e instanceof MailDeliveryError
    ? e.failures.map((f) => `${f.provider}: ${one(f.error)}`).join('; ')
    : one(e);
  return text
    .replace(/\/\/[^/\s@]*@/g, '//***@')
    .replace(/[^\s<>()[\]"',;:]+@[^\s<>()[\]"',;:]+/g, '<address>')
    .replace(/\s+/g, ' ')
    .slice(0, MAX_ERROR_CHARS);
}

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

export class MailDeliverer {
  readonly options: MailOutboxOptions;
  private readonly log: Logger;
  private seq = 0;

  /**
   * @param ds the jobs DataSource (never the request connection; see shared/db/data-source.ts)
   * @param claimer this process's holder id; each batch claims with `<claimer>#<n>`
   */
  constructor(
    private readonly ds: DataSource,
    private readonly outbox: Outbox,
    private readonly providers: EmailProviders,
    logger: Logger,
    private readonly claimer: string,
    options: Partial<MailOutboxOptions> = {},
  ) {
    this.options = { ...MAIL_OUTBOX_DEFAULTS, ...options };
    this.log = logger.child({ component: 'mail-outbox' });
  }

  /** Delivers due messages batch after batch until none is due or `signal` aborts. */
  async drain(signal?: AbortSignal): Promise<DrainStats> {
    const stats: DrainStats = { claimed: 0, delivered: 0, retried: 0, failed: 0 };
    const { batchSize } = this.options;
    while (!signal?.aborted) {
      const now = Date.now();
      // One equality on status per query, so each reads the (status, next_attempt_at) index in
      // order and stops at LIMIT even behind a large backlog (an IN list would sort it all).
      const due = await all<{ id: string }>(this.ds,
        "SELECT id FROM outbox WHERE status = 'sending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?", [now, batchSize]);
      if (due.length < batchSize) {
        due.push(...await all<{ id: string }>(this.ds,
          "SELECT id FROM outbox WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?", [now, batchSize - due.length]));
      }
      if (!due.length) break;
      const { token, rows } = await this.claim(due.map((r) => r.id), now);
      stats.claimed += rows.length;
      if (rows.length) await this.deliverBatch(rows, token, stats, signal);
      // A short page means the backlog is drained; rows committed since then bring a kick.
      if (due.length < batchSize) break;
    }
    return stats;
  }

  /**
   * Claims those of `ids` that are due, one-winner; returns the batch token and the rows won.
   * (Public for tests: two deliverers claiming the same ids must not both win a row.)
   */
  async claim(ids: string[], now = Date.now()): Promise<{ token: string; rows: ClaimedRow[] }> {
    const token = `${this.claimer}#${(++this.seq).toString(36)}`;
    const until = now + this.options.claimMs;
    const ph = placeholders(ids.length);
    await retryTransient(() => exec(this.ds,
      `UPDATE outbox SET status = 'sending', attempts = attempts + 1, claimed_by = ?, claimed_until = ?, next_attempt_at = ?, updated_at = ? `
      + `WHERE id IN (${ph}) AND ((status = 'pending' AND next_attempt_at <= ?) OR (status = 'sending' AND claimed_until < ?))`,
      [token, until, until, now, ...ids, now, now]));
    // The token is unique to this batch: what it selects is exactly what this daemon won.
    const rows = await all<ClaimedRow>(this.ds, `SELECT id, tenant_id, payload_sealed, attempts FROM outbox WHERE id IN (${ph}) AND claimed_by = ?`, [...ids, token]);
    return { token, rows };
  }

  /** Provider order per tenant, read once per batch (tenant-scoped by id). */
  private async tenantOrders(rows: ClaimedRow[]): Promise<Map<string, string[]>> {
    const ids = [...new Set(rows.map((r) => r.tenant_id).filter((t): t is string => !!t))];
    const orders = new Map<string, string[]>();
    if (!ids.length) return orders;
    const tenants = await all<{ id: string; settings: unknown }>(this.ds, `SELECT id, settings FROM tenants WHERE id IN (${placeholders(ids.length)})`, ids);
    for (const t of tenants) {
      let settings: JsonObject | null = null;
      try { settings = json<JsonObject>(t.settings); } catch { /* unreadable settings: default order */ }
      orders.set(t.id, this.providers.settingsFor(settings).providerOrder);
    }
    return orders;
  }

  private async deliverOne(row: ClaimedRow, orders: Map<string, string[]>): Promise<Result> {
    let msg;
    try {
      msg = this.outbox.openEmail(row.id, row.tenant_id, row.payload_sealed);
    } catch {
      // Retrying cannot help: the payload was altered, or IAM_SECRET_KEY is not the one it was sealed with.
      return { kind: 'error', error: 'the sealed payload cannot be opened (altered, or sealed under another IAM_SECRET_KEY)', fatal: true };
    }
    const order = (row.tenant_id && orders.get(row.tenant_id)) || this.providers.defaultOrder();
    try {
      const r = await this.providers.send(order, msg);
      return { kind: 'delivered', via: r.via, fallback: r.failures.length > 0 };
    } catch (e) {
      return { kind: 'error', error: describeFailure(e), fatal: false };
    }
  }

  private async deliverBatch(rows: ClaimedRow[], token: string, stats: DrainStats, signal?: AbortSignal): Promise<void> {
    const orders = await this.tenantOrders(rows);
    const results: (Result | undefined)[] = new Array(rows.length);
    let next = 0;
    // Bounded concurrency: `concurrency` workers pull from the batch; none starts after an abort.
    const worker = async () => {
      while (next < rows.length && !signal?.aborted) {
        const i = next++;
        results[i] = await this.deliverOne(rows[i]!, orders);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, rows.length) }, worker));

    const now = Date.now();
    const byVia = new Map<string, string[]>();
    const unsent: string[] = [];
    const failures: { row: ClaimedRow; error: string; final: boolean; retryAt: number }[] = [];
    let fallbacks = 0;
    rows.forEach((row, i) => {
      const r = results[i];
      if (!r) unsent.push(row.id);
      else if (r.kind === 'delivered') {
        (byVia.get(r.via) ?? byVia.set(r.via, []).get(r.via)!).push(row.id);
        if (r.fallback) fallbacks++;
      } else {
        const attempts = Number(row.attempts);
        const final = r.fatal || attempts >= this.options.maxAttempts;
        failures.push({ row, error: r.error, final, retryAt: now + backoffMs(attempts, this.options.backoffBaseMs, this.options.backoffMaxMs) });
      }
    });

    // Recording must survive lock contention: a lost record means a duplicate send later.
    const write = (sql: string, params: unknown[]) => retryTransient(() => exec(this.ds, sql, params), 30_000);
    try {
      for (const [via, ids] of byVia) {
        // The payload is erased once delivered: the login code in it has no business staying.
        await write(`UPDATE outbox SET status = 'delivered', delivered_via = ?, payload_sealed = '', claimed_by = NULL, claimed_until = NULL, updated_at = ? WHERE id IN (${placeholders(ids.length)}) AND claimed_by = ?`,
          [via, now, ...ids, token]);
        stats.delivered += ids.length;
      }
      for (const f of failures) {
        await write('UPDATE outbox SET status = ?, next_attempt_at = ?, last_error = ?, claimed_by = NULL, claimed_until = NULL, updated_at = ? WHERE id = ? AND claimed_by = ?',
          [f.final ? 'failed' : 'pending', f.final ? now : f.retryAt, f.error, now, f.row.id, token]);
        if (f.final) stats.failed++;
        else stats.retried++;
      }
      if (unsent.length) {
        // Stopped before trying these: hand them back, due now, without counting an attempt.
        await write(`UPDATE outbox SET status = 'pending', attempts = attempts - 1, claimed_by = NULL, claimed_until = NULL, next_attempt_at = ?, updated_at = ? WHERE id IN (${placeholders(unsent.length)}) AND claimed_by = ?`,
          [now, now, ...unsent, token]);
      }
    } catch (e) {
      // The claims expire by themselves and the rows are sent again: at-least-once.
      this.log.error({ err: e, batch: rows.length }, 'could not record mail outcomes; the messages will be retried when their claims expire');
    }

    if (fallbacks) this.log.warn({ count: fallbacks }, 'mail delivered through a fallback provider');
    const retried = failures.filter((f) => !f.final);
    if (retried.length) {
      this.log.warn({ count: retried.length, attempts: Number(retried[0]!.row.attempts), error: retried[0]!.error }, 'mail delivery failed; will retry');
    }
    for (const f of failures.filter((x) => x.final)) {
      this.log.error({ outboxId: f.row.id, tenantId: f.row.tenant_id, attempts: Number(f.row.attempts), error: f.error }, 'mail delivery failed permanently');
    }
    this.log.debug({ batch: rows.length, delivered: rows.length - failures.length - unsent.length, failed: failures.length, unsent: unsent.length }, 'mail batch processed');
  }
}

/** The deliverer as a job: every 2 s on every daemon, plus whenever Outbox.kick() fires. */
export function mailOutboxJob(deliverer: MailDeliverer): JobSpec {
  return {
    name: MAIL_OUTBOX_JOB,
    schedule: '*/2 * * * * *',
    lease: false,
    logLevel: 'debug',
    run: async (signal) => { await deliverer.drain(signal); },
  };
}
