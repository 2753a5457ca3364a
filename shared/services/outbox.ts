/**
 * The transactional outbox (CONVENTIONS "Data"): a side effect that must not be lost is written
 * as a row in the same transaction as the change that causes it, and a job delivers it after
 * commit. A rolled-back transaction leaves no row, so nothing is sent; a crash after commit
 * leaves the row, so a restarted daemon (or another one) still sends it. Delivery is
 * at-least-once; every attempt carries the same Message-ID so receivers can drop duplicates.
 *
 * Payloads are sealed (AES-256-GCM, shared/crypto.ts): login mails carry one-time codes, which
 * must not sit in the database, or its backups, in the clear.
 */
import type { DataSource, EntityManager } from 'typeorm';
import { newId, SecretBox } from '../crypto.js';
import { isMailbox } from '../config.js';
import { badRequest } from '../errors.js';
import type { OutgoingEmail } from './mail/types.js';
import { exec } from '../db/sql.js';

export interface EmailInput {
  tenantId: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export const OUTBOX_KIND_EMAIL = 'email';
/** Largest body accepted, per part: a notification, not a newsletter. */
const MAX_BODY_CHARS = 256 * 1024;

type Sealed = Pick<OutgoingEmail, 'to' | 'subject' | 'text' | 'html'>;

export class Outbox {
  private readonly box: SecretBox;
  private readonly listeners = new Set<() => void>();
  private kickTimer: NodeJS.Timeout | undefined;

  /**
   * @param ds the application DataSource (used by {@link Outbox.sendEmail} only)
   * @param secretKey IAM_SECRET_KEY; the payload key is derived from it for this purpose alone
   * @param kickDebounceMs kicks within this window wake the deliverer once
   */
  constructor(
    private readonly ds: DataSource,
    secretKey: string,
    private readonly kickDebounceMs = 2,
  ) {
    this.box = new SecretBox(secretKey, 'outbox-payload');
  }

  /**
   * Writes an email to the outbox inside the caller's transaction and returns its id. Call
   * {@link Outbox.kick} after the transaction commits; never wait for delivery in a request.
   */
  async enqueueEmail(em: EntityManager, msg: EmailInput): Promise<string> {
    checkEmail(msg);
    const id = newId('mail');
    const now = Date.now();
    const payload: Sealed = {
      to: msg.to,
      subject: msg.subject,
      text: msg.text,
      ...(msg.html ? { html: msg.html } : {}),
    };
    await exec(
      em,
      'INSERT INTO outbox (id, tenant_id, kind, payload_sealed, status, attempts, next_attempt_at, claimed_by, claimed_until, last_error, delivered_via, created_at, updated_at) ' +
        "VALUES (?, ?, ?, ?, 'pending', 0, ?, NULL, NULL, NULL, NULL, ?, ?)",
      [id, msg.tenantId, OUTBOX_KIND_EMAIL, this.box.seal(JSON.stringify(payload), aad(id)), now, now, now],
    );
    return id;
  }

  /** Enqueues in a transaction of its own and kicks: for callers with nothing else to commit. */
  async sendEmail(msg: EmailInput): Promise<string> {
    const id = await this.ds.transaction((em) => this.enqueueEmail(em, msg));
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
    return { id, tenantId, to: p.to, subject: p.subject, text: p.text, ...(p.html ? { html: p.html } : {}) };
  }
}

/** Binds a ciphertext to its row: a sealed payload copied onto another row does not open. */
const aad = (id: string) => `outbox:${id}`;

const HEADER_UNSAFE = /[\r\n\0]/;

/** Rejects what would break the message rather than letting the deliverer retry it for hours. */
function checkEmail(m: EmailInput): void {
  const bad = (field: string, message: string) => badRequest(`${field}: ${message}`, [{ field, message }]);
  if (typeof m.tenantId !== 'string' || !m.tenantId || m.tenantId.length > 40)
    throw bad('tenantId', 'must be a tenant id');
  // A recipient is one addr-spec that the mail composer (mail/mime.ts) accepts too, so a
  // queued message is never one that can only fail; no CR/LF can inject a header (RFC 5322 §2.2).
  if (typeof m.to !== 'string' || !isMailbox(m.to)) throw bad('to', 'must be one email address');
  if (typeof m.subject !== 'string' || !m.subject.trim() || m.subject.length > 998 || HEADER_UNSAFE.test(m.subject)) {
    throw bad('subject', 'must be one non-empty line of at most 998 characters'); // RFC 5322 §2.1.1
  }
  if (typeof m.text !== 'string' || m.text.length > MAX_BODY_CHARS)
    throw bad('text', `must be a string of at most ${MAX_BODY_CHARS} characters`);
  if (m.html !== undefined && (typeof m.html !== 'string' || m.html.length > MAX_BODY_CHARS))
    throw bad('html', `must be a string of at most ${MAX_BODY_CHARS} characters`);
}
