/**
 * SIGKILL during data export builds (faults lane; SQLite and MariaDB). Ten users each asked for
 * an export of 4,000 history rows (stored pending, as POST /api/user/data-export does above the
 * inline limit); the daemon's `data-export` job builds them one after another and is killed with
 * some completed and others pending, one of them mid-build. A daemon is started again on the
 * same database. Then:
 *   - every export completes, and its content is whole: every history row of its user;
 *   - each user gets exactly one "export ready" mail (one outbox row per export, written in the
 *     transaction that completes it, so an export built twice still completes and mails once),
 *     and the relay receives it once per Message-ID.
 * The dead daemon's lease on the job lasts a minute; the test lets that minute pass
 * (job_leases.lease_until in the past) rather than wait it out.
 */
import test from 'ava';
import { all } from '../../shared/db/sql.js';
import { createPendingExport } from '../../shared/services/data-export.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { seedAuthHistory } from '../helpers/auth-history.js';
import { copiesById, expireClaims, outboxStatuses, sleep } from '../helpers/faults.js';
import { openServices, seed } from '../helpers/seed.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { until } from '../helpers/poll.js';

const USERS = 10;
const ROWS = 4_000;

let db: TestDb;
let sink: SmtpSink;
const daemons: Daemon[] = [];
test.after.always(async () => {
  for (const d of daemons) await d.stop('SIGKILL');
  await sink?.close();
  await db?.drop();
});

const statuses = (ds: Parameters<typeof all>[0]) =>
  all<{ id: string; status: string }>(ds, 'SELECT id, status FROM data_exports');

test('SIGKILL mid export build: every export completes whole, one ready mail each', async (t) => {
  t.timeout(240_000);
  db = await createTestDatabase();
  const s = await seed(db.url, db.dir);
  const { ds, directory } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const users: { id: string; email: string; exportId: string }[] = [];
  // Recent: older history is past its retention and purged.
  const base = Date.now() - 3_600_000;
  for (let u = 0; u < USERS; u++) {
    const user = await directory.createUser(
      s.tenantId,
      { email: `exporter${u}@example.com`, name: `Exporter ${u}` },
      { type: 'system', id: 'test' },
    );
    await seedAuthHistory(db.url, db.dir, {
      tenantId: s.tenantId,
      count: ROWS,
      row: (i) => ({
        id: `ah_${u}_${i}`,
        user_id: user.id,
        event: 'login',
        outcome: 'success',
        reason: null,
        client_id: null,
        ip: '192.0.2.1',
        user_agent: 'fault-test',
        created_at: base + i,
      }),
    });
    const exportId = await createPendingExport(ds, {
      tenantId: s.tenantId,
      userId: user.id,
      sections: ['profile', 'auth_history'],
      format: 'json',
    });
    users.push({ id: user.id, email: user.email, exportId });
  }

  sink = await startSmtpSink();
  const first = { IAM_SMTP_URL: sink.url };
  let d = await startDaemon(db.url, db.dir, first);
  // The daemon started again listens where this one did (same issuer).
  const env = { ...first, IAM_PORT: String(d.port) };
  daemons.push(d);
  const completed = async () => (await statuses(ds)).filter((x) => x.status === 'completed').length;
  t.true(
    await until(async () => (await completed()) >= 2, { timeoutMs: 120_000, intervalMs: 5, what: 'builds under way' }),
  );
  await d.stop('SIGKILL');
  const atKill = await completed();
  t.log(`killed with ${atKill} of ${USERS} exports completed`);
  t.true(atKill < USERS, 'the kill landed before the last build');

  await ds.query("UPDATE job_leases SET lease_until = ? WHERE name = 'data-export'", [Date.now() - 1]);
  await expireClaims(ds);
  d = await startDaemon(db.url, db.dir, env);
  daemons.push(d);
  t.true(
    await until(async () => (await completed()) === USERS, {
      timeoutMs: 120_000,
      intervalMs: 200,
      what: 'every export completed',
    }),
  );

  // Whole: every history row of the user, none of another's.
  for (const u of users) {
    const [row] = await all<{ result: string; status: string }>(
      ds,
      'SELECT result, status FROM data_exports WHERE id = ?',
      [u.exportId],
    );
    const data = JSON.parse(row.result) as { profile: { id: string }; auth_history: { created_at: number }[] };
    t.is(data.profile.id, u.id);
    t.is(data.auth_history.length, ROWS);
    // Each row once (the seeded times are distinct), none left out.
    t.is(new Set(data.auth_history.map((h) => h.created_at)).size, ROWS);
  }

  // One ready mail per export, delivered, once per Message-ID.
  t.true(
    await until(async () => [...(await outboxStatuses(ds)).values()].every((x) => x === 'delivered'), {
      timeoutMs: 60_000,
      intervalMs: 100,
    }),
  );
  // A window in which a duplicate must NOT come: nothing to await.
  await sleep(1_000);
  const rows = await outboxStatuses(ds);
  t.is(rows.size, USERS, 'one outbox row per export');
  const copies = copiesById(sink);
  t.deepEqual([...copies.keys()].sort(), [...rows.keys()].sort());
  for (const u of users) {
    const mine = [...copies.values()].filter((m) => m[0].to.includes(u.email));
    t.is(mine.length, 1, `${u.email}: one ready mail`);
    t.true(mine[0][0].text.includes(u.exportId));
  }
});
