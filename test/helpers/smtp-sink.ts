/**
 * A real SMTP server (the `smtp-server` package) on an ephemeral loopback port that keeps
 * every message it accepts, decoded enough for tests to read: headers, the subject (RFC 2047
 * encoded words) and the text/html bodies (quoted-printable or base64, plain or
 * multipart/alternative, as nodemailer writes them). mailparser does not install here.
 *
 * It can be told to refuse messages, to test failover and retries:
 *   - `reject: 'temporary'` answers 451 at the end of DATA (RFC 5321 §4.2.5: try again later);
 *   - `reject: 'permanent'` answers 550.
 * A sink that is down is simply a closed one; `startSmtpSink({ port })` brings it back.
 * `delayMs` holds each message that long before accepting it (a slow relay), so a test can
 * kill the sender while many messages are in flight; a message counts as received when the
 * sink accepts it, as at a real relay.
 */
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface SinkMessage {
  /** Envelope sender (MAIL FROM). */
  from: string;
  /** Envelope recipients (RCPT TO). */
  to: string[];
  subject: string;
  /** The text/plain body, decoded, with CRLF turned into LF. */
  text: string;
  /** The text/html body, if there is one. */
  html?: string;
  /** Header fields, lower-cased names, unfolded; the last occurrence wins. */
  headers: Record<string, string>;
  /** The message as received (after SMTP dot-unstuffing). */
  raw: string;
}

export type RejectMode = false | 'temporary' | 'permanent';

export interface SmtpSinkOptions {
  /** Port to listen on (0, the default, picks a free one); to restart a sink where it was. */
  port?: number;
  /** Refuse every message; change later with setReject. */
  reject?: RejectMode | true;
  /** Ask for a login (any username and password are accepted; they are recorded). */
  auth?: boolean;
  /** Wait this long after DATA before accepting a message (default 0); change later with setDelay. */
  delayMs?: number;
}

export interface SmtpSink {
  port: number;
  /** smtp://127.0.0.1:port */
  url: string;
  messages: SinkMessage[];
  /** How many messages were refused because of `reject`. */
  rejected(): number;
  setReject(mode: RejectMode | true): void;
  setDelay(ms: number): void;
  /** The first message, already received or still to come, that satisfies `pred`. */
  waitFor(pred: (m: SinkMessage) => boolean, timeoutMs?: number): Promise<SinkMessage>;
  close(): Promise<void>;
}

export async function startSmtpSink(opts: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const messages: SinkMessage[] = [];
  const waiters = new Set<{ pred: (m: SinkMessage) => boolean; resolve: (m: SinkMessage) => void }>();
  let reject: RejectMode = opts.reject === true ? 'temporary' : opts.reject || false;
  let rejectedCount = 0;
  let delayMs = opts.delayMs ?? 0;

  const server = new SMTPServer({
    // STARTTLS would offer the package's self-signed test certificate, which nodemailer rightly refuses.
    disabledCommands: opts.auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !opts.auth,
    allowInsecureAuth: true,
    onAuth: (auth, _session, cb) => cb(null, { user: auth.username }),
    logger: false,
    // A sink closed to simulate an outage must let go of its clients at once.
    closeTimeout: 50,
    size: 10 * 1024 * 1024,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', (e) => callback(e));
      stream.on('end', () => void accept());
      const accept = async () => {
        if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
        if (reject) {
          rejectedCount++;
          const err = new Error(
            reject === 'temporary' ? 'Sink is refusing mail for now' : 'Sink refuses this message',
          ) as Error & { responseCode: number };
          err.responseCode = reject === 'temporary' ? 451 : 550;
          return callback(err);
        }
        const raw = Buffer.concat(chunks).toString('latin1');
        const m = parseMessage(raw);
        const msg: SinkMessage = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          ...m,
          raw: Buffer.from(raw, 'latin1').toString('utf8'),
        };
        messages.push(msg);
        for (const w of [...waiters]) {
          if (w.pred(msg)) {
            waiters.delete(w);
            w.resolve(msg);
          }
        }
        callback(null);
      };
    },
  });

  // A client that dies mid-conversation (a daemon killed by a test) resets its connection:
  // that is the client's business, not a failure of the sink.
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject_) => {
    server.server.once('error', reject_);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;

  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    rejected: () => rejectedCount,
    setReject: (mode) => {
      reject = mode === true ? 'temporary' : mode || false;
    },
    setDelay: (ms) => {
      delayMs = ms;
    },
    waitFor(pred, timeoutMs = 10_000) {
      const found = messages.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise<SinkMessage>((resolve, rej) => {
        const w = {
          pred,
          resolve: (m: SinkMessage) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(w);
          rej(
            new Error(
              `no matching message within ${timeoutMs} ms; received: ` +
                `${JSON.stringify(messages.map((m) => ({ to: m.to, subject: m.subject })))}`,
            ),
          );
        }, timeoutMs);
        waiters.add(w);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---- a small MIME reader (RFC 2045-2047), enough for what nodemailer produces ----------------

interface Part {
  headers: Record<string, string>;
  body: string;
}

/** Splits a latin1 string (bytes as chars) into unfolded headers and the body. */
function splitPart(raw: string): Part {
  const m = /\r?\n\r?\n/.exec(raw);
  const head = m ? raw.slice(0, m.index) : raw;
  const body = m ? raw.slice(m.index + m[0].length) : '';
  const headers: Record<string, string> = {};
  // RFC 5322 §2.2.3: a line starting with white space continues the previous field.
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { headers, body };
}

/** A parameter of a structured header, e.g. boundary="abc" or charset=utf-8. */
function param(value: string | undefined, name: string): string | undefined {
  const m = new RegExp(`;\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, 'i').exec(value ?? '');
  return m ? (m[1] ?? m[2]) : undefined;
}

function bytesToString(bytes: Buffer, charset = 'utf-8'): string {
  const cs = charset.toLowerCase();
  if (cs === 'utf-8' || cs === 'utf8' || cs === 'us-ascii') return bytes.toString('utf8');
  if (cs === 'iso-8859-1' || cs === 'latin1') return bytes.toString('latin1');
  return new TextDecoder(cs).decode(bytes);
}

/** Quoted-printable (RFC 2045 §6.7): soft line breaks "=\r\n", then =XX octets. */
export function decodeQuotedPrintable(s: string): Buffer {
  const joined = s.replace(/=\r?\n/g, '');
  const out: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    const c = joined[i];
    if (c === '=' && /^[0-9A-Fa-f]{2}$/.test(joined.slice(i + 1, i + 3))) {
      out.push(parseInt(joined.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      out.push(joined.charCodeAt(i) & 0xff);
    }
  }
  return Buffer.from(out);
}

function decodeBody(p: Part): string {
  const cte = (p.headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  const charset = param(p.headers['content-type'], 'charset') ?? 'utf-8';
  let bytes: Buffer;
  if (cte === 'base64') bytes = Buffer.from(p.body.replace(/\s+/g, ''), 'base64');
  else if (cte === 'quoted-printable') bytes = decodeQuotedPrintable(p.body);
  else bytes = Buffer.from(p.body, 'latin1');
  return bytesToString(bytes, charset).replace(/\r\n/g, '\n');
}

/** RFC 2047 encoded words in a header: =?charset?B|Q?text?= (adjacent words join without space). */
export function decodeHeader(v: string): string {
  const decoded = v
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_all, charset: string, enc: string, text: string) => {
      const bytes =
        enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64') : decodeQuotedPrintable(text.replace(/_/g, ' '));
      return bytesToString(bytes, charset);
    });
  // Unencoded header text is UTF-8 on the wire (SMTPUTF8), held here as latin1 chars.
  return /[\x80-\xff]/.test(decoded) && !/=\?/.test(v) ? Buffer.from(decoded, 'latin1').toString('utf8') : decoded;
}

/** Walks multipart bodies and returns the first text/plain and text/html parts. */
function collect(p: Part, out: { text?: string; html?: string }): void {
  const type = (p.headers['content-type'] ?? 'text/plain').split(';')[0].trim().toLowerCase();
  if (type.startsWith('multipart/')) {
    const boundary = param(p.headers['content-type'], 'boundary');
    if (!boundary) return;
    const sections = p.body.split(
      new RegExp(`\\r?\\n?--${boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:--)?[ \\t]*\\r?\\n?`),
    );
    // sections[0] is the preamble, the last one the epilogue.
    for (const s of sections.slice(1, -1)) collect(splitPart(s), out);
    return;
  }
  if (type === 'text/plain' && out.text === undefined) out.text = decodeBody(p);
  else if (type === 'text/html' && out.html === undefined) out.html = decodeBody(p);
}

export function parseMessage(rawLatin1: string): Omit<SinkMessage, 'from' | 'to' | 'raw'> {
  const top = splitPart(rawLatin1);
  // The CRLF before the SMTP terminator ends the last line (RFC 5321 §4.1.1.4); in a multipart
  // body the delimiter owns it instead (RFC 2046 §5.1.1).
  if (!/^multipart\//i.test(top.headers['content-type'] ?? '')) top.body = top.body.replace(/\r\n$/, '');
  const out: { text?: string; html?: string } = {};
  collect(top, out);
  const headers = Object.fromEntries(Object.entries(top.headers).map(([k, v]) => [k, decodeHeader(v)]));
  return {
    subject: headers.subject ?? '',
    text: out.text ?? '',
    ...(out.html !== undefined ? { html: out.html } : {}),
    headers,
  };
}
