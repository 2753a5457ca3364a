/**
 * The SMTP sink other tests rely on: what nodemailer encodes, it decodes; it refuses on request.
 */
import test from 'ava';
import nodemailer from 'nodemailer';
import { decodeHeader, decodeQuotedPrintable, startSmtpSink } from './smtp-sink.js';

test('decodes quoted-printable, base64, multipart/alternative and encoded-word subjects as nodemailer writes them', async (t) => {
  const sink = await startSmtpSink();
  const transport = nodemailer.createTransport({ url: sink.url });
  t.teardown(async () => {
    transport.close();
    await sink.close();
  });
  const long = `Line with a long tail ${'x'.repeat(200)}`;
  const cases = [
    { subject: 'Grüße — your code ✓', text: `Code: 123456\n${long}\nÄÖÜ = equals` }, // quoted-printable
    { subject: 'Base64 body', text: '日本語のテキスト'.repeat(12) }, // base64
    { subject: 'Both parts', text: 'hello\n.\n..dots', html: '<p>Hi ✓</p>' }, // multipart/alternative
  ];
  for (const c of cases) await transport.sendMail({ from: 'no-reply@iam.test', to: 'ann@example.com', ...c });
  t.is(sink.messages.length, 3);
  for (const [i, c] of cases.entries()) {
    const m = sink.messages[i];
    t.is(m.subject, c.subject);
    t.is(m.text, c.text);
    t.is(m.html, c.html);
    t.is(m.from, 'no-reply@iam.test');
    t.deepEqual(m.to, ['ann@example.com']);
  }
  t.regex(sink.messages[0].headers['content-transfer-encoding'], /quoted-printable/);
  t.regex(sink.messages[1].headers['content-transfer-encoding'], /base64/);
  t.regex(sink.messages[2].headers['content-type'], /multipart\/alternative/);
});

test('waitFor returns a message already received or still to come, and times out with what it saw', async (t) => {
  const sink = await startSmtpSink();
  const transport = nodemailer.createTransport({ url: sink.url });
  t.teardown(async () => {
    transport.close();
    await sink.close();
  });
  await transport.sendMail({ from: 'a@iam.test', to: 'b@example.com', subject: 'first', text: '1' });
  t.is((await sink.waitFor((m) => m.subject === 'first')).text, '1');
  const later = sink.waitFor((m) => m.subject === 'second');
  await transport.sendMail({ from: 'a@iam.test', to: 'b@example.com', subject: 'second', text: '2' });
  t.is((await later).text, '2');
  await t.throwsAsync(
    sink.waitFor((m) => m.subject === 'never', 200),
    { message: /no matching message.*first/ },
  );
});

test('reject mode refuses with 451 or 550 and keeps nothing; it can be switched off', async (t) => {
  const sink = await startSmtpSink({ reject: 'temporary' });
  const transport = nodemailer.createTransport({ url: sink.url });
  t.teardown(async () => {
    transport.close();
    await sink.close();
  });
  const send = () => transport.sendMail({ from: 'a@iam.test', to: 'b@example.com', subject: 's', text: 't' });
  await t.throwsAsync(send(), { message: /451/ });
  sink.setReject('permanent');
  await t.throwsAsync(send(), { message: /550/ });
  t.is(sink.rejected(), 2);
  t.is(sink.messages.length, 0);
  sink.setReject(false);
  await send();
  t.is(sink.messages.length, 1);
});

test('header and body decoders', (t) => {
  t.is(decodeHeader('=?UTF-8?Q?Gr=C3=BC=C3=9Fe_Welt?= =?UTF-8?B?4pyT?='), 'Grüße Welt✓');
  t.is(decodeQuotedPrintable('a=3Db=\r\nc').toString(), 'a=bc');
});
