/**
 * The SMTP provider end to end: SmtpProvider hands nodemailer the fields of a message, its
 * MailComposer builds the MIME message in the provider's worker thread, and a real SMTP server
 * (test/helpers/smtp-sink.ts) receives it. What is checked is what reaches the relay: the
 * envelope, the header fields (Message-ID, Auto-Submitted, RFC 2047 subjects), the text and
 * HTML parts and the limits every message must keep, and that nothing that could inject a
 * header is sent at all. Messages are decoded with the sink's small MIME reader.
 */
import test, { type ExecutionContext } from 'ava';
import {
  createEmailProviders,
  deliveryFailure,
  MailDeliveryError,
  MessageRefusedError,
  smtpErrorCode,
  type OutgoingEmail,
} from '../../shared/services/mail/index.js';
import { SmtpProvider } from '../../shared/services/mail/smtp.js';
import { memoryLogger } from '../helpers/jobs.js';
import { startSmtpSink, type SinkMessage, type SmtpSink } from '../helpers/smtp-sink.js';

const FROM = 'no-reply@iam.test';
const base: OutgoingEmail = {
  id: 'ob_1',
  tenantId: null,
  to: 'ann@example.com',
  subject: 'Your sign-in code: 424242',
  text: 'Your code is 424242.\nIt expires in 10 minutes.',
};

async function relay(t: ExecutionContext, from = FROM): Promise<{ sink: SmtpSink; provider: SmtpProvider }> {
  const sink = await startSmtpSink();
  const provider = new SmtpProvider(sink.url, from);
  t.teardown(async () => {
    await provider.close();
    await sink.close();
  });
  return { sink, provider };
}

let seq = 0;
/**
 * Sends one message and returns it as received, after checking what every message must
 * satisfy: CRLF line breaks only, no line over RFC 5322 §2.1.1's 998 octets, US-ASCII only (so
 * the relay needs neither 8BITMIME nor SMTPUTF8).
 */
async function roundTrip(t: ExecutionContext, provider: SmtpProvider, sink: SmtpSink, over: Partial<OutgoingEmail>) {
  const id = `ob_rt${++seq}`;
  await provider.send({ ...base, ...over, id });
  const m = await sink.waitFor((x) => x.headers['message-id'] === `<${id}@iam.test>`);
  t.false(/\r(?!\n)|(?<!\r)\n/.test(m.raw), 'a bare CR or LF');
  t.true(
    m.raw.split('\r\n').every((l) => l.length <= 998),
    'a line longer than 998 octets',
  );
  t.true(/^[\t\r\n\x20-\x7e]*$/.test(m.raw), 'the message is printable US-ASCII');
  return { m, head: headOf(m) };
}

const headOf = (m: SinkMessage) => m.raw.slice(0, m.raw.indexOf('\r\n\r\n'));
/** The physical lines of one header field (the field line and its folded continuations). */
function fieldLines(head: string, name: string): string[] {
  const lines = head.split('\r\n');
  const start = lines.findIndex((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  if (start < 0) return [];
  const end = lines.findIndex((l, i) => i > start && !/^[ \t]/.test(l));
  return lines.slice(start, end < 0 ? undefined : end);
}

test('a text message: From, To, Subject, Date, Message-ID, MIME-Version, Auto-Submitted, one text part', async (t) => {
  const { sink, provider } = await relay(t);
  const { m, head } = await roundTrip(t, provider, sink, {});
  t.is(m.headers.from, FROM);
  t.is(m.headers.to, 'ann@example.com');
  t.is(m.subject, 'Your sign-in code: 424242');
  t.is(m.headers['mime-version'], '1.0');
  t.is(m.headers['auto-submitted'], 'auto-generated');
  t.regex(m.headers['content-type'], /^text\/plain; charset=utf-8$/);
  t.is(m.text, base.text);
  t.is(m.html, undefined);
  // RFC 5322 §3.3 date-time with a numeric zone (the "GMT" form is obsolete, §4.3).
  t.regex(
    head,
    new RegExp(
      '(^|\r\n)Date: (Mon|Tue|Wed|Thu|Fri|Sat|Sun), \\d\\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ' +
        '\\d{4} \\d\\d:\\d\\d:\\d\\d \\+0000\r\n',
    ),
  );
  // Line breaks in the text reach the relay as CRLF (RFC 2046 §4.1.1's canonical form).
  const body = m.raw.slice(m.raw.indexOf('\r\n\r\n') + 4);
  t.true(body.startsWith('Your code is 424242.\r\nIt expires in 10 minutes.'));
  const bare = await roundTrip(t, provider, sink, { text: 'a\rb\r\nc\nd' });
  t.is(bare.m.text, 'a\nb\nc\nd');
});

test('a long ASCII subject is folded before spaces and unfolds to the original', async (t) => {
  const { sink, provider } = await relay(t);
  const subject = `Your sign-in code  for ${'very-long-host-name.'.repeat(3)}example ${'word '.repeat(40)}end`;
  const { m, head } = await roundTrip(t, provider, sink, { subject });
  const folded = fieldLines(head, 'Subject');
  t.true(folded.length > 2, 'the subject is folded');
  t.true(
    folded.every((l) => l.length <= 78 && /\S/.test(l)),
    'lines of at most 78 characters, none white space only',
  );
  // RFC 5322 §2.2.3: unfolding removes the CRLFs and nothing else.
  t.is(folded.join('').slice('Subject: '.length), subject);
  t.is(m.subject, subject);
});

test('a non-ASCII subject becomes RFC 2047 encoded-words of whole characters and decodes back', async (t) => {
  const { sink, provider } = await relay(t);
  for (const subject of [
    'Grüße — Ihr Anmeldecode: 424242',
    '日本語のサインインコード'.repeat(5),
    `😀✓ä${'x😀'.repeat(30)}`,
  ]) {
    const { m, head } = await roundTrip(t, provider, sink, { subject });
    t.is(m.subject, subject);
    const lines = fieldLines(head, 'Subject');
    const words = [...lines.join(' ').matchAll(/=\?UTF-8\?([BQ])\?([^?]*)\?=/gi)];
    t.true(words.length > 0, subject);
    for (const [word, enc, text] of words) {
      t.true(word.length <= 75, 'RFC 2047 §2: an encoded-word is at most 75 characters');
      // §5 (3): each word holds whole characters, so it decodes on its own.
      const bytes =
        enc.toUpperCase() === 'B'
          ? Buffer.from(text, 'base64')
          : Buffer.from(
              text
                .replace(/_/g, ' ')
                .replace(/=([0-9A-F]{2})/gi, (_x, h: string) => String.fromCharCode(parseInt(h, 16))),
              'latin1',
            );
      t.true(Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes), 'a character split across encoded-words');
    }
    t.true(
      lines.filter((l) => l.includes('=?')).every((l) => l.length <= 76),
      'RFC 2047 §2: lines with encoded-words are at most 76 characters',
    );
  }
  // Plain text that merely looks like an encoded-word is not decoded into something else.
  for (const subject of ['ASCII with =?UTF-8?Q?x?= inside', `no spaces ${'y'.repeat(120)}`, '']) {
    t.is((await roundTrip(t, provider, sink, { subject })).m.subject, subject);
  }
});

test('a non-ASCII body, or a line over 998 octets, is encoded in lines of at most 76 and decodes back', async (t) => {
  const { sink, provider } = await relay(t);
  for (const text of ['Grüße,\nIhr Code ist 424242 ✓\n', `${'x'.repeat(1200)}\nshort\n`, '日本語'.repeat(200)]) {
    const { m } = await roundTrip(t, provider, sink, { text });
    t.regex(m.headers['content-transfer-encoding'], /^(base64|quoted-printable)$/);
    const body = m.raw.slice(m.raw.indexOf('\r\n\r\n') + 4);
    t.true(
      body.split('\r\n').every((l) => l.length <= 76),
      'RFC 2045 §6.7, §6.8: encoded lines are at most 76 characters',
    );
    // A single part's last line break is the SMTP terminator's (RFC 5321 §4.1.1.4).
    t.is(m.text, text.replace(/\n$/, ''));
    // In a multipart message the part keeps it.
    const multi = await roundTrip(t, provider, sink, { text, html: '<p>x</p>' });
    t.is(multi.m.text, text);
  }
});

test('with html: multipart/alternative, text/plain then text/html, a random boundary no part contains', async (t) => {
  const { sink, provider } = await relay(t);
  const html = '<p>Ihr Code: <strong>424242</strong> ✓</p>\n<p>--=_ looks like a boundary</p>';
  const { m } = await roundTrip(t, provider, sink, { html });
  const boundary = /^multipart\/alternative;\s*boundary="([^"]+)"$/.exec(m.headers['content-type'])?.[1];
  t.truthy(boundary);
  const body = m.raw.slice(m.raw.indexOf('\r\n\r\n') + 4);
  const parts = body.split(`--${boundary}`);
  // Preamble, text/plain, text/html, then the closing delimiter's "--" and the epilogue.
  t.deepEqual(
    parts.slice(1, 3).map((p) => /\r\nContent-Type: ([^;\r]+)/i.exec(p)?.[1]),
    ['text/plain', 'text/html'],
  );
  t.true(parts[3].startsWith('--'));
  t.true(parts.slice(1).every((p) => !p.includes(boundary!)));
  t.is(m.text, base.text);
  t.is(m.html, html);
  const again = await roundTrip(t, provider, sink, { html });
  t.not(again.m.headers['content-type'], m.headers['content-type'], 'a new boundary for every message');
});

test('SmtpProvider reports the Message-ID it sent; envelope, Auto-Submitted and both parts arrive', async (t) => {
  const { sink, provider } = await relay(t);
  const msg = {
    id: 'ob_mime1',
    tenantId: null,
    to: 'ann@example.com',
    subject: 'Ihr Anmeldecode: 424242 ✓',
    text: 'Ihr Code ist 424242.\n\nGrüße\n',
    html: '<p>Ihr Code ist <b>424242</b>.</p>',
  };
  const result = await provider.send(msg);
  t.deepEqual(result, { messageId: '<ob_mime1@iam.test>' }, 'the Message-ID written into the message');
  const m = await sink.waitFor((x) => x.headers['message-id'] === '<ob_mime1@iam.test>');
  t.is(m.from, FROM);
  t.deepEqual(m.to, ['ann@example.com']);
  t.is(m.headers['auto-submitted'], 'auto-generated');
  t.is(m.headers.from, FROM);
  t.is(m.headers.to, 'ann@example.com');
  t.is(m.subject, msg.subject);
  t.is(m.text, msg.text);
  t.is(m.html, msg.html);
  t.regex(m.headers['content-type'], /^multipart\/alternative;\s*boundary="/);
  // No header nodemailer would add of its own accord (X-Mailer), and one Message-ID only.
  t.deepEqual(Object.keys(m.headers).sort(), [
    'auto-submitted',
    'content-type',
    'date',
    'from',
    'message-id',
    'mime-version',
    'subject',
    'to',
  ]);
  t.is(headOf(m).match(/^Message-ID:/gim)?.length, 1);
  // A retry of the same outbox row carries the same Message-ID.
  t.deepEqual(await provider.send(msg), { messageId: '<ob_mime1@iam.test>' });
});

test('header injection and anything but a bare address are refused before anything reaches the relay', async (t) => {
  const { sink, provider } = await relay(t);
  const refused: [Partial<OutgoingEmail>, RegExp][] = [
    [{ subject: 'Your code\r\nBcc: eve@example.com' }, /Subject contains a line break/],
    [{ subject: 'Your code\nBcc: eve@example.com' }, /Subject contains a line break/],
    [{ subject: 'Your code\rBcc: eve@example.com' }, /Subject contains a line break/],
    [{ to: 'ann@example.com\r\nBcc: eve@example.com' }, /To is not a plain email address/],
    [{ to: 'Ann <ann@example.com>' }, /To is not a plain email address/],
    [{ to: 'ann@example.com, eve@example.com' }, /To is not a plain email address/],
    [{ to: 'friends: ann@example.com, eve@example.com;' }, /To is not a plain email address/],
    [{ to: 'ann @example.com' }, /To is not a plain email address/],
    [{ to: 'ann' }, /To is not a plain email address/],
    [{ id: 'ob_1>\r\nBcc: eve@example.com' }, /Message-ID/],
    [{ id: 'ob 1' }, /Message-ID/],
  ];
  for (const [over, message] of refused) {
    const e = await t.throwsAsync(provider.send({ ...base, ...over }), { message, instanceOf: MessageRefusedError });
    t.is(smtpErrorCode(e), 'message_refused');
  }
  // The sender is checked too (IAM_MAIL_FROM is validated at start-up; this is the backstop).
  const named = new SmtpProvider(sink.url, 'IAM <no-reply@iam.test>');
  t.teardown(() => named.close());
  await t.throwsAsync(named.send(base), { message: /From is not a plain email address/ });
  // The refusal does not repeat the value, which may hold a login code.
  const e = await t.throwsAsync(provider.send({ ...base, subject: 'code 424242\r\n' }));
  t.notRegex(e.message, /424242/);
  t.is(sink.messages.length, 0);
});

test('a refused message is a failed send: the next provider in the order takes it', async (t) => {
  const sink = await startSmtpSink();
  t.teardown(() => sink.close());
  const { logger, lines } = memoryLogger();
  const mail = createEmailProviders({ smtpUrl: sink.url, mailFrom: FROM }, logger);
  t.teardown(() => mail.close());
  const r = await mail.send(['smtp', 'log'], { ...base, subject: 'Your code\r\nBcc: eve@example.com' });
  t.is(r.via, 'log');
  t.is(r.failures[0].provider, 'smtp');
  t.is(r.failures[0].code, 'message_refused');
  t.true(lines.some((l) => l.msg === 'mail written to the log (log provider)'));
  const e = await t.throwsAsync(mail.send(['smtp'], { ...base, to: 'Ann <ann@example.com>' }), {
    instanceOf: MailDeliveryError,
  });
  t.deepEqual(deliveryFailure(e), {
    code: 'message_refused',
    cause: 'smtp: cannot send mail: To is not a plain email address',
  });
  t.is(sink.messages.length, 0);
});

test('SMTP failures are named by error code', (t) => {
  const err = (props: Record<string, unknown>) => Object.assign(new Error('x'), props);
  t.is(smtpErrorCode(err({ code: 'ECONNREFUSED' })), 'smtp_refused');
  t.is(smtpErrorCode(err({ code: 'EDNS' })), 'smtp_unreachable');
  t.is(smtpErrorCode(err({ code: 'ENOTFOUND' })), 'smtp_unreachable');
  t.is(smtpErrorCode(err({ code: 'ETIMEDOUT' })), 'smtp_timeout');
  t.is(smtpErrorCode(err({ code: 'ECONNECTION' })), 'smtp_connection_lost');
  t.is(smtpErrorCode(err({ code: 'ETLS' })), 'smtp_tls');
  t.is(smtpErrorCode(err({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' })), 'smtp_tls');
  t.is(smtpErrorCode(err({ code: 'EAUTH', responseCode: 535 })), 'smtp_auth');
  t.is(smtpErrorCode(err({ code: 'ENOAUTH' })), 'smtp_auth');
  t.is(smtpErrorCode(err({ code: 'EENVELOPE', responseCode: 550 })), 'smtp_rejected');
  t.is(smtpErrorCode(err({ code: 'EMESSAGE', responseCode: 451 })), 'smtp_rejected');
  t.is(smtpErrorCode(err({ code: 'EPROTOCOL', responseCode: 554 })), 'smtp_rejected');
  t.is(smtpErrorCode(err({ code: 'EPROTOCOL' })), 'smtp_error');
  t.is(smtpErrorCode(new Error('something else')), 'smtp_error');
});

test('an SMTP relay that is not listening: smtp_refused, with the system error named in the cause', async (t) => {
  const { freePort } = await import('../helpers/daemon.js');
  const port = await freePort();
  const mail = createEmailProviders(
    { smtpUrl: `smtp://user:pw-secret@127.0.0.1:${port}`, mailFrom: FROM },
    memoryLogger().logger,
  );
  t.teardown(() => mail.close());
  const e = await t.throwsAsync(mail.send(['smtp'], base), { instanceOf: MailDeliveryError });
  const { code, cause } = deliveryFailure(e);
  t.is(code, 'smtp_refused');
  t.regex(cause, /^smtp: connection refused \(ECONNREFUSED\)/);
  t.false(cause.includes('pw-secret'));
  // Not configured at all: the provider is unavailable.
  const none = createEmailProviders({ smtpUrl: undefined, mailFrom: FROM }, memoryLogger().logger);
  const e2 = await t.throwsAsync(none.send(['smtp'], base), { instanceOf: MailDeliveryError });
  t.is(deliveryFailure(e2).code, 'provider_unavailable');
  t.is(deliveryFailure(new MailDeliveryError([])).code, 'provider_unavailable');
});
