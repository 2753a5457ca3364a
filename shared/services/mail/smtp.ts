import nodemailer from 'nodemailer';
import type { EmailProvider, EmailProviderEntry, OutgoingEmail, SendResult } from './types.js';

/** Domain part of an address, for Message-IDs (RFC 5322 §3.6.4: id-left "@" id-right). */
const domainOf = (addr: string) => addr.slice(addr.lastIndexOf('@') + 1) || 'localhost';

/**
 * SMTP through nodemailer's pooled transport: a few long-lived connections each carry many
 * messages, which is what lets the outbox deliver hundreds of mails a second. Pool settings may
 * be tuned in IAM_SMTP_URL's query (`?maxConnections=10&maxMessages=500`); nodemailer applies
 * them over the defaults below.
 */
export class SmtpProvider implements EmailProvider {
  readonly id = 'smtp';
  private transport: ReturnType<typeof nodemailer.createTransport> | undefined;

  constructor(private readonly url: string | undefined, private readonly from: string) {
    if (url) {
      this.transport = nodemailer.createTransport({
        pool: true,
        url,
        maxConnections: 5,
        maxMessages: 1000,
        // A dead relay must fail fast so the message falls through to the next provider.
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 30_000,
      });
    }
  }

  describe(): EmailProviderEntry {
    return {
      id: this.id,
      name: 'SMTP',
      description: 'Sends through the SMTP relay named by IAM_SMTP_URL (pooled connections, STARTTLS when offered, or smtps://).',
      category: 'smtp',
      configSource: 'environment',
      configured: Boolean(this.url),
      missingRequiredFields: this.url ? [] : ['IAM_SMTP_URL'],
      defaultFrom: this.from,
    };
  }

  async send(msg: OutgoingEmail): Promise<SendResult> {
    if (!this.transport) throw new Error('SMTP is not configured (IAM_SMTP_URL is unset)');
    const info = await this.transport.sendMail({
      from: this.from,
      to: msg.to,
      subject: msg.subject,
      text: msg.text,
      ...(msg.html ? { html: msg.html } : {}),
      // The same Message-ID on every attempt: a retry after a lost reply is recognisably a duplicate.
      messageId: `<${msg.id}@${domainOf(this.from)}>`,
      // RFC 3834 §5: machine-generated mail; auto-responders should not answer it.
      headers: { 'Auto-Submitted': 'auto-generated' },
    });
    if (info.rejected?.length) throw new Error(`SMTP relay rejected the recipient (${info.response ?? 'no response'})`);
    return { messageId: info.messageId };
  }

  async close(): Promise<void> {
    this.transport?.close();
  }
}
