/**
 * The transactional outbox (CONVENTIONS "Data"): a side effect that must not be lost is written
 * as a row in the same transaction as the change that causes it, and a job delivers it after
 * commit. A rolled-back transaction leaves no row, so nothing is sent; a crash after commit
 * leaves the row, so a restarted daemon (or another one) still sends it. Delivery is
 * at-least-once; every attempt carries the same Message-ID so receivers can drop duplicates.
 *
 * Payloads are sealed (AES-256-GCM, shared/crypto.ts): login mails carry one-time codes, which
 * must not sit in the database, or its backups, in the clear.
 *
 * Outbox rows are platform-level (shared/repositories/outbox.ts): the deliverer claims them
 * across tenants, on the jobs connection ({@link Outbox.delivery}); operators list them
 * ({@link Outbox.list}, `iam outbox list`), never with the payload.
 */
import { newId, SecretBox } from '../crypto.js';
import { isMailbox } from '../config.js';
import type { Database, Tx } from '../db/index.js';
import { retryTransient } from '../db/index.js';
import { badRequest } from '../errors.js';
import {
  OUTBOX_STATUSES,
  OutboxRepository,
  type ClaimedOutboxRow,
  type OutboxFailure,
  type OutboxListFilter,
  type OutboxStatus,
} from '../repositories/outbox.js';
import type { OutgoingEmail } from './mail/types.js';
import type { OutboxBacklogRow } from '../metrics.js';

export { OUTBOX_STATUSES, type ClaimedOutboxRow, type OutboxFailure, type OutboxStatus };

export interface EmailInput {
  tenantId: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
  /**
   * Written like any other message but dropped unsent by the deliverer (recorded as delivered
   * via `dropped`): a sign-in code for an address that gets no mail, written so that a send
   * costs the same work and the same rows whether or not the address has an account.
   */
  drop?: boolean;
}

export const OUTBOX_KIND_EMAIL = 'email';
/** Largest body accepted, per part: a notification, not a newsletter. */
const MAX_BODY_CHARS = 256 * 1024;

type Sealed = Pick<OutgoingEmail, 'to' | 'subject' | 'text' | 'html' | 'drop'>;

/** An outbox entry as an operator sees it (`iam outbox list`): everything but the payload. */
export interface OutboxEntryView {
  id: string;
  tenant_id: string | null;
  kind: string;
  status: OutboxStatus;
  attempts: number;
  next_attempt_at: number;
  /** The last failed attempt's error code (docs/email.md), or null. */
  last_error_code: string | null;
  /** Its sanitised cause: the kind of failure and the relay's words, per provider tried. */
  last_error_cause: string | null;
  delivered_via: string | null;
  created_at: number;
  updated_at: number;
}

export class Outbox {
  private readonly box: SecretBox;
  private readonly listeners = new Set<() => void>();
  private kickTimer: NodeJS.Timeout | undefined;

  /**
   * @param db the application database (used by {@link Outbox.sendEmail} and {@link Outbox.list})
   * @param secretKey IAM_SECRET_KEY; the payload key is derived from it for this purpose alone
   * @param kickDebounceMs kicks within this window wake the deliverer once
   */
  constructor(
    private readonly db: Database,
    secretKey: string,
    private readonly kickDebounceMs = 2,
  ) {
    this.box = new SecretBox(secretKey, 'outbox-payload');
  }

  /**
   * Writes an email to the outbox inside the caller's transaction and returns its id: one
   * INSERT (this is on the login path). Call {@link Outbox.kick} after the transaction commits;
   * never wait for delivery in a request.
   */
  async enqueueEmail(tx: Tx, msg: EmailInput): Promise<string> {
    checkEmail(msg);
    const id = newId('mail');
    const payload: Sealed = {
      to: msg.to,
      subject: msg.subject,
      text: msg.text,
      ...(msg.html ? { html: msg.html } : {}),
      ...(msg.drop ? { drop: true } : {}),
    };
    await new OutboxRepository(tx).insert({
      id,
      tenantId: msg.tenantId,
      kind: OUTBOX_KIND_EMAIL,
      payloadSealed: this.box.seal(JSON.stringify(payload), aad(id)),
      now: Date.now(),
    });
    return id;
  }

  /**
   * Writes a sealed entry of another kind (a plugin's delivery, e.g. an audit event for the
   * audit webhook) inside the caller's transaction; its own deliverer claims it by kind.
   */
  async enqueueSealed(tx: Tx, e: { tenantId: string | null; kind: string; payload: unknown }): Promise<string> {
    const id = newId('obx');
    await new OutboxRepository(tx).insert({
      id,
      tenantId: e.tenantId,
      kind: e.kind,
      payloadSealed: this.box.seal(JSON.stringify(e.payload), aad(id)),
      now: Date.now(),
    });
    return id;
  }

  /** Opens an entry written by {@link Outbox.enqueueSealed}. Throws if altered or sealed under another key. */
  openSealed<T>(id: string, sealed: string): T {
    return JSON.parse(this.box.open(sealed, aad(id))) as T;
  }

  /** Enqueues in a transaction of its own and kicks: for callers with nothing else to commit. */
  async sendEmail(msg: EmailInput): Promise<string> {
    const id = await this.db.transaction((tx) => this.enqueueEmail(tx, msg));
    this.kick();
    return id;
  }

  /**
   * Wakes this process's deliverer (debounced) so a committed message leaves at once instead of
   * at the next periodic tick. Cheap and safe to call often, and a no-op when no deliverer runs
   * here (the CLI): the tick of any daemon picks the row up.
   */
  kick(): void {
    if (this.kickTimer || this.listeners.size === 0) return;
    this.kickTimer = setTimeout(() => {
      this.kickTimer = undefined;
      for (const fn of this.listeners) fn();
    }, this.kickDebounceMs);
  }

  /** Subscribes to kicks; returns the unsubscribe function. */
  onKick(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  }

  /** Opens a sealed payload (for the deliverer). Throws if the row was tampered with or the key differs. */
  openEmail(id: string, tenantId: string | null, sealed: string): OutgoingEmail {
    const p = JSON.parse(this.box.open(sealed, aad(id))) as Sealed;
    return {
      id,
      tenantId,
      to: p.to,
      subject: p.subject,
      text: p.text,
      ...(p.html ? { html: p.html } : {}),
      ...(p.drop ? { drop: true } : {}),
    };
  }

  /**
   * The deliverer's side of the outbox on `db` (the jobs connection, never the requests'):
   * due rows, one-winner claims and outcomes.
   */
  delivery(db: Database): OutboxDelivery {
    return new OutboxDelivery(db);
  }

  /**
   * The entries not delivered yet (or given up on), by kind and status, for the metrics
   * (docs/metrics.md): how many, and for pending ones how long the oldest has been due.
   */
  async backlog(now = Date.now()): Promise<OutboxBacklogRow[]> {
    const rows = await new OutboxRepository(this.db).backlog();
    return rows.map((r) => ({
      kind: r.kind,
      status: r.status,
      count: r.n,
      ...(r.status === 'pending' ? { oldestDueSeconds: Math.max(0, (now - r.oldest) / 1000) } : {}),
    }));
  }

  /**
   * Entries for an operator, most recently changed first: any tenant's, or one tenant's, of
   * any status or one; 1 to 1000 (100 by default). Never the payload.
   */
  async list(filter: OutboxListFilter = {}): Promise<OutboxEntryView[]> {
    if (filter.status !== undefined && !OUTBOX_STATUSES.includes(filter.status)) {
      throw badRequest(`status: must be one of ${OUTBOX_STATUSES.join(', ')}`, [
        { field: 'status', message: `must be one of ${OUTBOX_STATUSES.join(', ')}` },
      ]);
    }
    const rows = await new OutboxRepository(this.db).list(filter);
    return rows.map(({ last_error, ...r }) => ({ ...r, last_error_cause: last_error }));
  }
}

/** How long recording an outcome keeps retrying through lock contention. */
const RECORD_RETRY_MS = 30_000;

/**
 * The outbox as the deliverer (daemon/jobs/mail-outbox.ts) works it. Writes are retried through
 * transient lock errors: a claim that is lost is only a missed turn, but an outcome that is not
 * recorded means the message is sent again when its claim expires.
 */
export class OutboxDelivery {
  private readonly repo: OutboxRepository;

  constructor(db: Database) {
    this.repo = new OutboxRepository(db);
  }

  /** Ids of due `pending` rows, or of `sending` rows whose claim has expired, oldest first. */
  dueIds(
    status: 'pending' | 'sending',
    now: number,
    limit: number,
    kind: string = OUTBOX_KIND_EMAIL,
  ): Promise<string[]> {
    return this.repo.dueIds(status, now, limit, kind);
  }

  /**
   * Claims those of `ids` that are due under `token` (one-winner; the claim lasts until
   * `until`, and counts an attempt) and returns the rows won, with their tenant's settings.
   */
  async claim(ids: string[], token: string, until: number, now: number): Promise<ClaimedOutboxRow[]> {
    const won = await retryTransient(() => this.repo.claim(ids, token, until, now));
    // The token is unique to this claim: what it selects is exactly what was won.
    return won === 0 ? [] : this.repo.claimed(ids, token);
  }

  /** Gives claimed rows back, due now, without counting the attempt. */
  handBack(ids: string[], token: string, now: number): Promise<number> {
    return retryTransient(() => this.repo.handBack(ids, token, now), RECORD_RETRY_MS);
  }

  /** Records rows delivered through `via` (their payload erased), each under its own claim. */
  recordDelivered(via: string, rows: { id: string; token: string }[], now: number): Promise<number> {
    return retryTransient(() => this.repo.markDelivered(via, rows, now), RECORD_RETRY_MS);
  }

  /** Records a failed attempt: its error code, sanitised cause and next attempt, or `failed`. */
  recordFailure(f: OutboxFailure, now: number): Promise<number> {
    return retryTransient(() => this.repo.markFailed(f, now), RECORD_RETRY_MS);
  }
}

/** How long finished rows are kept: delivered ones (payload erased) for diagnosis, failed ones longer. */
export interface OutboxRetention {
  deliveredRetentionMs: number;
  failedRetentionMs: number;
}

/**
 * Deletes delivered and failed rows past their retention, in chunks by primary key so no
 * statement holds locks for long; pending and sending rows are never touched. Returns how many.
 */
export async function purgeOutbox(
  db: Database,
  retention: OutboxRetention,
  signal?: AbortSignal,
  now = Date.now(),
): Promise<number> {
  const repo = new OutboxRepository(db);
  let deleted = 0;
  for (const [status, keep] of [
    ['delivered', retention.deliveredRetentionMs],
    ['failed', retention.failedRetentionMs],
  ] as const) {
    deleted += await repo.purge(status, now - keep, signal);
  }
  return deleted;
}

/** Binds a ciphertext to its row: a sealed payload copied onto another row does not open. */
const aad = (id: string) => `outbox:${id}`;

const HEADER_UNSAFE = /[\r\n\0]/;

/** Rejects what would break the message rather than letting the deliverer retry it for hours. */
function checkEmail(m: EmailInput): void {
  const bad = (field: string, message: string) => badRequest(`${field}: ${message}`, [{ field, message }]);
  if (typeof m.tenantId !== 'string' || !m.tenantId || m.tenantId.length > 40)
    throw bad('tenantId', 'must be a tenant id');
  // A recipient is one addr-spec that the SMTP provider (mail/smtp.ts) accepts too, so a queued
  // message is never one that can only fail; no CR/LF can inject a header (RFC 5322 §2.2).
  if (typeof m.to !== 'string' || !isMailbox(m.to)) throw bad('to', 'must be one email address');
  if (typeof m.subject !== 'string' || !m.subject.trim() || m.subject.length > 998 || HEADER_UNSAFE.test(m.subject)) {
    throw bad('subject', 'must be one non-empty line of at most 998 characters'); // RFC 5322 §2.1.1
  }
  if (typeof m.text !== 'string' || m.text.length > MAX_BODY_CHARS)
    throw bad('text', `must be a string of at most ${MAX_BODY_CHARS} characters`);
  if (m.html !== undefined && (typeof m.html !== 'string' || m.html.length > MAX_BODY_CHARS))
    throw bad('html', `must be a string of at most ${MAX_BODY_CHARS} characters`);
}
