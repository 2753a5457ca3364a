/**
 * SIGKILL during email-code sign-ins (faults lane; SQLite and MariaDB). Twelve users sign in
 * over and over through the direct API (send a code, read it from the relay, verify it), all
 * at once, and the daemon is killed while sends and verifies are in flight. A daemon is started
 * again on the same database and port. Then:
 *   - every sign-in acknowledged (verify 200) left a session that still works: the restarted
 *   daemon issues an authorization code for it with prompt=none;
 *   - every code acknowledged (send 200) reached the relay, and a user who was waiting for that
 *     mail at the kill signs in with it on the restarted daemon;
 *   - each code mail reached the relay once per Message-ID (a second copy only of a message
 *     whose delivery claim the dead daemon held), and every committed mail was sent.
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { copiesById, expireClaims, outboxStatuses, sleep, WIDE_THROTTLE } from '../helpers/faults.js';
import { loginKit } from '../helpers/login.js';
import { codeFrom, CookieJar, postJson, seedApp } from '../helpers/oauth.js';
import { openServices } from '../helpers/seed.js';
import { startSmtpSink, type SinkMessage, type SmtpSink } from '../helpers/smtp-sink.js';
import { until } from '../helpers/poll.js';

const USERS = 12;
const KILL_AFTER_SIGN_INS = 30;

let db: TestDb;
let sink: SmtpSink;
const daemons: Daemon[] = [];
test.after.always(async () => {
  for (const d of daemons) await d.stop('SIGKILL');
  await sink?.close();
  await db?.drop();
});

type Phase = 'send' | 'mail' | 'verify' | 'done';

test('SIGKILL mid sign-in: acknowledged sessions and codes survive, each code mail once per Message-ID', async (t) => {
  t.timeout(180_000);
  db = await createTestDatabase();
  const app = await seedApp(db.url, db.dir);
  const { ds, directory } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const emails: string[] = [];
  for (let i = 0; i < USERS; i++) {
    const u = await directory.createUser(
      app.tenantId,
      { email: `signer${i}@example.com`, name: `Signer ${i}` },
      { type: 'system', id: 'test' },
    );
    emails.push(u.email);
  }

  sink = await startSmtpSink({ delayMs: 20 });
  const first = { ...WIDE_THROTTLE, IAM_SMTP_URL: sink.url };
  let d = await startDaemon(db.url, db.dir, first);
  // The daemon started again listens where this one did, so the URLs held stay valid.
  const env = { ...first, IAM_PORT: String(d.port) };
  daemons.push(d);
  const kit = loginKit(
    () => d.url,
    () => sink,
  );

  let killed = false;
  let inFlight = 0;
  let onRestart = () => undefined as void;
  const restarted = new Promise<void>((r) => (onRestart = r));
  const sessions: { email: string; jar: CookieJar }[] = [];
  const ackedSends = new Map<string, number>();
  const phaseAtKill = new Map<string, Phase>();
  const seen = new Set<SinkMessage>();
  /** Mails waited for after the kill, and whether the code in each then signed in. */
  const lateSignIns: { email: string; status: number }[] = [];

  const request = async (path: string, body: unknown, jar?: CookieJar) => {
    inFlight++;
    try {
      return await postJson(`${d.url}${path}`, body, jar);
    } finally {
      inFlight--;
    }
  };

  const client = async (email: string) => {
    let phase: Phase = 'send';
    try {
      while (!killed) {
        phase = 'send';
        const send = await request('/api/v1/auth/direct/email-code/send', { client_id: app.web.clientId, email });
        if (send.status !== 200) throw new Error(`send ${send.status}`);
        ackedSends.set(email, (ackedSends.get(email) ?? 0) + 1);
        phase = 'mail';
        const mail = await sink.waitFor((m) => !seen.has(m) && m.to.includes(email), 60_000);
        seen.add(mail);
        if (killed) {
          // Acknowledged before the kill, delivered after it: the code must still sign in, on
          // the restarted daemon (a mail the relay took just as the sender died comes earlier).
          await restarted;
          const late = await request(
            '/api/v1/auth/direct/email-code/verify',
            { client_id: app.web.clientId, email, code: codeFrom(mail.text) },
            new CookieJar(),
          );
          lateSignIns.push({ email, status: late.status });
          return;
        }
        phase = 'verify';
        const jar = new CookieJar();
        const v = await request(
          '/api/v1/auth/direct/email-code/verify',
          { client_id: app.web.clientId, email, code: codeFrom(mail.text) },
          jar,
        );
        if (v.status !== 200) throw new Error(`verify ${v.status}`);
        sessions.push({ email, jar });
      }
    } catch (e) {
      if (!killed) throw e;
    } finally {
      if (!phaseAtKill.has(email)) phaseAtKill.set(email, killed ? phase : 'done');
    }
  };

  const clients = emails.map((e) => client(e));
  // Kill once enough sign-ins are acknowledged, at a moment with requests in flight.
  t.true(
    await until(() => sessions.length >= KILL_AFTER_SIGN_INS && inFlight >= 3, {
      timeoutMs: 120_000,
      intervalMs: 1,
      what: 'load started',
    }),
  );
  killed = true;
  const inFlightAtKill = inFlight;
  await d.stop('SIGKILL');
  const atKill = await outboxStatuses(ds);
  const acknowledged = [...sessions];
  t.log(`killed with ${inFlightAtKill} requests in flight, ${acknowledged.length} sign-ins acknowledged`);

  await expireClaims(ds);
  d = await startDaemon(db.url, db.dir, env);
  daemons.push(d);
  onRestart();
  await Promise.all(clients);

  // Every acknowledged sign-in's session is there: prompt=none gets a code, no login_required.
  for (const s of acknowledged) {
    const { code, loc } = await kit.codeFor(s.jar, app.web.clientId);
    t.truthy(code, `session of ${s.email}: ${loc.toString()}`);
  }
  // Users waiting for an acknowledged code at the kill got it and signed in with it.
  const waiting = [...phaseAtKill].filter(([, p]) => p === 'mail').map(([e]) => e);
  t.deepEqual(lateSignIns.map((x) => x.email).sort(), waiting.sort());
  t.deepEqual(
    lateSignIns.filter((x) => x.status !== 200),
    [],
  );
  t.log(`${waiting.length} user(s) were waiting for their code at the kill`);

  // Every committed mail went out; deduplicated by Message-ID, once each.
  t.true(
    await until(async () => [...(await outboxStatuses(ds)).values()].every((x) => x === 'delivered'), {
      timeoutMs: 60_000,
      intervalMs: 100,
    }),
  );
  // A window in which a duplicate must NOT come: nothing to await.
  await sleep(1_000);
  const rows = await outboxStatuses(ds);
  const copies = copiesById(sink);
  t.deepEqual([...copies.keys()].sort(), [...rows.keys()].sort());
  t.deepEqual(
    [...copies].filter(([id, m]) => m.length > 1 && atKill.get(id) !== 'sending').map(([id]) => id),
    [],
  );
  // Each acknowledged send has its own mail at the relay.
  for (const [email, n] of ackedSends) {
    const mine = [...copies.values()].filter((m) => m[0].to.includes(email)).length;
    t.true(mine >= n, `${email}: ${n} sends acknowledged, ${mine} distinct mails`);
  }
});
