/**
 * SIGKILL while a committed batch waits for its sync (faults lane; SQLite and MariaDB). On
 * SQLite the daemon answers a group of transactions only after an fdatasync of the WAL that
 * runs off the event loop (shared/db/wal-durability.ts); here every such sync is made 150 ms
 * slower (test/helpers/slow-wal-sync.ts, loaded with --import), so that nearly all the time a
 * batch is committed and held, unanswered. Eight writers create users through the admin API
 * as fast as they can, and the daemon is killed mid-stream. Then:
 *   - every user whose creation was answered 201 before the kill is in the database;
 *   - on SQLite, the kill did land on a held batch: some creations were committed but never
 *     answered (they are in the database, their callers saw the connection drop);
 *   - the database passes its integrity check, and a daemon starts on it again.
 * On MariaDB the preload changes nothing (no WAL sync of ours): the first and last checks hold.
 */
import test from 'ava';
import { fileURLToPath } from 'node:url';
import { all } from '../../shared/db/sql.js';
import { api } from '../helpers/api.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { WIDE_THROTTLE } from '../helpers/faults.js';
import { seedApp } from '../helpers/oauth.js';
import { clientCredentialsToken, openServices } from '../helpers/seed.js';
import { until } from '../helpers/poll.js';

const WRITERS = 8;
const KILL_AFTER = 60;
const SLOW_SYNC = fileURLToPath(new URL('../helpers/slow-wal-sync.js', import.meta.url));

let db: TestDb;
const daemons: Daemon[] = [];
test.after.always(async () => {
  for (const d of daemons) await d.stop('SIGKILL');
  await db?.drop();
});

test('SIGKILL while a committed batch waits for its sync: every 201 is in the database', async (t) => {
  t.timeout(180_000);
  db = await createTestDatabase();
  const sqlite = !db.url.startsWith('mysql');
  const app = await seedApp(db.url, db.dir);
  const d = await startDaemon(db.url, db.dir, { ...WIDE_THROTTLE, SLOW_WAL_SYNC_MS: '150' }, [`--import=${SLOW_SYNC}`]);
  daemons.push(d);
  const token = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);

  let killed = false;
  const answered: string[] = [];
  const unanswered: string[] = [];
  const writer = async (w: number) => {
    for (let n = 0; !killed; n++) {
      const email = `held-${w}-${n}@example.com`;
      try {
        const r = await api(d.url, 'POST', `/api/admin/tenants/${app.tenantId}/users`, {
          token,
          body: { email, name: `Held ${w} ${n}` },
        });
        if (r.status !== 201) throw new Error(`create ${r.status} ${JSON.stringify(r.body)}`);
        answered.push(email);
      } catch (e) {
        if (!killed) throw e;
        unanswered.push(email);
        return;
      }
    }
  };
  const loops = Array.from({ length: WRITERS }, (_, w) => writer(w));
  await until(() => answered.length >= KILL_AFTER, { timeoutMs: 120_000, intervalMs: 5, what: 'creations answered' });
  // Answers arrive in bursts, right after a sync; the writers' next requests commit within a few
  // milliseconds and then wait for the next (slowed) sync: the kill lands inside that wait.
  await new Promise((r) => setTimeout(r, 75));
  killed = true;
  await d.stop('SIGKILL');
  await Promise.all(loops);
  t.log(`killed after ${answered.length} answered creations, ${unanswered.length} in flight`);

  const { ds } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const rows = await all<{ email: string }>(ds, "SELECT email FROM users WHERE email LIKE 'held-%'");
  const stored = new Set(rows.map((r) => r.email));
  t.deepEqual(
    answered.filter((e) => !stored.has(e)),
    [],
    'every creation answered 201 is stored',
  );
  const committedUnanswered = unanswered.filter((e) => stored.has(e));
  t.log(`${committedUnanswered.length} creation(s) committed and held for the sync at the kill`);
  if (sqlite) {
    t.true(committedUnanswered.length >= 1, 'the kill landed while a committed batch waited for its sync');
    const [check] = await all<{ integrity_check: string }>(ds, 'PRAGMA integrity_check');
    t.is(check.integrity_check, 'ok');
  }
  const again = await startDaemon(db.url, db.dir, WIDE_THROTTLE);
  daemons.push(again);
  t.is((await fetch(`${again.url}/readyz`)).status, 200);
});
