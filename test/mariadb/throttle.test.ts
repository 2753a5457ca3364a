/**
 * Two daemons on one MariaDB database share every throttling budget (docs/security.md): the
 * counters are rows of `rate_limits`, changed in one transaction each (an upsert, which takes
 * the row lock, and the read of its result), so concurrent consumption on both daemons never
 * lets more through than the budget. This runs in the MariaDB lane only.
 */
import test from 'ava';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { testDatabase, usingMysql } from '../helpers/db.js';
import { postFrom } from '../helpers/from-ip.js';
import { codeFrom, pkce, seedApp } from '../helpers/oauth.js';
import { startSmtpSink } from '../helpers/smtp-sink.js';

test('two daemons share the address lock and the client-authentication budget', async (t) => {
  t.timeout(180_000);
  // This file is in the MariaDB lane's file list only; running it elsewhere is a mistake, not a skip.
  t.true(usingMysql(), 'IAM_TEST_DATABASE_URL must name a MariaDB/MySQL server (npm run test:mariadb)');

  const db = await testDatabase(t);
  const app = await seedApp(db.url, db.dir);
  const sink = await startSmtpSink();
  t.teardown(() => sink.close());
  const env = {
    IAM_SMTP_URL: sink.url,
    IAM_EMAIL_CODE_RESEND_SECONDS: '0',
    IAM_THROTTLE_CLIENT_AUTH_IP_FAILURES: '10',
  };
  // One service: the second daemon takes the first one's issuer.
  const first = await startDaemon(db.url, db.dir, env);
  const daemons: Daemon[] = [first, await startDaemon(db.url, db.dir, { ...env, IAM_ISSUER: first.url })];
  t.teardown(async () => {
    await Promise.all(daemons.map((d) => d.stop()));
  });
  const [a, b] = daemons;
  const email = app.user.email;

  /** A code sent through `d` in a login transaction of its own (a PKCE challenge). */
  const sendOn = async (d: Daemon) => {
    const challenge = pkce().challenge;
    const earlier = new Set(sink.messages);
    const r = await postFrom('127.0.0.1', `${d.url}/api/v1/auth/direct/email-code/send`, {
      client_id: app.web.clientId,
      email,
      code_challenge: challenge,
    });
    t.is(r.status, 200, r.text);
    const mail = await sink.waitFor((m) => !earlier.has(m) && m.to.includes(email), 15_000);
    return { challenge, code: codeFrom(mail.text) };
  };
  const verifyOn = (d: Daemon, challenge: string, code: string) =>
    postFrom('127.0.0.1', `${d.url}/api/v1/auth/direct/email-code/verify`, {
      client_id: app.web.clientId,
      email,
      code,
      code_challenge: challenge,
    });
  const wrongOf = (code: string, i: number) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0');

  // Ten wrong codes per address (the default), split between the daemons: five on A, four on
  // B are answered 400; B's fifth is the tenth of the address and locks it.
  const onA = await sendOn(a);
  for (let i = 0; i < 5; i++) t.is((await verifyOn(a, onA.challenge, wrongOf(onA.code, i))).status, 400);
  const onB = await sendOn(b);
  for (let i = 0; i < 4; i++) t.is((await verifyOn(b, onB.challenge, wrongOf(onB.code, i))).status, 400);
  const locking = await verifyOn(b, onB.challenge, wrongOf(onB.code, 4));
  t.is(locking.status, 429);
  t.truthy(locking.headers['retry-after']);
  // A, which saw only five failures itself, refuses a right code: the lock is in the database.
  const fresh = await sendOn(a);
  const refused = await verifyOn(a, fresh.challenge, fresh.code);
  t.is(refused.status, 429);
  t.is(refused.json().error, 'slow_down');

  // Twenty failed client authentications at once from one IP, half on each daemon, against a
  // budget of ten: exactly ten are counted and answered 401, the rest 429.
  const basic = 'Basic ' + Buffer.from(`${app.admin.clientId}:wrong`).toString('base64');
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      postFrom(
        '127.0.0.2',
        `${daemons[i % 2].url}/token`,
        { grant_type: 'client_credentials' },
        { form: true, headers: { authorization: basic } },
      ),
    ),
  );
  const statuses = results.map((r) => r.status);
  t.is(statuses.filter((s) => s === 401).length, 10, statuses.join(','));
  t.is(statuses.filter((s) => s === 429).length, 10, statuses.join(','));
});
