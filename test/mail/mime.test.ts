/**
 * The message composer the SMTP provider sends with (shared/services/mail/mime.ts): structure,
 * RFC 2047 subjects, transfer encodings, line limits, multipart boundaries and refusal of header
 * injection; then a message through SmtpProvider to a real SMTP server. Messages are decoded
 * with the SMTP sink's small MIME reader (mailparser does not install here).
 */
import test, { type ExecutionContext } from 'ava';
import { composeMessage, type MessageInput } from '../../shared/services/mail/mime.js';
import { SmtpProvider } from '../../shared/services/mail/smtp.js';
import { parseMessage, startSmtpSink } from '../helpers/smtp-sink.js';

const base: MessageInput = {
  from: 'no-reply@iam.test',
  to: 'ann@example.com',
  subject: 'Your sign-in code: 424242',
  text: 'Your code is 424242.\nIt expires in 10 minutes.\n',
  messageId: '<ob_1@iam.test>',
  date: new Date(Date.UTC(2026, 10, 22, 18, 50, 13)),
  headers: { 'Auto-Submitted': 'auto-generated' },
};

/** Composes, checks what every message must satisfy (CRLF only, RFC 5322 §2.1.1 line limit), and parses. */
function compose(t: ExecutionContext, over: Partial<MessageInput> = {}) {
  const raw = composeMessage({ ...base, ...over });
  t.false(/\r(?!\n)|(?<!\r)\n/.test(raw), 'a bare CR or LF');
  t.true(
    raw.split('\r\n').every((l) => l.length <= 998),
    'a line longer than 998 octets',
  );
  t.true(/^[\x00-\x7f]*$/.test(raw), 'the message is US-ASCII');
  const [head] = raw.split('\r\n\r\n');
  return { raw, head: head, parsed: parseMessage(raw) };
}

test('an ASCII message: header fields in order, one text/plain part in 7bit with CRLF line breaks', (t) => {
  const { raw } = compose(t);
  t.is(
    raw,
    [
      'From: no-reply@iam.test',
      'To: ann@example.com',
      'Subject: Your sign-in code: 424242',
      'Date: Sun, 22 Nov 2026 18:50:13 +0000',
      'Message-ID: <ob_1@iam.test>',
      'MIME-Version: 1.0',
      'Auto-Submitted: auto-generated',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: 7bit',
      '',
      'Your code is 424242.',
      'It expires in 10 minutes.',
      '',
    ].join('\r\n'),
  );
  t.regex(
    compose(t, { date: undefined }).head,
    /\r\nDate: (Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d \+0000\r\n/,
  );
});

test('a long ASCII subject is folded before spaces and unfolds to the original', (t) => {
  const subject = `Your sign-in code  for ${'very-long-host-name.'.repeat(3)}example ${'word '.repeat(40)}end`;
  const { head, parsed } = compose(t, { subject });
  const lines = head.split('\r\n');
  const start = lines.findIndex((l) => l.startsWith('Subject:'));
  const folded = lines.slice(
    start,
    lines.findIndex((l, i) => i > start && !l.startsWith(' ')),
  );
  t.true(folded.length > 2, 'the subject is folded');
  t.true(
    folded.every((l) => l.length <= 78 && /\S/.test(l)),
    'lines of at most 78 characters, none white space only',
  );
  t.is(folded.join('').slice('Subject: '.length), subject);
  t.is(parsed.subject, subject);
});

test('a non-ASCII subject becomes RFC 2047 encoded-words of whole characters and decodes back', (t) => {
  for (const subject of [
    'Grüße — Ihr Anmeldecode: 424242',
    '日本語のサインインコード'.repeat(5),
    `😀✓ä${'x😀'.repeat(30)}`,
    'ASCII with =?UTF-8?Q?x?= inside',
    `no spaces ${'y'.repeat(120)}`,
  ]) {
    const { head, parsed } = compose(t, { subject });
    t.is(parsed.subject, subject);
    const words = [...head.matchAll(/=\?UTF-8\?B\?([A-Za-z0-9+/=]*)\?=/g)];
    t.true(words.length > 0, subject);
    for (const [word, b64] of words) {
      t.true(word.length <= 75, 'RFC 2047 §2: an encoded-word is at most 75 characters');
      // §5 (3): each word holds whole characters, so it decodes on its own.
      const bytes = Buffer.from(b64, 'base64');
      t.true(Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes), 'a character split across encoded-words');
    }
    t.true(
      head
        .split('\r\n')
        .filter((l) => l.includes('=?'))
        .every((l) => l.length <= 76),
      'RFC 2047 §2: lines with encoded-words are at most 76 characters',
    );
  }
  t.is(compose(t, { subject: '' }).parsed.subject, '');
});

test('a non-ASCII body, or one with a line over 998 octets, is base64 in 76-character lines and decodes to the original', (t) => {
  for (const text of ['Grüße,\nIhr Code ist 424242 ✓\n', `${'x'.repeat(1200)}\nshort\n`, '日本語'.repeat(200)]) {
    const { raw, parsed } = compose(t, { text });
    t.regex(raw, /\r\nContent-Transfer-Encoding: base64\r\n/);
    const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
    t.true(body.split('\r\n').every((l) => l.length <= 76 && /^[A-Za-z0-9+/=]*$/.test(l)));
    t.is(
      Buffer.from(body, 'base64').toString('utf8'),
      text.replace(/\n/g, '\r\n'),
      'text is sent in canonical CRLF form',
    );
    t.is(parsed.text, text);
  }
  // Bare CRs and CRLFs already there end up as CRLF, in 7bit.
  t.true(compose(t, { text: 'a\rb\r\nc\n' }).raw.endsWith('\r\n\r\na\r\nb\r\nc\r\n'));
});

test('with html: multipart/alternative, text/plain then text/html, and a random boundary that no part contains', (t) => {
  const html = '<p>Ihr Code: <strong>424242</strong> ✓</p>\n<p>--=_ looks like a boundary</p>';
  const { raw, head, parsed } = compose(t, { html });
  const boundary = /\r\nContent-Type: multipart\/alternative; boundary="([^"]+)"$/.exec(head)?.[1];
  t.truthy(boundary);
  t.regex(boundary!, /^=_[A-Za-z0-9_-]{32}$/);
  const body = raw.slice(head.length + 4);
  const parts = body.split(new RegExp(`(?:^|\\r\\n)--${boundary}(?:--)?\\r\\n`));
  t.deepEqual(
    parts.map((p) => p.split('\r\n')[0]),
    ['', 'Content-Type: text/plain; charset=utf-8', 'Content-Type: text/html; charset=utf-8', ''],
  );
  t.true(parts.every((p) => !p.includes(boundary!)));
  t.regex(parts[1], /^Content-Type: text\/plain; charset=utf-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\n/);
  t.regex(parts[2], /^Content-Type: text\/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n/);
  t.is(parsed.text, base.text);
  t.is(parsed.html, html);
  t.not(compose(t, { html }).head, head, 'a new boundary for every message');
});

test('header injection and anything but a bare address are refused', (t) => {
  const refused: [Partial<MessageInput>, RegExp][] = [
    [{ subject: 'Your code\r\nBcc: eve@example.com' }, /Subject contains a line break/],
    [{ subject: 'Your code\nBcc: eve@example.com' }, /Subject contains a line break/],
    [{ to: 'ann@example.com\r\nBcc: eve@example.com' }, /To is not a plain email address/],
    [{ to: 'Ann <ann@example.com>' }, /To is not a plain email address/],
    [{ to: 'ann @example.com' }, /To is not a plain email address/],
    [{ to: 'ann' }, /To is not a plain email address/],
    [{ from: 'IAM <no-reply@iam.test>' }, /From is not a plain email address/],
    [{ messageId: '<ob_1@iam.test>\r\nBcc: eve@example.com' }, /Message-ID/],
    [{ messageId: 'ob_1@iam.test' }, /Message-ID/],
    [
      { headers: { 'Auto-Submitted': 'auto-generated\r\nBcc: eve@example.com' } },
      /Auto-Submitted contains a line break/,
    ],
    [{ headers: { 'X-Evil: yes\r\nBcc': 'eve@example.com' } }, /header field name/],
    [{ headers: { 'X-Note': 'Grüße' } }, /X-Note is not printable ASCII/],
    [{ headers: { bcc: 'eve@example.com', to: 'eve@example.com' } }, /to is written by the composer/],
    [{ headers: { 'X-Long': 'x'.repeat(1000) } }, /longer than 998/],
  ];
  for (const [over, message] of refused)
    t.throws(() => composeMessage({ ...base, ...over }), { message }, JSON.stringify(over));
  // The refusal does not repeat the value, which may hold a login code.
  t.notRegex(t.throws(() => composeMessage({ ...base, subject: 'code 424242\r\n' })).message, /424242/);
});

test('SmtpProvider sends the composed message to a real SMTP server: envelope, Message-ID, Auto-Submitted, both parts', async (t) => {
  const sink = await startSmtpSink();
  const provider = new SmtpProvider(sink.url, 'no-reply@iam.test');
  t.teardown(async () => {
    await provider.close();
    await sink.close();
  });
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
  t.is(m.from, 'no-reply@iam.test');
  t.deepEqual(m.to, ['ann@example.com']);
  t.is(m.headers['auto-submitted'], 'auto-generated');
  t.is(m.headers.from, 'no-reply@iam.test');
  t.is(m.headers.to, 'ann@example.com');
  t.is(m.subject, msg.subject);
  t.is(m.text, msg.text);
  t.is(m.html, msg.html);
  t.regex(m.headers['content-type'], /^multipart\/alternative; boundary="=_/);
  // nodemailer sends the raw message as it is: no header of its own (X-Mailer, a second Message-ID).
  t.deepEqual(Object.keys(m.headers), [
    'from',
    'to',
    'subject',
    'date',
    'message-id',
    'mime-version',
    'auto-submitted',
    'content-type',
  ]);

  // A recipient that would inject a header is refused before anything reaches the relay.
  await t.throwsAsync(provider.send({ ...msg, id: 'ob_mime2', to: 'ann@example.com\r\nBcc: eve@example.com' }), {
    message: /To is not a plain email address/,
  });
  t.is(sink.messages.length, 1);
});
