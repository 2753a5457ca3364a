/**
 * SIGKILL during refresh-token rotation (faults lane; SQLite and MariaDB). Sixteen token
 * families rotate their refresh token as fast as they can (RFC 6749 §6; RFC 9700 §4.14.2: the
 * presented token is spent and a new one issued, in one transaction), and the daemon is killed
 * with rotations in flight. A daemon is started again on the same database and port. Then, per
 * family:
 *   - no family is half-rotated: exactly one live (unspent) refresh token, and the family is
 *     not revoked;
 *   - every refresh token presented and answered before the kill is spent;
 *   - the last acknowledged new token is the live one, unless the rotation in flight at the
 *     kill committed without its answer reaching the client (then its successor is the live
 *     one, and the acknowledged token is spent by that rotation);
 *   - a live acknowledged token works once on the restarted daemon, and a second use is
 *     refused (reuse).
 */
import test from 'ava';
import { tokenHash } from '../../shared/services/auth/pkce.js';
import { all } from '../../shared/db/sql.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { WIDE_THROTTLE } from '../helpers/faults.js';
import { loginKit } from '../helpers/login.js';
import { seedApp } from '../helpers/oauth.js';
import { openServices } from '../helpers/seed.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { until } from '../helpers/poll.js';

const FAMILIES = 16;
const KILL_AFTER_ROTATIONS = 200;

let db: TestDb;
let sink: SmtpSink;
const daemons: Daemon[] = [];
test.after.always(async () => {
  for (const d of daemons) await d.stop('SIGKILL');
  await sink?.close();
  await db?.drop();
});

interface Family {
  /** Tokens presented and answered 200: spent. */
  spent: string[];
  /** The newest token the client received. */
  current: string;
  rotations: number;
}

test('SIGKILL mid rotation: no family half-rotated, acknowledged tokens spent or live, a live one works once', async (t) => {
  t.timeout(180_000);
  db = await createTestDatabase();
  const app = await seedApp(db.url, db.dir);
  const { ds } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  sink = await startSmtpSink();
  const first = { ...WIDE_THROTTLE, IAM_SMTP_URL: sink.url };
  let d = await startDaemon(db.url, db.dir, first);
  // The daemon started again listens where this one did, so the URLs held stay valid.
  const env = { ...first, IAM_PORT: String(d.port) };
  daemons.push(d);
  const kit = loginKit(
    () => d.url,
    () => sink,
  );

  const families: Family[] = [];
  for (let i = 0; i < FAMILIES; i++) {
    const tk = await kit.tokensFor(app.web, app.user.email);
    t.truthy(tk.refresh_token);
    families.push({ spent: [], current: tk.refresh_token, rotations: 0 });
  }

  let killed = false;
  let inFlight = 0;
  let total = 0;
  const rotate = async (f: Family) => {
    try {
      while (!killed) {
        inFlight++;
        const r = await kit.refresh(f.current, app.web).finally(() => inFlight--);
        if (r.status !== 200) throw new Error(`refresh ${r.status} ${JSON.stringify(r.body)}`);
        f.spent.push(f.current);
        f.current = r.body.refresh_token;
        f.rotations++;
        total++;
      }
    } catch (e) {
      if (!killed) throw e;
    }
  };
  const loops = families.map((f) => rotate(f));
  t.true(
    await until(() => total >= KILL_AFTER_ROTATIONS && inFlight >= 4, {
      timeoutMs: 120_000,
      intervalMs: 1,
      what: 'rotations under way',
    }),
  );
  killed = true;
  const inFlightAtKill = inFlight;
  await d.stop('SIGKILL');
  await Promise.all(loops);
  t.log(`killed after ${total} acknowledged rotations, ${inFlightAtKill} in flight`);

  d = await startDaemon(db.url, db.dir, env);
  daemons.push(d);

  const rows = await all<{ id: string; family_id: string; consumed_at: unknown; created_at: unknown }>(
    ds,
    'SELECT id, family_id, consumed_at, created_at FROM refresh_tokens',
  );
  const byHash = new Map(rows.map((r) => [r.id, r]));
  let committedUnanswered = 0;
  for (const [i, f] of families.entries()) {
    const fid = byHash.get(tokenHash(f.current))?.family_id;
    t.truthy(fid, `family ${i}: its acknowledged token is stored`);
    const mine = rows.filter((r) => r.family_id === fid);
    const live = mine.filter((r) => r.consumed_at === null);
    t.is(live.length, 1, `family ${i}: exactly one live refresh token`);
    const [fam] = await all<{ revoked_at: unknown }>(ds, 'SELECT revoked_at FROM token_families WHERE id = ?', [fid]);
    t.is(fam.revoked_at, null, `family ${i} is not revoked`);
    t.true(
      f.spent.every((tok) => byHash.get(tokenHash(tok))?.consumed_at !== null),
      `family ${i}: every token answered before the kill is spent`,
    );
    if (live[0]?.id === tokenHash(f.current)) {
      // The acknowledged token is live: it works once, then it is spent.
      const first = await kit.refresh(f.current, app.web);
      t.is(first.status, 200, JSON.stringify(first.body));
      const again = await kit.refresh(f.current, app.web);
      t.is(again.status, 400);
      t.is(again.body.error, 'invalid_grant');
    } else {
      // The rotation in flight committed, its answer lost with the daemon: its successor is the
      // live token, issued after the acknowledged one, which is spent.
      committedUnanswered++;
      t.not(byHash.get(tokenHash(f.current))?.consumed_at, null);
      t.true(Number(live[0].created_at) >= Number(byHash.get(tokenHash(f.current))!.created_at));
    }
  }
  t.log(`${committedUnanswered} family(ies) had a rotation commit without its answer reaching the client`);
});
