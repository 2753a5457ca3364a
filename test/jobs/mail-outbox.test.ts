/**
 * The outbox and its deliverer, in process, against a real SMTP server (test/helpers/smtp-sink)
 * and the real database (SQLite, or MariaDB in its lane): transactional enqueue, sealing at
 * rest, delivery, provider failover, retries with backoff, `failed` after the last attempt,
 * one-winner claims between daemons, and takeover of a dead daemon's claims.
 */
import test from 'ava';
import { backoffMs, MailDeliverer, type MailOutboxOptions } from '../../daemon/jobs/mail-outbox.js';
import { Scheduler } from '../../daemon/jobs/scheduler.js';
import { all } from '../../shared/db/sql.js';
import { EmailSettingsService } from '../../shared/services/email-settings.js';
import {
  createEmailProviders,
  deliveryFailure,
  EmailProviders,
  MailDeliveryError,
  smtpErrorCode,
  type EmailProvider,
} from '../../shared/services/mail/index.js';
import { Outbox } from '../../shared/services/outbox.js';
import { testDatabase } from '../helpers/db.js';
import { freePort } from '../helpers/daemon.js';
import { memoryLogger, openJobsDs, openWithJobs, outboxRow, sleep } from '../helpers/jobs.js';
import { activeTenant } from '../helpers/seed.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { until } from '../helpers/poll.js';

const FROM = 'no-reply@iam.test';
const FAST: Partial<MailOutboxOptions> = { backoffBaseMs: 300, backoffMaxMs: 1000, maxAttempts: 4, claimMs: 5_000 };
const actor = { type: 'system' as const, id: 'test' };

async function setup(
  t: import('ava').ExecutionContext,
  smtpUrl: string | undefined,
  opts: Partial<MailOutboxOptions> = FAST,
) {
  const db = await testDatabase(t);
  const env = await openWithJobs(db.url, db.dir);
  const { logger, lines } = memoryLogger();
  const mail = createEmailProviders({ smtpUrl, mailFrom: FROM }, logger);
  const outbox = new Outbox(env.ds, env.config.secretKey);
  const deliverer = new MailDeliverer(env.jobsDs, outbox, mail, logger, `test-host:${process.pid}:a`, opts);
  const tenant = await activeTenant(env.provisioning, { name: 'Mail tenant' }, actor);
  const settings = new EmailSettingsService(env.ds, mail);
  t.teardown(async () => {
    await mail.close();
    await env.close();
  });
  const enqueue = (subject: string, text = 'Your code is 424242', tenantId = tenant.id) =>
    env.ds.transaction((em) => outbox.enqueueEmail(em, { tenantId, to: 'ann@example.com', subject, text }));
  /** Drains until `pred` holds for the row, as the periodic tick would. */
  const drainUntil = async (
    id: string,
    pred: (r: NonNullable<Awaited<ReturnType<typeof outboxRow>>>) => boolean,
    timeoutMs = 20_000,
  ) =>
    until(
      async () => {
        await deliverer.drain();
        const r = await outboxRow(env.ds, id);
        return !!r && pred(r);
      },
      { timeoutMs, intervalMs: 100 },
    );
  return { db, env, logger, lines, mail, outbox, deliverer, tenant, settings, enqueue, drainUntil };
}

async function sink(
  t: import('ava').ExecutionContext,
  opts: Parameters<typeof startSmtpSink>[0] = {},
): Promise<SmtpSink> {
  const s = await startSmtpSink(opts);
  t.teardown(() => s.close());
  return s;
}

test('a mail enqueued in a transaction that rolls back is never sent', async (t) => {
  const s = await sink(t);
  const { env, outbox, deliverer, tenant, enqueue } = await setup(t, s.url);
  let insideId = '';
  await t.throwsAsync(
    env.ds.transaction(async (em) => {
      insideId = await outbox.enqueueEmail(em, {
        tenantId: tenant.id,
        to: 'ann@example.com',
        subject: 'rolled back',
        text: 'Your code is 111111',
      });
      // The deliverer runs while the transaction is still open: it must not see the row.
      outbox.kick();
      await deliverer.drain();
      throw new Error('the caller fails after enqueueing');
    }),
    { message: /caller fails/ },
  );
  // A committed mail afterwards goes out, so the deliverer was working all along.
  const marker = await enqueue('committed marker');
  await deliverer.drain();
  await s.waitFor((m) => m.subject === 'committed marker');
  await deliverer.drain();
  t.false(s.messages.some((m) => m.subject === 'rolled back'));
  t.is(await outboxRow(env.ds, insideId), undefined);
  t.is((await outboxRow(env.ds, marker))?.status, 'delivered');
});

test('an enqueued mail is sealed at rest and delivered to the SMTP server; the payload is erased after', async (t) => {
  const s = await sink(t);
  const { env, deliverer, enqueue } = await setup(t, s.url);
  const id = await enqueue('Your sign-in code', 'Your code is 424242\nIt expires in 10 minutes.');
  const stored = await outboxRow(env.ds, id);
  t.is(stored?.status, 'pending');
  t.false(stored!.payload_sealed.includes('424242'), 'the login code sits in the database in the clear');
  t.false(stored!.payload_sealed.includes('ann@example.com'));

  await deliverer.drain();
  const m = await s.waitFor((x) => x.subject === 'Your sign-in code');
  t.deepEqual(m.to, ['ann@example.com']);
  t.is(m.from, FROM);
  t.is(m.text, 'Your code is 424242\nIt expires in 10 minutes.');
  t.is(m.headers['message-id'], `<${id}@iam.test>`, 'the Message-ID is derived from the outbox id');
  t.is(m.headers['auto-submitted'], 'auto-generated');
  const row = await outboxRow(env.ds, id);
  t.is(row?.status, 'delivered');
  t.is(row?.delivered_via, 'smtp');
  t.is(row?.attempts, 1);
  t.is(row?.payload_sealed, '');
  t.is(row?.claimed_by, null);
});

test('a sealed payload moved to another row does not open, and the row fails instead of sending', async (t) => {
  const s = await sink(t);
  const { env, enqueue, drainUntil } = await setup(t, s.url);
  const a = await enqueue('first');
  const b = await enqueue('second');
  const [rowA] = await all<{ payload_sealed: string }>(env.ds, 'SELECT payload_sealed FROM outbox WHERE id = ?', [a]);
  await env.ds.query('UPDATE outbox SET payload_sealed = ? WHERE id = ?', [rowA.payload_sealed, b]);
  t.true(await drainUntil(b, (r) => r.status === 'failed'));
  t.regex((await outboxRow(env.ds, b))!.last_error!, /cannot be opened/);
  t.is((await outboxRow(env.ds, b))!.last_error_code, 'payload_unreadable');
  t.is(s.messages.filter((m) => m.subject === 'first').length, 1);
});

test('kick() after commit delivers at once, without waiting for a scheduled tick', async (t) => {
  const s = await sink(t);
  const { env, logger, outbox, deliverer, enqueue } = await setup(t, s.url);
  // The job never fires by schedule here; only the kick can start it.
  const scheduler = new Scheduler(env.jobsDs, logger, { holder: 'kick-test' });
  scheduler.register({
    name: 'mail-outbox',
    schedule: '0 0 0 1 1 *',
    lease: false,
    run: async (signal) => {
      await deliverer.drain(signal);
    },
  });
  const off = outbox.onKick(() => {
    void scheduler.trigger('mail-outbox');
  });
  scheduler.start();
  t.teardown(async () => {
    off();
    await scheduler.stop();
  });
  const ids = [await enqueue('kicked 1'), await enqueue('kicked 2')];
  outbox.kick();
  outbox.kick();
  await s.waitFor((m) => m.subject === 'kicked 2', 10_000);
  await s.waitFor((m) => m.subject === 'kicked 1', 10_000);
  // The relay has them; the outcome is recorded right after.
  t.true(
    await until(async () =>
      (await Promise.all(ids.map((id) => outboxRow(env.ds, id)))).every((r) => r?.status === 'delivered'),
    ),
  );
});

test("SMTP down: the message falls through to the log provider when the tenant's order says so", async (t) => {
  const deadPort = await freePort();
  const { env, lines, tenant, settings, enqueue, drainUntil } = await setup(t, `smtp://127.0.0.1:${deadPort}`);
  await settings.update(tenant.id, { strategy: 'priority_failover', providerOrder: ['smtp', 'log'] }, actor);
  const id = await enqueue('fallback please', 'Your code is 737373');
  t.true(await drainUntil(id, (r) => r.status === 'delivered'));
  const row = await outboxRow(env.ds, id);
  t.is(row?.delivered_via, 'log');
  t.is(row?.attempts, 1, 'the fallback happened within one attempt');
  const logged = lines.find((l) => l.msg === 'mail written to the log (log provider)' && l.mail?.id === id);
  t.is(logged?.mail.text, 'Your code is 737373');
  t.is(logged?.mail.to, 'ann@example.com');
  t.true(lines.some((l) => l.msg === 'mail delivered through a fallback provider'));
});

test('SMTP down with order [smtp]: retried with backoff, then delivered once the server is back', async (t) => {
  const port = await freePort();
  // Credentials in the URL must never reach last_error.
  const { env, lines, tenant, settings, enqueue, drainUntil } = await setup(
    t,
    `smtp://mailer:hunter2-secret@127.0.0.1:${port}`,
    { ...FAST, maxAttempts: 50 },
  );
  await settings.update(tenant.id, { strategy: 'priority_failover', providerOrder: ['smtp'] }, actor);
  const id = await enqueue('retry me', 'Your code is 989898');

  t.true(await drainUntil(id, (r) => r.attempts >= 2));
  const failing = await outboxRow(env.ds, id);
  t.is(failing?.status, 'pending');
  t.is(failing?.delivered_via, null);
  t.truthy(failing?.last_error);
  t.regex(failing!.last_error!, /^smtp: /);
  t.regex(failing!.last_error!, /ECONNREFUSED|connect/i);
  t.is(failing?.last_error_code, 'smtp_refused');
  for (const secret of ['989898', 'hunter2-secret', 'ann@example.com'])
    t.false(failing!.last_error!.includes(secret), `last_error leaks ${secret}`);
  // Backed off: the next attempt is scheduled later than the failure was recorded.
  t.true(failing!.next_attempt_at > failing!.updated_at, 'no backoff before the retry');
  t.false(
    lines.some((l) => l.msg === 'mail written to the log (log provider)'),
    'the tenant did not ask for the log',
  );
  t.true(lines.some((l) => l.msg === 'mail delivery failed; will retry' && !JSON.stringify(l).includes('hunter2')));

  const s = await sink(t, { port, auth: true });
  t.true(await drainUntil(id, (r) => r.status === 'delivered'));
  const m = await s.waitFor((x) => x.subject === 'retry me');
  t.is(m.text, 'Your code is 989898');
  t.is((await outboxRow(env.ds, id))?.delivered_via, 'smtp');
  // A window in which a second copy must NOT arrive: nothing to await.
  await sleep(300);
  t.is(s.messages.filter((x) => x.subject === 'retry me').length, 1);
});

test('a relay that refuses the message: retried, and marked failed after the last attempt', async (t) => {
  const s = await sink(t, { reject: 'temporary' });
  const { env, lines, deliverer, tenant, settings, enqueue, drainUntil } = await setup(t, s.url, {
    ...FAST,
    maxAttempts: 3,
  });
  await settings.update(tenant.id, { strategy: 'priority_failover', providerOrder: ['smtp'] }, actor);
  const id = await enqueue('doomed', 'Your code is 313131');
  t.true(await drainUntil(id, (r) => r.status === 'failed'));
  const row = await outboxRow(env.ds, id);
  t.is(row?.attempts, 3);
  t.regex(row!.last_error!, /451/);
  t.is(row?.last_error_code, 'smtp_rejected');
  t.false(row!.last_error!.includes('313131'));
  t.is(s.rejected(), 3, 'one delivery attempt per outbox attempt');
  t.is(s.messages.length, 0);
  t.true(lines.some((l) => l.msg === 'mail delivery failed permanently' && l.outboxId === id));
  // Failed is final: later drains leave it alone, even with the relay accepting again.
  s.setReject(false);
  // A clock to pass: past the retry backoff, a row that were not final would be due again.
  await sleep(1200);
  await deliverer.drain();
  t.is(s.messages.length, 0);
  t.is((await outboxRow(env.ds, id))?.status, 'failed');
});

test('two daemons draining one outbox deliver every message exactly once', async (t) => {
  const s = await sink(t);
  const { env, logger, outbox, mail, enqueue } = await setup(t, s.url);
  const ids: string[] = [];
  for (let i = 0; i < 300; i++) ids.push(await enqueue(`bulk ${i}`));
  const otherDs = await openJobsDs(env.config);
  t.teardown(() => otherDs.destroy());
  const a = new MailDeliverer(env.jobsDs, outbox, mail, logger, 'daemon-a', { ...FAST, batchSize: 25, concurrency: 8 });
  const b = new MailDeliverer(otherDs, outbox, mail, logger, 'daemon-b', { ...FAST, batchSize: 25, concurrency: 8 });
  const [sa, sb] = await Promise.all([a.drain(), b.drain()]);
  t.is(sa.delivered + sb.delivered, 300);
  const counts = new Map<string, number>();
  for (const m of s.messages) counts.set(m.subject, (counts.get(m.subject) ?? 0) + 1);
  t.is(counts.size, 300);
  t.true(
    [...counts.values()].every((n) => n === 1),
    'a message was sent twice',
  );
  const rows = await all<{ status: string; n: number }>(
    env.ds,
    'SELECT status, COUNT(*) AS n FROM outbox GROUP BY status',
    [],
  );
  t.deepEqual(
    rows.map((r) => [r.status, Number(r.n)]),
    [['delivered', 300]],
  );
});

test('claims are one-winner: a row claimed by one daemon is not claimed by another unless it expired', async (t) => {
  const s = await sink(t);
  const { env, logger, outbox, mail, enqueue } = await setup(t, s.url);
  const otherDs = await openJobsDs(env.config);
  t.teardown(() => otherDs.destroy());
  const a = new MailDeliverer(env.jobsDs, outbox, mail, logger, 'daemon-a', FAST);
  const b = new MailDeliverer(otherDs, outbox, mail, logger, 'daemon-b', FAST);
  const ids = [await enqueue('race 1'), await enqueue('race 2')];
  // Both daemons saw the same due rows; both try to claim them.
  const [first, second] = await Promise.all([a.claim(ids), b.claim(ids)]);
  t.is(first.rows.length + second.rows.length, 2, 'each row is won exactly once');
  t.true(first.rows.length === 0 || second.rows.length === 0, 'one statement claims the batch');
  t.deepEqual((await a.claim(ids)).rows, [], "a live claim is not taken, not even by its own daemon's next batch");
  // A claim whose time has passed (its holder died) can be taken over.
  const later = Date.now() + FAST.claimMs! + 1;
  t.is((await b.claim(ids, later)).rows.length, 2);
  // A pending row waiting for its backoff is not due.
  const backedOff = await enqueue('backing off');
  await env.ds.query('UPDATE outbox SET next_attempt_at = ? WHERE id = ?', [Date.now() + 60_000, backedOff]);
  t.deepEqual((await a.claim([backedOff])).rows, []);
});

test('a claim left by a dead deliverer is retried once it expires, and the message is sent once', async (t) => {
  const s = await sink(t);
  const { env, deliverer, enqueue, drainUntil } = await setup(t, s.url);
  const id = await enqueue('orphaned claim');
  // A daemon claimed the row, then died before sending (or before recording the send).
  const claimUntil = Date.now() + 1500;
  await env.ds.query(
    "UPDATE outbox SET status = 'sending', attempts = 1, claimed_by = ?, claimed_until = ?, next_attempt_at = ? " +
      'WHERE id = ?',
    ['dead-host:1:x#1', claimUntil, claimUntil, id],
  );
  await deliverer.drain();
  t.is((await outboxRow(env.ds, id))?.status, 'sending', 'a live claim must be respected');
  t.is(s.messages.length, 0);
  t.true(await drainUntil(id, (r) => r.status === 'delivered'));
  const row = await outboxRow(env.ds, id);
  t.is(row?.attempts, 2);
  // A window in which a second copy must NOT arrive: nothing to await.
  await sleep(300);
  await deliverer.drain();
  t.is(s.messages.filter((m) => m.subject === 'orphaned claim').length, 1);
});

test("priority_failover: providers are tried in the tenant's order; the first that accepts wins", async (t) => {
  const tried: string[] = [];
  const fake = (id: string, ok: boolean): EmailProvider => ({
    id,
    describe: () => ({
      id,
      name: id,
      description: '',
      category: 'test',
      configSource: 'builtin',
      configured: true,
      missingRequiredFields: [],
      defaultFrom: FROM,
    }),
    send: () => {
      tried.push(id);
      return ok ? Promise.resolve({}) : Promise.reject(new Error(`${id} is down`));
    },
  });
  const p = new EmailProviders([fake('a', false), fake('b', true), fake('c', true)]);
  const msg = { id: 'mail_1', tenantId: 't', to: 'x@example.com', subject: 's', text: 't' };
  const r = await p.send(['a', 'b', 'c'], msg);
  t.is(r.via, 'b');
  t.deepEqual(tried, ['a', 'b']);
  const e = await t.throwsAsync(p.send(['a'], msg), { instanceOf: MailDeliveryError });
  t.regex(e.message, /a: a is down/);
  // Settings: a stored order wins; nothing stored (or nothing usable) → the default.
  t.deepEqual(p.settingsFor({ email: { strategy: 'priority_failover', providerOrder: ['c', 'a'] } }).providerOrder, [
    'c',
    'a',
  ]);
  t.deepEqual(p.settingsFor({ email: { strategy: 'priority_failover', providerOrder: ['gone'] } }).providerOrder, [
    'log',
  ]);
  t.deepEqual(p.settingsFor({}).providerOrder, ['log']);
  // With SMTP configured no code reaches the log by default (docs/email.md); IAM_MAIL_LOG=1 opts in.
  const withSmtp = createEmailProviders({ smtpUrl: 'smtp://127.0.0.1:1', mailFrom: FROM }, memoryLogger().logger);
  t.deepEqual(withSmtp.defaultOrder(), ['smtp']);
  t.deepEqual(withSmtp.settingsFor({}).providerOrder, ['smtp']);
  // A tenant's explicit `log` is its own opt-in, kept.
  t.deepEqual(
    withSmtp.settingsFor({ email: { strategy: 'priority_failover', providerOrder: ['smtp', 'log'] } }).providerOrder,
    ['smtp', 'log'],
  );
  await withSmtp.close();
  const optedIn = createEmailProviders(
    { smtpUrl: 'smtp://127.0.0.1:1', mailFrom: FROM, mailLog: true },
    memoryLogger().logger,
  );
  t.deepEqual(optedIn.defaultOrder(), ['smtp', 'log']);
  await optedIn.close();
  t.deepEqual(createEmailProviders({ smtpUrl: undefined, mailFrom: FROM }, memoryLogger().logger).defaultOrder(), [
    'log',
  ]);
});

test('enqueueEmail refuses what would break or inject into the message', async (t) => {
  const db = await testDatabase(t);
  const env = await openWithJobs(db.url, db.dir);
  t.teardown(() => env.close());
  const outbox = new Outbox(env.ds, env.config.secretKey);
  const base = { tenantId: 'ten_x', to: 'ann@example.com', subject: 'Hi', text: 'Body' };
  for (const [field, bad] of [
    ['to', { to: 'ann@example.com\r\nBcc: eve@example.com' }],
    ['to', { to: 'a@example.com, b@example.com' }],
    // What the SMTP provider (mail/smtp.ts) would refuse is refused here, not queued to fail later:
    // a local part with two dots in a row, and an address over RFC 5321's 254 octets.
    ['to', { to: 'a..b@example.com' }],
    ['to', { to: `${'a'.repeat(243)}@example.com` }],
    ['subject', { subject: 'Hi\r\nBcc: eve@example.com' }],
    ['subject', { subject: '' }],
    ['tenantId', { tenantId: '' }],
  ] as const) {
    await t.throwsAsync(
      env.ds.transaction((em) => outbox.enqueueEmail(em, { ...base, ...bad })),
      { message: new RegExp(`^${field}:`) },
    );
  }
  t.is(Number((await all<{ n: number }>(env.ds, 'SELECT COUNT(*) AS n FROM outbox', []))[0].n), 0);
});

test('backoff grows exponentially up to its cap, with jitter within [d/2, d]', (t) => {
  const lo = (n: number) => backoffMs(n, 2000, 300_000, () => 0);
  const hi = (n: number) => backoffMs(n, 2000, 300_000, () => 1);
  t.deepEqual([1, 2, 3, 4].map(hi), [2000, 4000, 8000, 16000]);
  t.deepEqual([1, 2, 3].map(lo), [1000, 2000, 4000]);
  t.is(hi(20), 300_000);
  t.is(lo(20), 150_000);
});

test('deliveryFailure keeps the reason per provider and drops credentials and addresses', (t) => {
  const auth = Object.assign(new Error('Invalid login for smtp://bob:pw123@mail.example.com <bob@example.com>'), {
    code: 'EAUTH',
    responseCode: 535,
  });
  const e = new MailDeliveryError([
    { provider: 'smtp', error: auth, code: smtpErrorCode(auth) },
    { provider: 'log', error: new Error('disk full'), code: 'provider_error' },
  ]);
  const { code, cause: d } = deliveryFailure(e);
  t.is(code, 'smtp_auth', "the first provider's failure names the attempt");
  t.regex(d, /^smtp: authentication failed \(EAUTH 535\): Invalid login/);
  t.regex(d, /log: disk full/);
  t.false(d.includes('pw123'));
  t.false(d.includes('bob@example.com'));
  // One line, bounded, whatever the relay said.
  const long = new MailDeliveryError([
    { provider: 'smtp', error: new Error(`refused\n${'x'.repeat(2000)}`), code: 'smtp_error' },
    { provider: 'log', error: new Error('y'.repeat(2000)), code: 'provider_error' },
  ]);
  const bounded = deliveryFailure(long).cause;
  t.true(bounded.length <= 500);
  t.false(bounded.includes('\n'));
});

test('pipeline: a message committed while a drain is sending is claimed and sent by that drain too', async (t) => {
  const db = await testDatabase(t);
  const env = await openWithJobs(db.url, db.dir);
  const { logger } = memoryLogger();
  // A provider that holds every message until released: the first stays in flight.
  const inFlight = new Set<string>();
  const release: (() => void)[] = [];
  const held: EmailProvider = {
    id: 'smtp',
    describe: () => ({
      id: 'smtp',
      name: 'held',
      description: '',
      category: 'test',
      configSource: 'builtin',
      configured: true,
      missingRequiredFields: [],
      defaultFrom: FROM,
    }),
    send: (msg) =>
      new Promise((resolve) => {
        inFlight.add(msg.id);
        release.push(() => resolve({}));
      }),
  };
  const outbox = new Outbox(env.ds, env.config.secretKey);
  const deliverer = new MailDeliverer(env.jobsDs, outbox, new EmailProviders([held]), logger, 'pipeline', FAST);
  const tenant = await activeTenant(env.provisioning, { name: 'Pipeline' }, actor);
  t.teardown(() => env.close());
  const enqueue = (subject: string) =>
    env.ds.transaction((em) =>
      outbox.enqueueEmail(em, { tenantId: tenant.id, to: 'ann@example.com', subject, text: 'Your code is 123456' }),
    );

  t.false(deliverer.wake(), 'no drain runs: the caller must start one');
  const first = await enqueue('first');
  const drained = deliverer.drain();
  t.true(await until(() => inFlight.has(first)));
  const second = await enqueue('second');
  t.true(deliverer.wake(), 'the running drain takes the kick');
  t.true(await until(() => inFlight.has(second), { what: 'the second message waited for the first one to finish' }));
  t.is((await outboxRow(env.ds, first))?.status, 'sending');
  for (const r of release) r();
  const stats = await drained;
  t.is(stats.delivered, 2);
  for (const id of [first, second]) {
    const row = await outboxRow(env.ds, id);
    t.is(row?.status, 'delivered');
    t.is(row?.attempts, 1);
    t.is(row?.claimed_by, null);
  }
});

test('the smtp provider: close() lets a message already handed over finish', async (t) => {
  const s = await sink(t);
  const mail = createEmailProviders({ smtpUrl: s.url, mailFrom: FROM }, memoryLogger().logger);
  const sent = mail.send(['smtp'], {
    id: 'mail_close',
    tenantId: null,
    to: 'ann@example.com',
    subject: 'before close',
    text: 'Your code is 555555',
  });
  await mail.close();
  t.is((await sent).via, 'smtp');
  t.is(s.messages.filter((m) => m.subject === 'before close').length, 1);
});
