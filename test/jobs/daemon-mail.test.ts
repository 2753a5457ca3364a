/**
 * Mail through the real daemon process: a sign-in code mail, composed by nodemailer, carries
 * the code; nothing committed is lost when no daemon runs or when one is killed mid-delivery,
 * and each message still reaches the SMTP server exactly once; the tenant's provider order set
 * over the admin API decides where mail goes.
 */
import test from 'ava';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Outbox } from '../../shared/services/outbox.js';
import { testDatabase } from '../helpers/db.js';
import { freePort, startDaemon } from '../helpers/daemon.js';
import { outboxRow, sleep } from '../helpers/jobs.js';
import { postJson, seedApp } from '../helpers/oauth.js';
import { clientCredentialsToken, openServices, seed } from '../helpers/seed.js';
import { startSmtpSink } from '../helpers/smtp-sink.js';
import { until } from '../helpers/poll.js';

/** Writes one committed outbox mail from outside any daemon, as a request would have. */
async function enqueueFromOutside(
  url: string,
  dir: string,
  tenantId: string,
  subject: string,
  text = 'Your code is 246810',
) {
  const { ds, config } = await openServices(url, dir);
  try {
    return await ds.transaction((em) =>
      new Outbox(ds, config.secretKey).enqueueEmail(em, { tenantId, to: 'bob@example.com', subject, text }),
    );
  } finally {
    await ds.destroy();
  }
}

test('a sign-in code mail composed by nodemailer carries the code in its text and HTML parts', async (t) => {
  const db = await testDatabase(t);
  const app = await seedApp(db.url, db.dir);
  const sink = await startSmtpSink();
  t.teardown(() => sink.close());
  const d = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url });
  t.teardown(() => d.stop());

  const send = await postJson(`${d.url}/api/v1/auth/direct/email-code/send`, {
    client_id: app.web.clientId,
    email: app.user.email,
  });
  t.is(send.status, 200);
  const m = await sink.waitFor((x) => x.to.includes(app.user.email), 15_000);

  // Both parts decoded from what the relay received; each carries the same six-digit code.
  t.regex(m.headers['content-type'], /^multipart\/alternative;/);
  const inText = /\b(\d{6})\b/.exec(m.text)?.[1];
  const inHtml = /<strong>(\d{6})<\/strong>/.exec(m.html ?? '')?.[1];
  t.truthy(inText, m.text);
  t.is(inHtml, inText);
  t.is(/\b(\d{6})\b/.exec(m.subject)?.[1], inText);
  t.regex(m.text, new RegExp(`Your sign-in code for [^ ]+ is ${inText}\\.`));
  t.is(m.headers['auto-submitted'], 'auto-generated');
  t.regex(m.headers['message-id'], /^<mail_[A-Za-z0-9_-]+@/);

  // And it is the code the service issued: it signs the user in.
  const verify = await postJson(`${d.url}/api/v1/auth/direct/email-code/verify`, {
    client_id: app.web.clientId,
    email: app.user.email,
    code: inText,
  });
  t.is(verify.status, 200, await verify.text());
});

test('a mail committed while no daemon ran is delivered by the next daemon, exactly once', async (t) => {
  const db = await testDatabase(t);
  const s = await seed(db.url, db.dir);
  // The daemon that would have sent it crashed right after the commit: no daemon runs now.
  const id = await enqueueFromOutside(db.url, db.dir, s.tenantId, 'left behind');
  const sink = await startSmtpSink();
  t.teardown(() => sink.close());
  const d = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url });
  t.teardown(() => d.stop());
  const m = await sink.waitFor((x) => x.subject === 'left behind', 15_000);
  t.is(m.text, 'Your code is 246810');
  t.deepEqual(m.to, ['bob@example.com']);

  const { ds } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  t.true(await until(async () => (await outboxRow(ds, id))?.status === 'delivered'));
  // A window in which a duplicate must NOT come (at least one more periodic tick): nothing to await.
  await sleep(2500);
  t.is(sink.messages.filter((x) => x.subject === 'left behind').length, 1);
  t.is(await d.stop(), 0);
});

test('a daemon killed while delivering: the next one delivers the message once after the claim expires', async (t) => {
  const db = await testDatabase(t);
  const s = await seed(db.url, db.dir);
  // A relay that accepts the connection and then says nothing: the first daemon's delivery hangs.
  const held: Socket[] = [];
  const stall = createServer((sock) => {
    held.push(sock);
  });
  await new Promise<void>((r) => stall.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => {
    for (const x of held) x.destroy();
    stall.close();
  });
  const stallPort = (stall.address() as AddressInfo).port;

  const first = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: `smtp://127.0.0.1:${stallPort}` });
  t.teardown(() => first.stop('SIGKILL'));
  const id = await enqueueFromOutside(db.url, db.dir, s.tenantId, 'interrupted');
  const { ds } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  t.true(
    await until(async () => (await outboxRow(ds, id))?.status === 'sending', {
      what: 'the first daemon never claimed the row',
    }),
  );
  const claimed = (await outboxRow(ds, id))!;
  t.truthy(claimed.claimed_by);
  await first.stop('SIGKILL');

  // The claim protects the row for claimMs (a minute); let that time pass without waiting it out.
  await ds.query('UPDATE outbox SET claimed_until = ?, next_attempt_at = ? WHERE id = ?', [
    Date.now() - 1,
    Date.now() - 1,
    id,
  ]);
  const sink = await startSmtpSink();
  t.teardown(() => sink.close());
  const second = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url });
  t.teardown(() => second.stop());
  await sink.waitFor((x) => x.subject === 'interrupted', 15_000);
  t.true(await until(async () => (await outboxRow(ds, id))?.status === 'delivered'));
  const row = (await outboxRow(ds, id))!;
  t.is(row.delivered_via, 'smtp');
  t.is(row.attempts, 2, 'the killed attempt counts');
  t.not(row.claimed_by, claimed.claimed_by);
  // A window in which a duplicate must NOT come (a periodic tick or more): nothing to await.
  await sleep(2500);
  t.is(sink.messages.filter((x) => x.subject === 'interrupted').length, 1);
});

test('SMTP down: with the order [smtp, log] set over the admin API, the daemon writes mail to its log', async (t) => {
  const db = await testDatabase(t);
  const s = await seed(db.url, db.dir);
  const deadPort = await freePort();
  const d = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: `smtp://127.0.0.1:${deadPort}` });
  t.teardown(() => d.stop());
  const token = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  const r = await fetch(`${d.url}/api/admin/tenants/${s.tenantId}/email-settings`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ strategy: 'priority_failover', providerOrder: ['smtp', 'log'] }),
  });
  t.is(r.status, 200);

  const id = await enqueueFromOutside(db.url, db.dir, s.tenantId, 'via the log', 'Your code is 135790');
  t.true(
    await until(() => d.logs.some((l) => l.msg === 'mail written to the log (log provider)'), {
      what: () => d.output(),
    }),
  );
  const line = d.logs.find((l) => l.msg === 'mail written to the log (log provider)') as {
    mail: Record<string, string>;
  };
  t.is(line.mail.id, id);
  t.is(line.mail.text, 'Your code is 135790');
  const { ds } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  t.true(await until(async () => (await outboxRow(ds, id))?.delivered_via === 'log'));

  // And with [smtp] only, the same outage means retries, never the log.
  await fetch(`${d.url}/api/admin/tenants/${s.tenantId}/email-settings`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ strategy: 'priority_failover', providerOrder: ['smtp'] }),
  });
  const id2 = await enqueueFromOutside(db.url, db.dir, s.tenantId, 'smtp only');
  t.true(
    await until(
      async () => ((await outboxRow(ds, id2))?.attempts ?? 0) >= 1 && (await outboxRow(ds, id2))?.status === 'pending',
    ),
  );
  t.false(d.logs.some((l) => (l.mail as { id?: string } | undefined)?.id === id2));
});
