/**
 * A small composer for the only kind of message this service sends: one sender, one recipient,
 * a subject and a text body with an optional HTML alternative (RFC 5322, MIME RFC 2045-2049).
 * The SMTP provider hands the result to nodemailer as a pre-built `raw` message: its general
 * MailComposer builds the same thing through a tree of streams at several times the CPU.
 *
 * Everything written is US-ASCII (non-ASCII goes into RFC 2047 encoded-words or base64), so the
 * message needs neither 8BITMIME nor SMTPUTF8 from the relay.
 */
import { isMailbox } from '../../config.js';
import { randomToken } from '../../crypto.js';

export interface MessageInput {
  /** Bare addr-spec (IAM_MAIL_FROM accepts no display name). */
  from: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** With its angle brackets: `<id@domain>` (RFC 5322 §3.6.4). */
  messageId: string;
  date?: Date;
  /** Extra fields, e.g. Auto-Submitted; printable ASCII only. */
  headers?: Record<string, string>;
}

const CRLF = '\r\n';
/** RFC 5322 §2.1.1: a line MUST be at most 998 octets, excluding the CRLF. */
const MAX_LINE = 998;
/** RFC 5322 §2.1.1: lines SHOULD be at most 78 characters; folding aims for that. */
const FOLD_AT = 78;
/**
 * UTF-8 octets per encoded-word: 39 octets are 52 base64 characters, so `=?UTF-8?B?…?=` is 64
 * long and even the first line, `Subject: ` and a word, stays within the 76 characters RFC 2047
 * §2 allows a line that carries encoded-words.
 */
const WORD_OCTETS = 39;
/** Fields this composer writes itself; an extra header must not add a second one (RFC 5322 §3.6). */
const OWN_FIELDS = new Set([
  'from',
  'to',
  'subject',
  'date',
  'message-id',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
]);

/** RFC 5322 §2.2: field-name is printable ASCII except the colon. */
const FIELD_NAME = /^[!-9;-~]+$/;
/** Unstructured field bodies written as they are: printable ASCII, space and tab, nothing that ends the line. */
const PLAIN_VALUE = /^[\t\x20-\x7e]*$/;
/** RFC 5322 §3.6.4 msg-id, without the obsolete and quoted forms. */
const MSG_ID = /^<[!-;=?-~]+@[!-;=?-~]+>$/;

const fail = (what: string, why: string): never => {
  throw new Error(`cannot compose mail: ${what} ${why}`);
};

/**
 * One header field, refused unless it stays on its line: a CR or LF in a value would end the
 * field and let the rest be read as further fields (header injection). Values are never quoted
 * in the error: a subject may carry a login code.
 */
function field(name: string, value: string): string {
  if (!FIELD_NAME.test(name)) fail('a header field name', 'is not printable ASCII without a colon');
  if (/[\r\n]/.test(value)) fail(name, 'contains a line break');
  if (!PLAIN_VALUE.test(value)) fail(name, 'is not printable ASCII');
  const line = `${name}: ${value}`;
  return line.length > MAX_LINE ? fail(name, `is longer than ${MAX_LINE} octets`) : line;
}

function address(name: string, value: string): string {
  // A bare `local@domain` (shared/config.ts isMailbox): no display name, spaces, angle
  // brackets or line breaks, so it is safe both in the header and as an SMTP path.
  return isMailbox(value) ? field(name, value) : fail(name, 'is not a plain email address');
}

/**
 * Subject (RFC 5322 §3.6.5): as it is when it is printable ASCII, folded before spaces
 * (§2.2.3) so that unfolding gives it back; otherwise RFC 2047 B encoded-words of whole
 * characters, one per line. Text that merely looks like an encoded-word (`=?`) and a word too
 * long to fold are encoded too, so a reader decodes exactly what was meant.
 */
function subjectField(subject: string): string {
  if (/[\r\n]/.test(subject)) fail('Subject', 'contains a line break');
  const words = subject.split(/(?= [^ ])/);
  if (
    /^[\x20-\x7e]*$/.test(subject) &&
    !subject.includes('=?') &&
    words.every((w) => w.length <= FOLD_AT - 'Subject: '.length)
  ) {
    // Each fold goes before a space followed by text, so no line is white space only (§3.2.2).
    let out = 'Subject:';
    let lineLength = out.length;
    for (const [i, w] of words.entries()) {
      const piece = i ? w : ` ${w}`;
      if (i && lineLength + piece.length > FOLD_AT) {
        out += CRLF;
        lineLength = 0;
      }
      out += piece;
      lineLength += piece.length;
    }
    return out;
  }
  const encoded: string[] = [];
  let chunk = '';
  let octets = 0;
  // for…of walks code points, so a surrogate pair (4 octets in UTF-8) is never split (§5 (3)).
  for (const ch of subject) {
    const cp = ch.codePointAt(0)!;
    const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (octets + n > WORD_OCTETS) {
      encoded.push(chunk);
      chunk = '';
      octets = 0;
    }
    chunk += ch;
    octets += n;
  }
  encoded.push(chunk);
  // §6.2: the white space between adjacent encoded-words is not part of the text.
  return `Subject: ${encoded.map((c) => `=?UTF-8?B?${Buffer.from(c, 'utf8').toString('base64')}?=`).join(`${CRLF} `)}`;
}

/**
 * A text part's body in canonical form (RFC 2046 §4.1.1: CRLF line breaks) and its transfer
 * encoding: 7bit when it already is 7bit data (RFC 2045 §2.7: ASCII without NUL, lines of at
 * most 998 octets), else base64 (§6.8) in lines of 76 characters, which is always safe.
 */
function textBody(content: string): { cte: '7bit' | 'base64'; body: string } {
  const body = content.replace(/\r\n|\r|\n/g, CRLF);
  if (/^[\x01-\x7f]*$/.test(body) && body.split(CRLF).every((line) => line.length <= MAX_LINE))
    return { cte: '7bit', body };
  return {
    cte: 'base64',
    body: Buffer.from(body, 'utf8')
      .toString('base64')
      .replace(/.{76}(?!$)/g, `$&${CRLF}`),
  };
}

const partHeaders = (type: string, cte: string) =>
  `Content-Type: ${type}; charset=utf-8${CRLF}Content-Transfer-Encoding: ${cte}`;

/** The whole message, CRLF line endings, ready for SMTP DATA (the transport dot-stuffs it). */
export function composeMessage(msg: MessageInput): string {
  if (!MSG_ID.test(msg.messageId)) fail('Message-ID', 'is not of the form <left@right>');
  const head = [
    address('From', msg.from),
    address('To', msg.to),
    subjectField(msg.subject),
    // RFC 5322 §3.3 date-time; toUTCString is `Sun, 22 Nov 2026 18:50:13 GMT`, and "GMT" is
    // only the obsolete zone form (§4.3), so the offset is written numerically.
    field('Date', (msg.date ?? new Date()).toUTCString().replace(/GMT$/, '+0000')),
    field('Message-ID', msg.messageId),
    'MIME-Version: 1.0', // RFC 2045 §4
  ];
  for (const [name, value] of Object.entries(msg.headers ?? {})) {
    if (OWN_FIELDS.has(name.toLowerCase())) fail(name, 'is written by the composer itself');
    head.push(field(name, value));
  }
  const text = textBody(msg.text);
  if (msg.html === undefined) return [...head, partHeaders('text/plain', text.cte), '', text.body].join(CRLF);

  const html = textBody(msg.html);
  // RFC 2046 §5.1.1: the boundary must not occur in any part. Base64 parts cannot contain "=_",
  // and a 7bit part that happens to contain the random value gets another one.
  let boundary: string;
  do boundary = `=_${randomToken(24)}`;
  while (text.body.includes(boundary) || html.body.includes(boundary));
  // RFC 2046 §5.1.4: alternatives in increasing order of preference, plain text first.
  return [
    ...head,
    `Content-Type: multipart/alternative; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    partHeaders('text/plain', text.cte),
    '',
    text.body,
    `--${boundary}`,
    partHeaders('text/html', html.cte),
    '',
    html.body,
    `--${boundary}--`,
    '',
  ].join(CRLF);
}
