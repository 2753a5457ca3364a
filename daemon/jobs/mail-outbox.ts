/**
 * The outbox deliverer: sends `outbox` emails through each tenant's provider order.
 *
 * It runs on every daemon (`lease: false`): every 2 s, and at once when Outbox.kick() is called
 * after a commit (a drain under way is woken instead: see wake()). It is a pipeline: up to
 * `concurrency` messages in flight, and new rows are claimed as soon as there is room, while
 * earlier messages are still being sent; outcomes are written in coalesced batches off the
 * sending path. Rows are claimed one-winner (a conditional UPDATE under a token unique to the
 * claim, shared/repositories/outbox.ts), so two daemons never send the same row at once, and a
 * row claimed by a daemon that died is taken over when its claim expires.
 *
 * Outcomes: `delivered` (with delivered_via; the sealed payload is erased), or back to
 * `pending` with exponential backoff and jitter, or, after `maxAttempts` attempts (12 by
 * default, about half an hour), `failed`. A failed attempt stores an error code
 * (`last_error_code`, mail/errors.ts) and a sanitised cause (`last_error`), which
 * `iam outbox list` shows. `attempts` counts claims, so a message whose delivery keeps killing
 * the daemon still ends up `failed`. Delivery is at-least-once: a daemon killed after the relay
 * accepted a message but before it recorded that sends it again when the claim expires, with
 * the same Message-ID.
 *
 * The database is reached only through the Outbox service (its delivery() side, on the jobs
 * connection).
 */
import type { Logger } from 'pino';
import type { Database } from '../../shared/db/index.js';
import { deliveryFailure, type EmailProviders, type MailErrorCode } from '../../shared/services/mail/index.js';
import type { ClaimedOutboxRow, Outbox, OutboxDelivery } from '../../shared/services/outbox.js';
import type { JobSpec } from './scheduler.js';

export const MAIL_OUTBOX_JOB = 'mail-outbox';
/** `delivered_via` of a message written to be dropped (EmailInput.drop): nothing was sent. */
export const DROPPED_VIA = 'dropped';

export interface MailOutboxOptions {
  /** Most rows claimed per statement (also bounded by the room left under `concurrency`). */
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

/** A claimed row, as the service hands it over. */
export type ClaimedRow = ClaimedOutboxRow;

type Result =
  | { kind: 'delivered'; via: string; fallback: boolean }
  | { kind: 'error'; code: MailErrorCode; cause: string; fatal: boolean };

/** A sent (or failed) message waiting for its outcome to be written. */
interface Outcome {
  row: ClaimedRow;
  token: string;
  result: Result;
}

/** Outcomes written per statement group (keeps the parameter lists short). */
const RECORD_CHUNK = 100;

export class MailDeliverer {
  readonly options: MailOutboxOptions;
  private readonly log: Logger;
  private seq = 0;
  /** The drain in progress, if any; a second drain() call joins it. */
  private current: Promise<DrainStats> | undefined;
  /** Whether the running drain's loop still takes new work (false once it has decided to end). */
  private accepting = false;
  /** A kick arrived since the last look for due rows. */
  private kicked = false;
  /** Resolves the loop's idle wait. */
  private wakeLoop: (() => void) | undefined;
  private inFlight = 0;
  private readonly sends = new Set<Promise<void>>();
  /** Outcomes not yet written, and the writer working on them. */
  private outcomes: Outcome[] = [];
  private recording: Promise<void> | undefined;
  private stats: DrainStats = { claimed: 0, delivered: 0, retried: 0, failed: 0 };
  /** When abandoned claims were last looked for (at most once a second; claims last a minute). */
  private lastExpiredScan = 0;
  private readonly store: OutboxDelivery;

  /**
   * @param db the jobs database (never the request connection; see shared/db/data-source.ts)
   * @param claimer this process's holder id; each claim statement uses `<claimer>#<n>`
   */
  constructor(
    db: Database,
    private readonly outbox: Outbox,
    private readonly providers: EmailProviders,
    logger: Logger,
    private readonly claimer: string,
    options: Partial<MailOutboxOptions> = {},
  ) {
    this.options = { ...MAIL_OUTBOX_DEFAULTS, ...options };
    this.log = logger.child({ component: 'mail-outbox' });
    this.store = outbox.delivery(db);
  }

  /**
   * Tells a running drain that new mail was committed. Returns false when no drain is taking
   * work, so the caller must start one (the job's kick does, through the scheduler).
   */
  wake(): boolean {
    if (!this.accepting) return false;
    this.kicked = true;
    this.wakeLoop?.();
    return true;
  }

  /**
   * Delivers due messages until none is due, none is in flight and every outcome is recorded,
   * or `signal` aborts (then messages in flight finish and are recorded; nothing new starts).
   *
   * A pipeline, not batch after batch: up to `concurrency` messages are in flight, and as soon
   * as there is room and there may be due rows (a kick, or the last look filled its page) the
   * next rows are claimed, while earlier messages are still being sent. Outcomes are written
   * in small coalesced batches, off the sending path.
   */
  drain(signal?: AbortSignal): Promise<DrainStats> {
    if (this.current) {
      // Joins the running drain, or, if that one is already winding down, runs again after it.
      return this.wake() ? this.current : this.current.then(() => this.drain(signal));
    }
    this.current = this.run(signal).finally(() => {
      this.current = undefined;
    });
    return this.current;
  }

  private async run(signal?: AbortSignal): Promise<DrainStats> {
    const stats: DrainStats = { claimed: 0, delivered: 0, retried: 0, failed: 0 };
    this.stats = stats;
    this.accepting = true;
    this.kicked = false;
    const { concurrency, batchSize } = this.options;
    const onAbort = () => this.wakeLoop?.();
    signal?.addEventListener('abort', onAbort);
    /** The last look filled its page: more may be due. True at first, so the first look happens. */
    let more = true;
    let failure: unknown;
    try {
      while (!signal?.aborted) {
        const room = concurrency - this.inFlight;
        if (room > 0 && (more || this.kicked)) {
          this.kicked = false;
          const { selected, wanted } = await this.claimAndSend(Math.min(room, batchSize), signal);
          more = selected >= wanted;
          continue;
        }
        if (this.inFlight === 0 && !more && !this.kicked) break;
        // Room freed by a finished send, a kick, or the abort: look again.
        await new Promise<void>((resolve) => {
          this.wakeLoop = resolve;
        });
        this.wakeLoop = undefined;
      }
    } catch (e) {
      failure = e;
    } finally {
      // Decided in the same turn as the loop's end: a kick after this starts a new drain.
      this.accepting = false;
      signal?.removeEventListener('abort', onAbort);
    }
    while (this.sends.size) await Promise.all([...this.sends]);
    while (this.recording) await this.recording;
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what the loop caught, as it was
    if (failure !== undefined) throw failure;
    return stats;
  }

  /**
   * One look for due rows (at most `limit`), claimed one-winner, and their sends started.
   * Returns how many due rows the look found, so the caller knows whether more may be waiting.
   */
  private async claimAndSend(limit: number, signal?: AbortSignal): Promise<{ selected: number; wanted: number }> {
    const now = Date.now();
    const due: string[] = [];
    if (now - this.lastExpiredScan >= 1_000) {
      // Abandoned claims (their daemon died); they are at least claimMs old, so a second's delay is nothing.
      this.lastExpiredScan = now;
      due.push(...(await this.store.dueIds('sending', now, limit)));
    }
    if (due.length < limit) due.push(...(await this.store.dueIds('pending', now, limit - due.length)));
    if (!due.length) return { selected: 0, wanted: limit };
    const { token, rows } = await this.claim(due, now);
    this.stats.claimed += rows.length;
    if (signal?.aborted) {
      // Stopping: hand the rows back, due now, without counting an attempt.
      await this.handBack(rows, token);
    } else {
      const orders = this.tenantOrders(rows);
      for (const row of rows) this.startSend(row, token, orders);
    }
    return { selected: due.length, wanted: limit };
  }

  private startSend(row: ClaimedRow, token: string, orders: Map<string, string[]>): void {
    this.inFlight++;
    const p = this.deliverOne(row, orders)
      .then((result) => {
        this.outcomes.push({ row, token, result });
        this.recording ??= this.recordOutcomes();
      })
      .finally(() => {
        this.inFlight--;
        this.sends.delete(p);
        this.wakeLoop?.();
      });
    this.sends.add(p);
  }

  /**
   * Claims those of `ids` that are due, one-winner; returns the claim token and the rows won,
   * with their tenant's settings. (Public for tests: two deliverers claiming the same ids must
   * not both win a row.)
   */
  async claim(ids: string[], now = Date.now()): Promise<{ token: string; rows: ClaimedRow[] }> {
    const token = `${this.claimer}#${(++this.seq).toString(36)}`;
    const rows = await this.store.claim(ids, token, now + this.options.claimMs, now);
    return { token, rows };
  }

  /** Provider order per tenant of a claim (the tenant's settings were read with it). */
  private tenantOrders(rows: ClaimedRow[]): Map<string, string[]> {
    const orders = new Map<string, string[]>();
    for (const r of rows) {
      if (!r.tenant_id || orders.has(r.tenant_id) || r.settings === null) continue;
      orders.set(r.tenant_id, this.providers.settingsFor(r.settings).providerOrder);
    }
    return orders;
  }

  private async deliverOne(row: ClaimedRow, orders: Map<string, string[]>): Promise<Result> {
    let msg;
    try {
      msg = this.outbox.openEmail(row.id, row.tenant_id, row.payload_sealed);
    } catch {
      // Retrying cannot help: the payload was altered, or IAM_SECRET_KEY is not the one it was sealed with.
      return {
        kind: 'error',
        code: 'payload_unreadable',
        cause: 'the sealed payload cannot be opened (altered, or sealed under another IAM_SECRET_KEY)',
        fatal: true,
      };
    }
    // Written only so that a sign-in code costs the same with or without an account: never sent.
    if (msg.drop) return { kind: 'delivered', via: DROPPED_VIA, fallback: false };
    const order = (row.tenant_id && orders.get(row.tenant_id)) || this.providers.defaultOrder();
    try {
      const r = await this.providers.send(order, msg);
      return { kind: 'delivered', via: r.via, fallback: r.failures.length > 0 };
    } catch (e) {
      // The first provider's code and every provider's sanitised cause: never the payload, no
      // credentials or addresses (mail/errors.ts, shared/services/failure.ts).
      return { kind: 'error', ...deliveryFailure(e), fatal: false };
    }
  }

  private async handBack(rows: ClaimedRow[], token: string): Promise<void> {
    if (!rows.length) return;
    const now = Date.now();
    try {
      await this.store.handBack(
        rows.map((r) => r.id),
        token,
        now,
      );
    } catch (e) {
      this.log.error(
        { err: e, count: rows.length },
        'could not hand back unsent mail; it is sent when its claims expire',
      );
    }
  }

  /**
   * Writes outcomes as they come, coalesced: outcomes that arrive while a write is under way
   * go together in the next one. Sending never waits for this.
   */
  private async recordOutcomes(): Promise<void> {
    try {
      // Let the sends that finish in this turn of the event loop join the first write.
      await new Promise((r) => setImmediate(r));
      while (this.outcomes.length) {
        const batch = this.outcomes.splice(0, RECORD_CHUNK);
        await this.recordBatch(batch);
      }
    } finally {
      this.recording = undefined;
    }
  }

  private async recordBatch(batch: Outcome[]): Promise<void> {
    const stats = this.stats;
    const now = Date.now();
    const byVia = new Map<string, Outcome[]>();
    const failures: { o: Outcome; code: MailErrorCode; cause: string; final: boolean; retryAt: number }[] = [];
    let fallbacks = 0;
    for (const o of batch) {
      const r = o.result;
      if (r.kind === 'delivered') {
        (byVia.get(r.via) ?? byVia.set(r.via, []).get(r.via)!).push(o);
        if (r.fallback) fallbacks++;
      } else {
        const attempts = o.row.attempts;
        const final = r.fatal || attempts >= this.options.maxAttempts;
        failures.push({
          o,
          code: r.code,
          cause: r.cause,
          final,
          retryAt: now + backoffMs(attempts, this.options.backoffBaseMs, this.options.backoffMaxMs),
        });
      }
    }
    try {
      for (const [via, list] of byVia) {
        // Each row is matched with the claim it was sent under: a later claim of the same row
        // (after this one expired) is not overwritten.
        await this.store.recordDelivered(
          via,
          list.map((o) => ({ id: o.row.id, token: o.token })),
          now,
        );
        stats.delivered += list.length;
      }
      for (const f of failures) {
        await this.store.recordFailure(
          {
            id: f.o.row.id,
            token: f.o.token,
            final: f.final,
            nextAttemptAt: f.retryAt,
            errorCode: f.code,
            cause: f.cause,
          },
          now,
        );
        if (f.final) stats.failed++;
        else stats.retried++;
      }
    } catch (e) {
      // The claims expire by themselves and the rows are sent again: at-least-once.
      this.log.error(
        { err: e, batch: batch.length },
        'could not record mail outcomes; the messages will be retried when their claims expire',
      );
    }

    if (fallbacks) this.log.warn({ count: fallbacks }, 'mail delivered through a fallback provider');
    const retried = failures.filter((f) => !f.final);
    if (retried.length) {
      this.log.warn(
        {
          count: retried.length,
          attempts: retried[0].o.row.attempts,
          errorCode: retried[0].code,
          error: retried[0].cause,
        },
        'mail delivery failed; will retry',
      );
    }
    for (const f of failures.filter((x) => x.final)) {
      this.log.error(
        {
          outboxId: f.o.row.id,
          tenantId: f.o.row.tenant_id,
          attempts: f.o.row.attempts,
          errorCode: f.code,
          error: f.cause,
        },
        'mail delivery failed permanently',
      );
    }
    this.log.debug(
      { batch: batch.length, delivered: batch.length - failures.length, failed: failures.length },
      'mail outcomes recorded',
    );
  }
}

/** The deliverer as a job: every 2 s on every daemon, plus whenever Outbox.kick() fires. */
export function mailOutboxJob(deliverer: MailDeliverer): JobSpec {
  return {
    name: MAIL_OUTBOX_JOB,
    schedule: '*/2 * * * * *',
    lease: false,
    logLevel: 'debug',
    run: async (signal) => {
      await deliverer.drain(signal);
    },
  };
}
