/**
 * `iam outbox list`, run as the real executable: an operator sees why mail failed (the error
 * code and the sanitised cause of the last attempt), filtered by tenant and status, and never
 * the message, its recipient or a credential.
 */
import test from 'ava';
import { MailDeliverer } from '../../daemon/jobs/mail-outbox.js';
import { EmailSettingsService } from '../../shared/services/email-settings.js';
import { createEmailProviders } from '../../shared/services/mail/index.js';
import { Outbox, type OutboxEntryView } from '../../shared/services/outbox.js';
import { iam, iamJson } from '../helpers/cli.js';
import { freePort } from '../helpers/daemon.js';
import { testDatabase } from '../helpers/db.js';
import { memoryLogger, openWithJobs } from '../helpers/jobs.js';
import { activeTenant } from '../helpers/seed.js';

const actor = { type: 'system' as const, id: 'test' };

test('lists a failed delivery with its error code and cause; filters by tenant and status; no payload', async (t) => {
  const db = await testDatabase(t);
  const env = await openWithJobs(db.url, db.dir);
  t.teardown(() => env.close());
  const a = await activeTenant(env.provisioning, { name: 'Mail A' }, actor);
  const b = await activeTenant(env.provisioning, { name: 'Mail B' }, actor);
  const outbox = new Outbox(env.ds, env.config.secretKey);
  const enqueue = (tenantId: string, subject: string) =>
    env.ds.transaction((tx) =>
      outbox.enqueueEmail(tx, { tenantId, to: 'ann@example.com', subject, text: 'Your code is 424242' }),
    );

  // Tenant A's mail: SMTP is down (nothing listens), one attempt allowed, so it fails for good.
  const port = await freePort();
  const { logger } = memoryLogger();
  const mail = createEmailProviders(
    { smtpUrl: `smtp://mailer:s3cret-pw@127.0.0.1:${port}`, mailFrom: 'x@iam.test' },
    logger,
  );
  t.teardown(() => mail.close());
  // Only SMTP for this tenant: no fallback to the log.
  await new EmailSettingsService(env.ds, mail).update(
    a.id,
    { strategy: 'priority_failover', providerOrder: ['smtp'] },
    actor,
  );
  const failedId = await enqueue(a.id, 'Your sign-in code: 424242');
  const deliverer = new MailDeliverer(env.jobsDs, outbox, mail, logger, 'cli-test', { maxAttempts: 1 });
  const stats = await deliverer.drain();
  t.is(stats.failed, 1);
  // Tenant B's mail waits, never attempted.
  const pendingId = await enqueue(b.id, 'Welcome');

  const all = await iamJson<OutboxEntryView[]>(db, ['outbox', 'list']);
  t.deepEqual(all.map((e) => e.id).sort(), [failedId, pendingId].sort());
  const failed = all.find((e) => e.id === failedId)!;
  t.deepEqual(Object.keys(failed).sort(), [
    'attempts',
    'created_at',
    'delivered_via',
    'id',
    'kind',
    'last_error_cause',
    'last_error_code',
    'next_attempt_at',
    'status',
    'tenant_id',
    'updated_at',
  ]);
  t.is(failed.tenant_id, a.id);
  t.is(failed.kind, 'email');
  t.is(failed.status, 'failed');
  t.is(failed.attempts, 1);
  t.is(failed.delivered_via, null);
  t.is(failed.last_error_code, 'smtp_refused');
  t.regex(failed.last_error_cause!, /^smtp: connection refused \(ECONNREFUSED\)/);
  const pending = all.find((e) => e.id === pendingId)!;
  t.is(pending.status, 'pending');
  t.is(pending.attempts, 0);
  t.is(pending.last_error_code, null);

  // Filters.
  t.deepEqual(
    (await iamJson<OutboxEntryView[]>(db, ['outbox', 'list', '--status', 'failed'])).map((e) => e.id),
    [failedId],
  );
  t.deepEqual(
    (await iamJson<OutboxEntryView[]>(db, ['outbox', 'list', '--tenant', b.id])).map((e) => e.id),
    [pendingId],
  );
  t.deepEqual(await iamJson<OutboxEntryView[]>(db, ['outbox', 'list', '--tenant', b.id, '--status', 'failed']), []);
  t.is((await iamJson<OutboxEntryView[]>(db, ['outbox', 'list', '--limit', '1'])).length, 1);

  // The table, for a person: the code and the cause, and nothing of the message.
  const human = await iam(db, ['outbox', 'list', '--status', 'failed']);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /^ID\s+TENANT\s+KIND\s+STATUS\s+ATTEMPTS\s+NEXT ATTEMPT\s+VIA\s+UPDATED\s+ERROR\s+CAUSE$/m);
  t.regex(
    human.stdout,
    new RegExp(
      `^${failedId}\\s+${a.id}\\s+email\\s+failed\\s+1\\s+-\\s+-\\s+\\S+\\s+smtp_refused\\s+smtp: connection refused`,
      'm',
    ),
  );
  for (const out of [human.stdout, JSON.stringify(all)]) {
    for (const secret of ['424242', 'ann@example.com', 's3cret-pw', 'sign-in code'])
      t.false(out.includes(secret), `the listing shows ${secret}`);
  }
  const none = await iam(db, ['outbox', 'list', '--tenant', b.id, '--status', 'delivered']);
  t.is(none.stdout.trim(), `No outbox entries in status delivered for tenant ${b.id}.`);

  // Refusals: an unknown tenant, a status that does not exist.
  const unknown = await iam(db, ['outbox', 'list', '--tenant', 'ten_nope', '--json']);
  t.is(unknown.code, 1);
  t.is(JSON.parse(unknown.stdout).error, 'not_found');
  const badStatus = await iam(db, ['outbox', 'list', '--status', 'lost']);
  t.is(badStatus.code, 2);
  t.regex(badStatus.stderr, /--status/);
});

test('outbox list --help shows its flags and examples', async (t) => {
  const db = { url: 'sqlite:/nonexistent/never-opened.db', dir: '/nonexistent' };
  const help = await iam(db, ['outbox', 'list', '--help']);
  t.is(help.code, 0, help.stderr);
  for (const flag of ['--tenant', '--status', '--limit', '--json']) t.true(help.stdout.includes(flag), flag);
  t.regex(help.stdout, /EXAMPLES[\s\S]*\$ iam outbox list --status failed/);
  const root = await iam(db, ['--help']);
  t.regex(root.stdout, /^\s+outbox list\s+\S/m);
});
