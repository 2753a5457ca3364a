/**
 * The MariaDB server restarted under load (faults lane, MariaDB pass only: it needs the lane's
 * restart hook, MARIADB_LANE_RESTART, test/lanes/mariadb.sh).
 *
 * Two daemons on one database take a steady mix of reads (introspection) and writes (token
 * issuance, client_credentials) from a few concurrent clients. The server is stopped, stays
 * down a while, and comes back on the same port. Then:
 *   - neither daemon died; each 5xx during the outage was a 503 `temporarily_unavailable`
 *     with Retry-After (docs/errors.md), never a 500;
 *   - the 5xx are bounded: only requests sent between the restart's start and the recovery
 *     seen by the test, so at most what the clients could send in that window;
 *   - the daemons recover by themselves (no restart of theirs): once the server answers, both
 *     serve 2xx, and a fixed number of further requests see no 5xx at all.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startDaemon, type Daemon } from '../../helpers/daemon.js';
import { testDatabase, usingMysql } from '../../helpers/db.js';
import { clientCredentialsToken, openServices, seed, credentialsClient, TEST_API } from '../../helpers/seed.js';
import { until } from '../../helpers/poll.js';

const run = promisify(execFile);
const CLIENTS = 6;
const DOWN_SECONDS = 3;
const AFTER = 200;

interface Sample {
  kind: 'introspect' | 'token';
  daemon: number;
  sentAt: number;
  status: number;
  error?: string;
  retryAfter?: string | null;
}

test('MariaDB restarted under load: 503s bounded to the outage, the daemons recover by themselves', async (t) => {
  t.timeout(240_000);
  const restart = process.env.MARIADB_LANE_RESTART;
  t.true(usingMysql() && !!restart, 'runs in the faults lane MariaDB pass (npm run test:faults), which sets these');
  if (!restart) return;

  const db = await testDatabase(t);
  const s = await seed(db.url, db.dir);
  const { ds, directory } = await openServices(db.url, db.dir);
  const creds = await credentialsClient(directory, s.tenantId, TEST_API);
  await ds.destroy();

  // One service: the second daemon takes the first one's issuer.
  const first = await startDaemon(db.url, db.dir);
  const daemons: Daemon[] = [first, await startDaemon(db.url, db.dir, { IAM_ISSUER: first.url })];
  t.teardown(() => Promise.all(daemons.map((d) => d.stop('SIGKILL'))));
  const token = await clientCredentialsToken(daemons[0].url, creds.clientId, creds.secret);
  const basic = 'Basic ' + Buffer.from(`${creds.clientId}:${creds.secret}`).toString('base64');

  const call = async (kind: Sample['kind'], daemon: number): Promise<Sample> => {
    const sentAt = Date.now();
    const body =
      kind === 'token' ? new URLSearchParams({ grant_type: 'client_credentials' }) : new URLSearchParams({ token });
    try {
      const res = await fetch(`${daemons[daemon].url}/${kind}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
        body,
        signal: AbortSignal.timeout(30_000),
      });
      const json = (await res.json().catch(() => ({}))) as { error?: string; active?: boolean };
      // An introspection that answers but cannot see the token is a failure too.
      const status = kind === 'introspect' && res.status === 200 && json.active !== true ? 299 : res.status;
      return { kind, daemon, sentAt, status, error: json.error, retryAfter: res.headers.get('retry-after') };
    } catch (e) {
      return { kind, daemon, sentAt, status: 0, error: String(e) };
    }
  };

  // The load: each client alternates a read and a write, on alternating daemons, until stopped.
  const samples: Sample[] = [];
  let stop = false;
  const clients = Array.from({ length: CLIENTS }, async (_, c) => {
    for (let i = 0; !stop; i++) {
      samples.push(await call(i % 2 ? 'token' : 'introspect', (c + i) % 2));
    }
  });
  // Wait for a steady state: enough requests answered 2xx before the fault.
  await until(() => samples.filter((x) => x.status === 200).length >= 100, {
    timeoutMs: 120_000,
    what: '100 requests answered 2xx before the fault',
  });
  const before = samples.length;
  t.is(samples.filter((x) => x.status !== 200).length, 0, 'no failure before the restart');

  const restartAt = Date.now();
  await run(restart, [String(DOWN_SECONDS)], { timeout: 120_000 });
  const serverBackAt = Date.now();

  // Recovery: poll until both daemons answer both kinds of request with 2xx.
  let recoveredAt = 0;
  await until(
    async () => {
      const probe = await Promise.all([0, 1].flatMap((d) => [call('introspect', d), call('token', d)]));
      if (probe.every((p) => p.status === 200)) recoveredAt = Date.now();
      return recoveredAt > 0;
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  ).catch(() => undefined); // the assertion below reports it, once the clients have stopped
  stop = true;
  await Promise.all(clients);
  t.true(recoveredAt > 0, 'both daemons serve 2xx again within 60 s of the server being back');
  for (const d of daemons) t.is(d.proc.exitCode, null, 'the daemon is still running');

  const during = samples.slice(before);
  const failed = during.filter((x) => x.status !== 200);
  const fiveXX = failed.filter((x) => x.status >= 500);
  t.log(
    `server down ${DOWN_SECONDS} s (restart took ${serverBackAt - restartAt} ms, recovered ` +
      `${recoveredAt - serverBackAt} ms after it answered); ${during.length} requests since the restart, ` +
      `${fiveXX.length} answered 5xx`,
  );
  // Every failure is a 503 temporarily_unavailable with Retry-After: no 500, no other error,
  // no dropped connection.
  t.deepEqual(
    failed.filter((x) => x.status !== 503 || x.error !== 'temporarily_unavailable' || !x.retryAfter),
    [],
  );
  // Bounded by the outage: each 5xx is an answer to a request sent between the restart's start
  // and the recovery the test observed; at most every request sent in that window.
  const inWindow = samples.filter((x) => x.sentAt >= restartAt && x.sentAt <= recoveredAt);
  t.true(fiveXX.every((x) => x.sentAt >= restartAt && x.sentAt <= recoveredAt));
  t.true(fiveXX.length <= inWindow.length);
  t.true(fiveXX.length > 0, 'the outage was felt (writes need the database)');

  // After recovery: a fixed number of further requests, all 2xx.
  const after: Sample[] = [];
  for (let i = 0; i < AFTER; i += CLIENTS) {
    after.push(
      ...(await Promise.all(
        Array.from({ length: CLIENTS }, (_, c) => call((i + c) % 2 ? 'token' : 'introspect', (i + c) % 2)),
      )),
    );
  }
  t.true(after.length >= AFTER);
  t.deepEqual(
    after.filter((x) => x.status !== 200),
    [],
  );
});
