/**
 * SIGKILL during tenant provisioning (faults lane; SQLite and MariaDB). Tenants are created
 * over the admin API, several at once, while the daemon's runner works through their
 * operations; the mail-transport step talks to a relay that is slow to greet, so operations are
 * mid-step at any moment. The daemon is killed with creations and steps in flight, and started
 * again on the same database. Then:
 *   - every creation acknowledged (201) is there: its tenant `active`, its operation `completed`,
 *     all five steps completed, each step recorded `completed` once (a completed step is never
 *     run again);
 *   - nothing is half-made: every tenant in the database (acknowledged or not) has exactly one
 *     operation, and every operation reached the end; no tenant is left `provisioning`.
 * The dead runner's lease on an operation it was working on lasts a minute; the test lets that
 * minute pass (sets lease_until to the past) rather than wait it out.
 */
import test from 'ava';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { all } from '../../shared/db/sql.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { clientCredentialsToken, openServices, seed } from '../helpers/seed.js';
import { until } from '../helpers/poll.js';

const CLIENTS = 4;
const KILL_AFTER = 8;

let db: TestDb;
let relay: Server;
const sockets = new Set<Socket>();
const daemons: Daemon[] = [];
test.after.always(async () => {
  for (const d of daemons) await d.stop('SIGKILL');
  for (const s of sockets) s.destroy();
  relay?.close();
  await db?.drop();
});

/** Just enough SMTP for the transport check (greeting, EHLO, QUIT), with a slow greeting. */
async function slowRelay(greetMs: number): Promise<number> {
  relay = createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => undefined);
    setTimeout(() => sock.writable && sock.write('220 slow.example.test ESMTP\r\n'), greetMs);
    let buf = '';
    sock.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      let i;
      while ((i = buf.indexOf('\r\n')) >= 0) {
        const line = buf.slice(0, i).toUpperCase();
        buf = buf.slice(i + 2);
        if (line.startsWith('EHLO') || line.startsWith('HELO')) sock.write('250 slow.example.test\r\n');
        else if (line.startsWith('QUIT')) sock.end('221 bye\r\n');
        else if (line.startsWith('RSET') || line.startsWith('NOOP')) sock.write('250 ok\r\n');
        else sock.write('502 not here\r\n');
      }
    });
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', () => r()));
  return (relay.address() as AddressInfo).port;
}

test('SIGKILL mid provisioning: acknowledged tenants complete, nothing is half-made', async (t) => {
  t.timeout(180_000);
  db = await createTestDatabase();
  const s = await seed(db.url, db.dir);
  const { ds } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const relayPort = await slowRelay(400);
  const first = { IAM_SMTP_URL: `smtp://127.0.0.1:${relayPort}` };
  let d = await startDaemon(db.url, db.dir, first);
  // The daemon started again listens where this one did (same issuer).
  const env = { ...first, IAM_PORT: String(d.port) };
  daemons.push(d);
  const token = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);

  let killed = false;
  let inFlight = 0;
  const acked: string[] = [];
  let n = 0;
  const create = async () => {
    try {
      while (!killed) {
        inFlight++;
        const r = await fetch(`${d.url}/api/admin/tenants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Fault tenant ${++n}` }),
        }).finally(() => inFlight--);
        const body = (await r.json()) as { id: string };
        if (r.status !== 201) throw new Error(`create ${r.status} ${JSON.stringify(body)}`);
        acked.push(body.id);
        // A short pause: creations keep coming while the runner works on the earlier ones.
        await new Promise((res) => setTimeout(res, 50));
      }
    } catch (e) {
      if (!killed) throw e;
    }
  };
  const loops = Array.from({ length: CLIENTS }, () => create());
  const running = async () =>
    (await all<{ n: unknown }>(ds, "SELECT COUNT(*) AS n FROM provisioning_operations WHERE status = 'running'"))
      .map((r) => Number(r.n))
      .pop()! > 0;
  t.true(
    await until(async () => acked.length >= KILL_AFTER && inFlight > 0 && (await running()), {
      timeoutMs: 120_000,
      intervalMs: 5,
      what: 'creations and steps under way',
    }),
  );
  killed = true;
  await d.stop('SIGKILL');
  await Promise.all(loops);
  const atKill = await all<{ status: string; n: unknown }>(
    ds,
    'SELECT status, COUNT(*) AS n FROM provisioning_operations GROUP BY status',
  );
  t.log(`killed with ${acked.length} creations acknowledged; operations: ${JSON.stringify(atKill)}`);

  // The minute of the dead runner's leases passes.
  await ds.query("UPDATE provisioning_operations SET lease_until = ? WHERE status = 'running'", [Date.now() - 1]);
  d = await startDaemon(db.url, db.dir, env);
  daemons.push(d);
  t.true(
    await until(
      async () =>
        (
          await all<{ n: unknown }>(ds, "SELECT COUNT(*) AS n FROM provisioning_operations WHERE status <> 'completed'")
        ).map((r) => Number(r.n))[0] === 0,
      { timeoutMs: 90_000, intervalMs: 200, what: 'every operation completed after the restart' },
    ),
  );

  const tenants = await all<{ id: string; lifecycle_state: string }>(
    ds,
    'SELECT id, lifecycle_state FROM tenants WHERE id <> ?',
    [s.tenantId],
  );
  const ops = await all<{ id: string; tenant_id: string; status: string }>(
    ds,
    'SELECT id, tenant_id, status FROM provisioning_operations WHERE tenant_id <> ?',
    [s.tenantId],
  );
  const known = new Set(tenants.map((x) => x.id));
  t.deepEqual(
    acked.filter((id) => !known.has(id)),
    [],
    'every acknowledged tenant exists',
  );
  t.deepEqual(
    tenants.filter((x) => x.lifecycle_state !== 'active'),
    [],
  );
  t.is(ops.length, tenants.length, 'one operation per tenant');
  t.deepEqual([...new Set(ops.map((o) => o.tenant_id))].sort(), [...known].sort());
  for (const op of ops) {
    const steps = await all<{ step_key: string; status: string }>(
      ds,
      'SELECT step_key, status FROM provisioning_steps WHERE operation_id = ?',
      [op.id],
    );
    t.is(steps.length, 5);
    t.true(
      steps.every((x) => x.status === 'completed'),
      `${op.id}: ${JSON.stringify(steps)}`,
    );
    const done = await all<{ step_key: string; n: unknown }>(
      ds,
      'SELECT step_key, COUNT(*) AS n FROM provisioning_events ' +
        "WHERE operation_id = ? AND event_type = 'completed' AND step_key IS NOT NULL GROUP BY step_key",
      [op.id],
    );
    t.true(
      done.length === 5 && done.every((x) => Number(x.n) === 1),
      `${op.id}: each step completed once ${JSON.stringify(done)}`,
    );
  }
  t.log(`${tenants.length} tenants in the database, ${acked.length} acknowledged; all active`);
});
