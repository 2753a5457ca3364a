/**
 * The SMTP provider's worker thread: owns the nodemailer pool and runs every SMTP dialogue,
 * so composing messages and the relay's round trips do not wait behind HTTP requests on the
 * daemon's busy event loop (and their CPU is spent off it). See SmtpProvider in smtp.ts.
 *
 * Messages in: `{ op: 'send', id, mail }` (the fields of a message, already checked by
 * SmtpProvider; nodemailer's MailComposer builds the MIME message here) and `{ op: 'close' }`.
 * Messages out: `{ id, ok: true, rejected, response, messageId }` or `{ id, ok: false, error }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import nodemailer from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import { encodeWord } from 'nodemailer/lib/mime-funcs';
import type { SmtpMessage, SmtpWorkerReply, SmtpWorkerRequest } from './smtp.js';

const port = parentPort!;
const transport = nodemailer.createTransport((workerData as { transport: SMTPPool.Options }).transport);

let inFlight = 0;
let closing = false;
/** Ends the thread once the messages already handed over have their replies posted. */
const closeWhenIdle = () => {
  if (!closing || inFlight) return;
  transport.close();
  port.close();
};

/**
 * RFC 2047 §6.1: a reader decodes whatever in an unstructured field has the form of an
 * encoded-word. nodemailer takes such text in a subject for a value its caller encoded already
 * and sends it as it is, so a subject that merely contains one (`=?UTF-8?Q?x?=`) would be read
 * as something else. Such a subject is encoded whole, with nodemailer's own encoder; nodemailer
 * then folds the words like any other.
 */
const subjectOf = (s: string) => (s.includes('=?') ? encodeWord(s, 'Q', 52) : s);

/**
 * Composes and sends one message. IAM_MAIL_FROM is a bare address (shared/config.ts), so it is
 * the reverse-path as it is; the envelope is given, so nodemailer never derives one from the
 * header fields. The message carries only text: nodemailer is told never to read a file or a
 * URL for content.
 */
const send = async (mail: SmtpMessage) =>
  transport.sendMail({
    from: mail.from,
    to: mail.to,
    subject: subjectOf(mail.subject),
    text: mail.text,
    ...(mail.html !== undefined ? { html: mail.html } : {}),
    messageId: mail.messageId,
    headers: mail.headers,
    envelope: { from: mail.from, to: [mail.to] },
    disableFileAccess: true,
    disableUrlAccess: true,
  });

port.on('message', (m: SmtpWorkerRequest) => {
  if (m.op === 'close') {
    closing = true;
    closeWhenIdle();
    return;
  }
  inFlight++;
  send(m.mail)
    .finally(() => {
      inFlight--;
      setImmediate(closeWhenIdle);
    })
    .then(
      (info) =>
        port.postMessage({
          id: m.id,
          ok: true,
          rejected: info.rejected?.length ?? 0,
          response: info.response,
          messageId: info.messageId,
        } satisfies SmtpWorkerReply),
      (e: unknown) => {
        const err = e as {
          message?: string;
          code?: string;
          originalCode?: string;
          responseCode?: number;
          command?: string;
          response?: string;
        };
        port.postMessage({
          id: m.id,
          ok: false,
          error: {
            message: String(err?.message ?? e),
            code: err?.code,
            originalCode: err?.originalCode,
            responseCode: err?.responseCode,
            command: err?.command,
            response: err?.response,
          },
        } satisfies SmtpWorkerReply);
      },
    );
});
