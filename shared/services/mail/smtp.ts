import { Worker } from 'node:worker_threads';
import nodemailer from 'nodemailer';
import { isMailbox } from '../../config.js';
import { MessageRefusedError, ProviderUnavailableError, smtpErrorCode, type MailErrorCode } from './errors.js';
import type { EmailProvider, EmailProviderEntry, OutgoingEmail, SendResult } from './types.js';

/** Domain part of an address, for Message-IDs (RFC 5322 §3.6.4: id-left "@" id-right). */
const domainOf = (addr: string) => addr.slice(addr.lastIndexOf('@') + 1) || 'localhost';

/** The fields of one message, as the worker hands them to nodemailer's MailComposer. */
export interface SmtpMessage {
  /** Bare addr-spec (IAM_MAIL_FROM accepts no display name); also the envelope's reverse-path. */
  from: string;
  /** Bare addr-spec; also the envelope's one forward-path. */
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** With its angle brackets: `<id@domain>` (RFC 5322 §3.6.4). */
  messageId: string;
  /** Extra header fields, e.g. Auto-Submitted; constant printable ASCII. */
  headers: Record<string, string>;
}

/** What the worker is asked (see smtp-worker.ts). */
export type SmtpWorkerRequest = { op: 'send'; id: number; mail: SmtpMessage } | { op: 'close' };

/** What the worker answers, one reply per `send`. */
export type SmtpWorkerReply =
  | { id: number; ok: true; rejected: number; response?: string; messageId?: string }
  | {
      id: number;
      ok: false;
      error: {
        message: string;
        code?: string;
        /** The system error's code when nodemailer wrapped it (ESOCKET around ECONNREFUSED). */
        originalCode?: string;
        responseCode?: number;
        command?: string;
        response?: string;
      };
    };

/** RFC 5322 §3.6.4 msg-id, without the obsolete and quoted forms. */
const MSG_ID = /^<[!-;=?-~]+@[!-;=?-~]+>$/;

/**
 * Refuses what could add or alter a header field, before anything reaches nodemailer (as a
 * failed send, so the next provider is tried). nodemailer would not let a line break start a
 * field of its own (it turns CR and LF in a value into spaces), but it would send a subject
 * other than the one written, and it parses a To or From as an address list: a comma, a
 * display name or a group (`x: a@b;`) would put other recipients into the header. So: bare
 * `local@domain` addresses only (shared/config.ts isMailbox; the outbox applies the same rule
 * when a message is queued) and a subject on one line (RFC 5322 §2.2). The refusal never
 * quotes the value: a subject may carry a login code.
 */
function refuseUnsafe(m: SmtpMessage): void {
  const refuse = (why: string) => {
    throw new MessageRefusedError(`cannot send mail: ${why}`);
  };
  if (!isMailbox(m.from)) refuse('From is not a plain email address');
  if (!isMailbox(m.to)) refuse('To is not a plain email address');
  if (/[\r\n\0]/.test(m.subject)) refuse('Subject contains a line break or a NUL');
  if (!MSG_ID.test(m.messageId)) refuse('Message-ID is not of the form <left@right>');
}

interface Pending {
  resolve: (messageId: string | undefined) => void;
  reject: (e: Error) => void;
}

/** How long close() waits for messages already handed over before it stops the worker. */
const CLOSE_TIMEOUT_MS = 10_000;

/**
 * SMTP through nodemailer's pooled transport: a few long-lived connections each carry many
 * messages, which is what lets the outbox deliver hundreds of mails a second. Pool settings may
 * be tuned in IAM_SMTP_URL's query (`?maxConnections=10&maxMessages=500`); nodemailer applies
 * them over the defaults below.
 *
 * The transport lives in a worker thread (smtp-worker.ts), started at the first send. Under
 * load the daemon's event loop is busy with requests, and an SMTP dialogue needs several turns
 * of it (envelope, 354, end of data): on the loop of its own a message is sent in a few
 * milliseconds instead of waiting behind requests at every turn. nodemailer's MailComposer
 * builds the MIME message there too (multipart/alternative, RFC 2047 encoded-words, transfer
 * encodings), off the request thread: this provider passes only the message's fields, checked
 * first (refuseUnsafe). If the worker dies, the messages it had are reported as failed (the
 * outbox retries them; same Message-ID) and the next send starts a new worker.
 */
export class SmtpProvider implements EmailProvider {
  readonly id = 'smtp';
  private current: { worker: Worker; pending: Map<number, Pending> } | undefined;
  private seq = 0;

  constructor(
    private readonly url: string | undefined,
    private readonly from: string,
  ) {}

  describe(): EmailProviderEntry {
    return {
      id: this.id,
      name: 'SMTP',
      description:
        'Sends through the SMTP relay named by IAM_SMTP_URL (pooled connections, STARTTLS when offered, or smtps://).',
      category: 'smtp',
      configSource: 'environment',
      configured: Boolean(this.url),
      missingRequiredFields: this.url ? [] : ['IAM_SMTP_URL'],
      defaultFrom: this.from,
    };
  }

  async send(msg: OutgoingEmail): Promise<SendResult> {
    if (!this.url) throw new ProviderUnavailableError('SMTP is not configured (IAM_SMTP_URL is unset)');
    // The same Message-ID on every attempt: a retry after a lost reply is recognisably a duplicate.
    const messageId = `<${msg.id}@${domainOf(this.from)}>`;
    const mail: SmtpMessage = {
      from: this.from,
      to: msg.to,
      subject: msg.subject,
      text: msg.text,
      ...(msg.html ? { html: msg.html } : {}),
      messageId,
      // RFC 3834 §5: machine-generated mail; auto-responders should not answer it.
      headers: { 'Auto-Submitted': 'auto-generated' },
    };
    refuseUnsafe(mail);
    const { worker, pending } = this.current ?? this.startWorker();
    const id = ++this.seq;
    const reply = new Promise<string | undefined>((resolve, reject) => pending.set(id, { resolve, reject }));
    if (pending.size === 1) worker.ref();
    worker.postMessage({ op: 'send', id, mail } satisfies SmtpWorkerRequest);
    // nodemailer reports the Message-ID of the message it composed, which is the one passed.
    return { messageId: (await reply) ?? messageId };
  }

  /** nodemailer's error codes and the relay's reply code, as outbox error codes (errors.ts). */
  errorCode(error: unknown): MailErrorCode {
    return smtpErrorCode(error);
  }

  /**
   * Opens one connection of its own and runs nodemailer's verify: greeting, EHLO, STARTTLS when
   * offered, AUTH when the URL carries credentials, then QUIT (RFC 5321 §4.1.1). No message is
   * sent. Done here, not in the worker: it is rare (tenant provisioning) and must not queue
   * behind a busy pool. Errors carry nodemailer's message, which never includes the password.
   */
  async verify(timeoutMs: number): Promise<void> {
    if (!this.url) throw new ProviderUnavailableError('SMTP is not configured (IAM_SMTP_URL is unset)');
    const transport = nodemailer.createTransport({
      url: this.url,
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    } as Parameters<typeof nodemailer.createTransport>[0]);
    try {
      await transport.verify();
    } finally {
      transport.close();
    }
  }

  async close(): Promise<void> {
    const worker = this.current?.worker;
    if (!worker) return;
    this.current = undefined;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref();
    worker.postMessage({ op: 'close' } satisfies SmtpWorkerRequest);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      exited.then(() => false),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(true), CLOSE_TIMEOUT_MS);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) await worker.terminate();
  }

  private startWorker(): { worker: Worker; pending: Map<number, Pending> } {
    const worker = new Worker(new URL('./smtp-worker.js', import.meta.url), {
      workerData: {
        transport: {
          pool: true,
          url: this.url,
          maxConnections: 5,
          maxMessages: 1000,
          // A dead relay must fail fast so the message falls through to the next provider.
          connectionTimeout: 10_000,
          greetingTimeout: 10_000,
          socketTimeout: 30_000,
        },
      },
    });
    // Only messages in flight keep the process alive (ref() in send, unref() when none is left).
    worker.unref();
    const pending = new Map<number, Pending>();
    worker.on('message', (r: SmtpWorkerReply) => {
      const p = pending.get(r.id);
      if (!p) return;
      pending.delete(r.id);
      if (!pending.size) worker.unref();
      if (!r.ok) {
        // nodemailer's ESOCKET only says "the socket failed"; the system error's code says how
        // (ECONNREFUSED, a certificate error), so that one names the failure.
        const { originalCode, ...rest } = r.error;
        const code = rest.code === 'ESOCKET' && originalCode ? originalCode : rest.code;
        p.reject(Object.assign(new Error(r.error.message), rest, { code }));
      } else if (r.rejected) {
        p.reject(
          Object.assign(new Error(`SMTP relay rejected the recipient (${r.response ?? 'no response'})`), {
            code: 'EENVELOPE',
          }),
        );
      } else p.resolve(r.messageId);
    });
    const fail = (why: string) => {
      if (this.current?.worker === worker) this.current = undefined;
      const lost = [...pending.values()];
      pending.clear();
      for (const p of lost)
        p.reject(
          Object.assign(new Error(`the SMTP worker stopped (${why}); the relay may or may not have the message`), {
            mailErrorCode: 'smtp_connection_lost' as const,
          }),
        );
    };
    worker.on('error', (e) => fail(e.message));
    worker.on('exit', (code) => fail(`exit code ${code}`));
    this.current = { worker, pending };
    return this.current;
  }
}
