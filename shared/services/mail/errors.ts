/**
 * How a failed delivery is named: an error code an operator can filter on (stored in
 * `outbox.last_error_code`, listed in docs/email.md and docs/errors.md) and a sanitised cause
 * (`outbox.last_error`, shared/services/failure.ts): the kind of failure and the relay's own
 * words, per provider tried, never the message, credentials or addresses.
 */
import { failureKind, sanitizedCause } from '../failure.js';

/** The codes a failed delivery attempt is stored with. */
export const MAIL_ERROR_CODES = [
  /** The relay refused the TCP connection (nothing listens there). */
  'smtp_refused',
  /** The relay's host name does not resolve, or its network is unreachable. */
  'smtp_unreachable',
  /** Connecting, the greeting or a reply took longer than the transport's timeouts. */
  'smtp_timeout',
  /** The connection was reset or closed mid-dialogue (or the SMTP worker stopped). */
  'smtp_connection_lost',
  /** STARTTLS or the TLS handshake failed (certificate, protocol). */
  'smtp_tls',
  /** The relay refused the credentials in IAM_SMTP_URL, or wants some and got none. */
  'smtp_auth',
  /** The relay refused the sender, the recipient or the message (a 4xx or 5xx reply). */
  'smtp_rejected',
  /** Any other SMTP failure (an unexpected reply, a protocol error). */
  'smtp_error',
  /** The message could have added or altered a header field; refused before sending. */
  'message_refused',
  /** The provider is not configured (IAM_SMTP_URL unset) or not known to this build. */
  'provider_unavailable',
  /** A provider other than SMTP failed. */
  'provider_error',
  /** The sealed payload does not open (altered, or sealed under another IAM_SECRET_KEY); never retried. */
  'payload_unreadable',
] as const;
export type MailErrorCode = (typeof MAIL_ERROR_CODES)[number];

/** An error that names its own code (the kinds of failure found before anything is sent). */
interface Coded {
  readonly mailErrorCode: MailErrorCode;
}
const codeOf = (e: unknown): MailErrorCode | undefined =>
  typeof e === 'object' && e !== null && 'mailErrorCode' in e ? (e as Coded).mailErrorCode : undefined;

/** The provider cannot send at all: not configured, or not known to this build. */
export class ProviderUnavailableError extends Error implements Coded {
  readonly mailErrorCode = 'provider_unavailable';
  constructor(message: string) {
    super(message);
    this.name = 'ProviderUnavailableError';
  }
}

/**
 * The message could inject or alter a header field (a line break in the subject, anything but
 * a bare address as sender or recipient). The message never quotes the value: a subject may
 * carry a login code.
 */
export class MessageRefusedError extends Error implements Coded {
  readonly mailErrorCode = 'message_refused';
  constructor(message: string) {
    super(message);
    this.name = 'MessageRefusedError';
  }
}

/** One provider's failure within a `priority_failover` attempt. */
export interface ProviderFailure {
  provider: string;
  error: unknown;
  /** The provider's name for it; see {@link MAIL_ERROR_CODES}. */
  code: MailErrorCode;
}

/** Every provider in a tenant's order failed; the outbox retries the message later. */
export class MailDeliveryError extends Error {
  constructor(readonly failures: ProviderFailure[]) {
    super(
      failures.map((f) => `${f.provider}: ${(f.error as Error)?.message ?? String(f.error)}`).join('; ') ||
        'no provider to try',
    );
    this.name = 'MailDeliveryError';
  }
}

/** failure.ts's kinds of failure (from Node, OpenSSL and nodemailer codes) as SMTP error codes. */
const SMTP_KINDS: Record<string, MailErrorCode> = {
  'connection refused': 'smtp_refused',
  'host not found': 'smtp_unreachable',
  'host unreachable': 'smtp_unreachable',
  'timed out': 'smtp_timeout',
  'connection lost': 'smtp_connection_lost',
  TLS: 'smtp_tls',
  'authentication failed': 'smtp_auth',
  'authentication required': 'smtp_auth',
  'refused the envelope': 'smtp_rejected',
  'refused the message': 'smtp_rejected',
};

/**
 * The code of a failure of the SMTP provider, from nodemailer's error `code` (or the system
 * error's, which the provider puts first when nodemailer only says ESOCKET) and the relay's
 * reply code (RFC 5321 §4.2.1: 4yz and 5yz are refusals).
 */
export function smtpErrorCode(e: unknown): MailErrorCode {
  const own = codeOf(e);
  if (own) return own;
  const err = (typeof e === 'object' && e !== null ? e : {}) as { code?: unknown; responseCode?: unknown };
  const kind = failureKind(typeof err.code === 'string' ? err.code : undefined);
  if (kind && SMTP_KINDS[kind]) return SMTP_KINDS[kind];
  if (err.code === 'EOAUTH2') return 'smtp_auth';
  if (typeof err.responseCode === 'number' && err.responseCode >= 400) return 'smtp_rejected';
  return 'smtp_error';
}

/** The code of a failure of a provider that does not name its own failures. */
export const providerErrorCode = (e: unknown): MailErrorCode => codeOf(e) ?? 'provider_error';

/** Most characters stored in `last_error` for one attempt, all providers tried included. */
export const MAX_DELIVERY_CAUSE_CHARS = 500;

/**
 * A failed delivery attempt as stored and logged: the code of the first provider's failure
 * (the tenant's primary: a fallback is a degraded path, so its failure says less), and the
 * cause per provider tried, `smtp: connection refused (ECONNREFUSED): …; log: …`.
 */
export function deliveryFailure(e: unknown): { code: MailErrorCode; cause: string } {
  if (e instanceof MailDeliveryError) {
    const cause = e.failures.length
      ? e.failures.map((f) => `${f.provider}: ${sanitizedCause(f.error)}`).join('; ')
      : 'no provider to try';
    return {
      code: e.failures[0]?.code ?? 'provider_unavailable',
      cause: cause.length > MAX_DELIVERY_CAUSE_CHARS ? `${cause.slice(0, MAX_DELIVERY_CAUSE_CHARS - 1)}…` : cause,
    };
  }
  return { code: providerErrorCode(e), cause: sanitizedCause(e) };
}
