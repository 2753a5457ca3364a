import type { EmailProvider, EmailProviderEntry, OutgoingEmail, SendResult } from './types.js';

/** The slice of a pino logger the log provider writes with. */
export interface MailLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Writes each message, body included, to the daemon's log instead of sending it. For
 * development and tests only: login mails carry one-time codes, and a log is not a mailbox
 * (main.ts warns at start-up while this provider can receive mail).
 */
export class LogProvider implements EmailProvider {
  readonly id = 'log';

  constructor(
    private readonly logger: MailLogger,
    private readonly from: string,
  ) {}

  describe(): EmailProviderEntry {
    return {
      id: this.id,
      name: 'Log',
      description:
        'Writes the message to the daemon log instead of sending it. ' +
        'Development only: messages may contain login codes.',
      category: 'development',
      configSource: 'builtin',
      configured: true,
      missingRequiredFields: [],
      defaultFrom: this.from,
    };
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the interface is async; a log line is not
  async send(msg: OutgoingEmail): Promise<SendResult> {
    this.logger.info(
      {
        mail: {
          id: msg.id,
          tenantId: msg.tenantId,
          from: this.from,
          to: msg.to,
          subject: msg.subject,
          text: msg.text,
          ...(msg.html ? { html: msg.html } : {}),
        },
      },
      'mail written to the log (log provider)',
    );
    return { messageId: msg.id };
  }
}
