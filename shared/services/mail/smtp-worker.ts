/**
 * The SMTP provider's worker thread: owns the nodemailer pool and runs every SMTP dialogue,
 * so composing messages and the relay's round trips do not wait behind HTTP requests on the
 * daemon's busy event loop (and their CPU is spent off it). See SmtpProvider in smtp.ts.
 *
 * Messages in: `{ op: 'send', id, mail }` (the fields of a message, composed here by mime.ts
 * and handed to nodemailer as `raw` with its envelope) and `{ op: 'close' }`.
 * Messages out: `{ id, ok: true, rejected, response }` or `{ id, ok: false, error }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import nodemailer from 'nodemailer';
import { composeMessage, type MessageInput } from './mime.js';
import type { SmtpWorkerReply, SmtpWorkerRequest } from './smtp.js';

const port = parentPort!;
const transport = nodemailer.createTransport(workerData.transport);

let inFlight = 0;
let closing = false;
/** Ends the thread once the messages already handed over have their replies posted. */
const closeWhenIdle = () => {
  if (!closing || inFlight) return;
  transport.close();
  port.close();
};

/**
 * Composes and sends one message. IAM_MAIL_FROM is a bare address (shared/config.ts), so it is
 * the reverse-path as it is. A compose error (header injection) rejects like a failed send.
 */
const send = async (mail: MessageInput) =>
  transport.sendMail({ envelope: { from: mail.from, to: [mail.to] }, raw: composeMessage(mail) });

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
        } satisfies SmtpWorkerReply),
      (e: unknown) => {
        const err = e as {
          message?: string;
          code?: string;
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
            responseCode: err?.responseCode,
            command: err?.command,
            response: err?.response,
          },
        } satisfies SmtpWorkerReply);
      },
    );
});
