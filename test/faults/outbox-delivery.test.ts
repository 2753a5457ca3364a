/**
 * SIGKILL during outbox delivery (faults lane; SQLite and MariaDB). 300 committed mails wait in
 * the outbox; the daemon delivers them to a slow relay, many at once, and is killed while
 * messages are in flight: some delivered and recorded, some accepted by the relay but not yet
 * recorded, some sent but not yet accepted, some not yet claimed. A daemon started on the same
 * database delivers the rest. Then:
 *   - every row is `delivered`, and the relay received every one of them (nothing committed lost);
 *   - each message carries its row's Message-ID on every attempt, so deduplicated by it, each
 *     row reached the relay exactly once;
 *   - a second copy exists only for a row whose claim was open at the kill (sent, its outcome
 *     not yet written): the one window at-least-once delivery leaves, and the Message-ID is
 *     what lets the receiver drop it. A row recorded delivered is never sent again.
 */
import test from 'ava';
import { Outbox } from '../../shared/services/outbox.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { copiesById, expireClaims, outboxStatuses, sleep } from '../helpers/faults.js';
import { openServices, seed } from '../helpers/seed.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { until } from '../helpers/poll.js';

const MAILS = 300;

let db: TestDb;
let sink: SmtpSink;
const daemons: Daemon[] = [];
test.after.always(async () => {
  for (const d of daemons) await d.stop('SIGKILL');
  await sink?.close();
  await db?.drop();
});

test('SIGKILL mid-delivery: every committed mail reaches the relay, once per Message-ID', async (t) => {
  db = await createTestDatabase();
  const s = await seed(db.url, db.dir);
  const { ds, config } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());

  // Committed before any daemon runs: acknowledged writes, as a request's would be.
  const outbox = new Outbox(ds, config.secretKey);
  const ids: string[] = [];
  for (let i = 0; i < MAILS; i += 50) {
    ids.push(
      ...(await ds.transaction(async (tx) => {
        const batch: string[] = [];
        for (let j = i; j < Math.min(MAILS, i + 50); j++) {
          batch.push(
            await outbox.enqueueEmail(tx, {
              tenantId: s.tenantId,
              to: `user${j}@example.com`,
              subject: `message ${j}`,
              text: `body ${j}`,
            }),
          );
        }
        return batch;
      })),
    );
  }

  // A slow relay: each message waits before it is accepted, so many are in flight at the kill.
  sink = await startSmtpSink({ delayMs: 150 });
  const a = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url });
  daemons.push(a);
  t.true(await until(() => sink.messages.length >= 40, { timeoutMs: 60_000, intervalMs: 5, what: 'delivery started' }));
  await a.stop('SIGKILL');
  const atKill = await outboxStatuses(ds);
  const receivedAtKill = sink.messages.length;
  const count = (st: string) => [...atKill.values()].filter((x) => x === st).length;
  t.log(
    `at the kill: ${receivedAtKill} received, ${count('delivered')} recorded delivered, ` +
      `${count('sending')} claimed, ${count('pending')} pending`,
  );
  t.true(count('delivered') < MAILS, 'the kill landed before the end');
  t.true(count('sending') + count('pending') > 0);

  // The same database, another daemon; the relay is quick now.
  await expireClaims(ds);
  sink.setDelay(0);
  const b = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url });
  daemons.push(b);
  t.true(
    await until(async () => [...(await outboxStatuses(ds)).values()].every((x) => x === 'delivered'), {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: 'every row delivered after the restart',
    }),
  );
  // A window in which a duplicate must NOT come (it would come now, if at all): nothing to await.
  await sleep(1_000);

  const copies = copiesById(sink);
  t.deepEqual([...copies.keys()].sort(), [...ids].sort(), 'the relay received exactly the committed messages');
  const twice = [...copies].filter(([, m]) => m.length > 1).map(([id]) => id);
  t.log(`${twice.length} message(s) received twice, each under its one Message-ID`);
  // A second copy only of a message whose claim the dead daemon held (sent, not yet recorded).
  t.deepEqual(
    twice.filter((id) => atKill.get(id) !== 'sending'),
    [],
  );
  for (const [id, m] of copies) {
    t.true(
      m.every((x) => x.text === m[0].text && x.subject === m[0].subject),
      `copies of ${id} are the same message`,
    );
  }
  // Nothing recorded delivered was sent again after the restart.
  const afterKill = sink.messages.slice(receivedAtKill).map((m) => /^<([^@>]+)@/.exec(m.headers['message-id'])![1]);
  t.deepEqual(
    afterKill.filter((id) => atKill.get(id) === 'delivered'),
    [],
  );
});
