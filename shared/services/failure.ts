/**
 * Causes of failed job steps, fit to store beside their error code and to show an operator:
 * what kind of failure it was (refused, timeout, TLS, authentication, …) and the peer's own
 * words, without what must not leave the service or reach a log: credentials in URLs, email
 * addresses, control characters, stack traces. Bounded in length.
 *
 * Used by provisioning (a step's check), recovery (a verification step) and the mail outbox (a
 * delivery attempt), so an operator reads the same kind of text for all three.
 */

import { OutboundError } from '../net/outbound.js';

/** Most characters of a stored cause. */
export const MAX_CAUSE_CHARS = 300;

interface Errorish {
  code?: unknown;
  /** nodemailer replaces a socket error's code with its own (ESOCKET) and keeps Node's here. */
  originalCode?: unknown;
  responseCode?: unknown;
  command?: unknown;
  message?: unknown;
  cause?: unknown;
}

/** Node, OpenSSL and nodemailer error codes, by what they mean to an operator. */
const KINDS: [RegExp, string][] = [
  [/^ECONNREFUSED$/, 'connection refused'],
  [/^(ETIMEDOUT|ETIMEOUT|ESOCKETTIMEDOUT|UND_ERR_CONNECT_TIMEOUT|ABORT_ERR)$/, 'timed out'],
  [/^(ENOTFOUND|EAI_AGAIN|EDNS)$/, 'host not found'],
  [/^(ECONNRESET|EPIPE|ESOCKET|ECONNECTION)$/, 'connection lost'],
  [/^(EHOSTUNREACH|ENETUNREACH)$/, 'host unreachable'],
  [/^(ETLS|ERR_TLS_.*|ERR_SSL_.*|CERT_.*|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_.*)$/, 'TLS'],
  [/^EAUTH$/, 'authentication failed'],
  [/^ENOAUTH$/, 'authentication required'],
  [/^EENVELOPE$/, 'refused the envelope'],
  [/^EMESSAGE$/, 'refused the message'],
];

/** The kind of failure an error code stands for, or undefined for codes that say it themselves. */
export function failureKind(code: string | undefined): string | undefined {
  if (!code) return undefined;
  return KINDS.find(([re]) => re.test(code))?.[1];
}

/** Masks what must not be stored or shown: URL credentials, email addresses, control characters. */
export function scrub(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex -- control characters are what is removed
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ' ')
      .replace(/\/\/[^/\s@]*@/g, '//***@')
      .replace(/[^\s<>()[\]"',;:]+@[^\s<>()[\]"',;:]+/g, '<address>')
      .replace(/\s+/g, ' ')
      .trim()
  );
}

/**
 * One line saying why `e` happened: `timed out (ETIMEDOUT): Greeting never received`,
 * `authentication failed (EAUTH 535): 5.7.8 Authentication credentials invalid`. Only the first
 * line of a message is kept (a stack trace never is); a wrapped error adds its cause's kind.
 */
export function sanitizedCause(e: unknown): string {
  // An address the outbound rules refuse (shared/net/outbound.ts): the reason alone. Its
  // message names what the host resolved to (`vm resolves to 127.0.0.1`), and a cause is shown
  // to whoever configured the URL, a tenant admin included: that would make the service a DNS
  // oracle for its internal names. Neither the address nor the host is kept.
  if (e instanceof OutboundError && e.reason === 'blocked_address') return 'blocked_address';
  const err = (typeof e === 'object' && e !== null ? e : { message: String(e) }) as Errorish;
  const code = typeof err.code === 'string' ? err.code : undefined;
  const original = typeof err.originalCode === 'string' && err.originalCode !== code ? err.originalCode : undefined;
  const response = typeof err.responseCode === 'number' ? err.responseCode : undefined;
  const message = typeof err.message === 'string' ? err.message.split('\n')[0] : String(e);
  // The more specific of the two codes names the kind: ECONNREFUSED says more than ESOCKET.
  const kind = failureKind(original) ?? failureKind(code);
  const tag = [code, original, response].filter((v) => v !== undefined).join(' ');
  let text = kind ? `${kind}${tag ? ` (${tag})` : ''}: ${message}` : tag ? `${tag}: ${message}` : message;
  const inner = err.cause as Errorish | undefined;
  const innerKind = typeof inner?.code === 'string' ? failureKind(inner.code) : undefined;
  if (innerKind && innerKind !== kind) text += ` (cause: ${innerKind}, ${String(inner!.code)})`;
  const clean = scrub(text);
  return clean.length > MAX_CAUSE_CHARS ? `${clean.slice(0, MAX_CAUSE_CHARS - 1)}…` : clean;
}
