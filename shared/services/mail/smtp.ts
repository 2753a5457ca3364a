import { Worker } from 'node:worker_threads';
import nodemailer from 'nodemailer';
import type { MessageInput } from './mime.js';
import type { EmailProvider, EmailProviderEntry, OutgoingEmail, SendResult } from './types.js';

/** Domain part of an address, for Message-IDs (RFC 5322 §3.6.4: id-left "@" id-right). */
const domainOf = (addr: string) => addr.slice(addr.lastIndexOf('@') + 1) || 'localhost';

/** What the worker is asked (see smtp-worker.ts). */
export type SmtpWorkerRequest = { op: 'send'; id: number; mail: MessageInput } | { op: 'close' };

/** What the worker answers, one reply per `send`. */
export type SmtpWorkerReply =
  | { id: number; ok: true; rejected: number; response?: string }
  | {
      id: number;
      ok: false;
      error: { message: string; code?: string; responseCode?: number; command?: string; response?: string };
    };

interface Pending {
  resolve: () => void;
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
 * milliseconds instead of waiting behind requests at every turn. The worker composes the
 * message with mime.ts (about 10 µs; nodemailer's MailComposer spent about 0.75 ms of CPU on
 * it), off the request thread, and hands nodemailer `raw`. If the worker dies, the messages it had are reported as failed
 * (the outbox retries them; same Message-ID) and the next send starts a new worker.
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
    if (!this.url) throw new Error('SMTP is not configured (IAM_SMTP_URL is unset)');
    // The same Message-ID on every attempt: a retry after a lost reply is recognisably a duplicate.
    const messageId = `<${msg.id}@${domainOf(this.from)}>`;
    // Composed in the worker (mime.ts); a message that could inject a header is refused there,
    // as a failed send, so the next provider is tried.
    const mail: MessageInput = {
      from: this.from,
      to: msg.to,
      subject: msg.subject,
      text: msg.text,
      ...(msg.html ? { html: msg.html } : {}),
      messageId,
      // RFC 3834 §5: machine-generated mail; auto-responders should not answer it.
      headers: { 'Auto-Submitted': 'auto-generated' },
    };
    const { worker, pending } = this.current ?? this.startWorker();
    const id = ++this.seq;
    // nodemailer does not read the Message-ID inside a raw message (it would report one of its
    // own making), so the result is the one written into the message.
    const reply = new Promise<void>((resolve, reject) => pending.set(id, { resolve, reject })).then(() => ({
      messageId,
    }));
    if (pending.size === 1) worker.ref();
    worker.postMessage({ op: 'send', id, mail } satisfies SmtpWorkerRequest);
    return reply;
  }

  /**
   * Opens one connection of its own and runs nodemailer's verify: greeting, EHLO, STARTTLS when
   * offered, AUTH when the URL carries credentials, then QUIT (RFC 5321 §4.1.1). No message is
   * sent. Done here, not in the worker: it is rare (tenant provisioning) and must not queue
   * behind a busy pool. Errors carry nodemailer's message, which never includes the password.
   */
  async verify(timeoutMs: number): Promise<void> {
    if (!this.url) throw new Error('SMTP is not configured (IAM_SMTP_URL is unset)');
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
      if (!r.ok) p.reject(Object.assign(new Error(r.error.message), r.error));
      else if (r.rejected) p.reject(new Error(`SMTP relay rejected the recipient (${r.response ?? 'no response'})`));
      else p.resolve();
    });
    const fail = (why: string) => {
      if (this.current?.worker === worker) this.current = undefined;
      const lost = [...pending.values()];
      pending.clear();
      for (const p of lost)
        p.reject(new Error(`the SMTP worker stopped (${why}); the relay may or may not have the message`));
    };
    worker.on('error', (e) => fail(e.message));
    worker.on('exit', (code) => fail(`exit code ${code}`));
    this.current = { worker, pending };
    return this.current;
  }
}
