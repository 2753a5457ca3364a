/**
 * SIGKILL during tenant recovery's writes (faults lane; SQLite and MariaDB; docs/recovery.md).
 * The write of a recovery that runs long is verify's lookup reprojection: the tenant's routing
 * registry rebuilt in keyset batches, each batch's rows and cursor committed together, under a
 * 60 s lease. Here a tenant with 1,000 users is recovered:
 *   - `iam recovery verify` is killed (SIGKILL) mid-scan: the committed batches are exactly the
 *     rows projected (no batch half-written), the dead run's lease still stands; once it has
 *     expired (the test lets the minute pass), verify again resumes after the last committed
 *     batch, not from the start, and completes with every user and client projected and
 *     verified once;
 *   - the daemon is killed just after a reactivation request is sent: after a restart on the
 *     same database the operation is either untouched (stabilizing, tenant still recovering) or
 *     wholly reactivated, never in between; reactivating again (same Idempotency-Key) leaves it
 *     reactivated with one `tenant.recovery.reactivate` audit event, and the tenant serves.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { all } from '../../shared/db/sql.js';
import { createTestDatabase, TEST_SECRET_KEY, type TestDb } from '../helpers/db.js';
import { CLI_BIN, startDaemon, type Daemon } from '../helpers/daemon.js';
import { iam } from '../helpers/cli.js';
import { activeTenant, clientCredentialsToken, openServices, seed } from '../helpers/seed.js';

const USERS = 1_000;
const BATCH = 20;

let db: TestDb;
const daemons: Daemon[] = [];
test.after.always(async () => {
  for (const d of daemons) await d.stop('SIGKILL');
  await db?.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface OpRow {
  state: string;
  lookup_stage: string;
  lookup_projected_rows: unknown;
  lookup_verified_rows: unknown;
  lookup_registry_generation: unknown;
  lease_owner: string | null;
  lease_expires_at: unknown;
}

test('SIGKILL mid verify and mid reactivation: resumes from the last committed batch, never half-reactivated', async (t) => {
  t.timeout(240_000);
  db = await createTestDatabase();
  const s = await seed(db.url, db.dir);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const actor = { type: 'system' as const, id: 'test' };
  const ten = await activeTenant(provisioning, { name: 'Recovered' }, actor);
  const worker = await directory.createClient(
    ten.id,
    { name: 'worker', grant_types: ['client_credentials'], scopes: ['api'] },
    actor,
  );
  // Users in bulk, as a restore would leave them.
  const now = Date.now();
  for (let i = 0; i < USERS; i += 500) {
    const rows = Array.from({ length: Math.min(500, USERS - i) }, (_, j) => i + j);
    await ds.query(
      `INSERT INTO users (id, tenant_id, email, name, status, created_at, updated_at) VALUES ${rows
        .map(() => '(?, ?, ?, ?, ?, ?, ?)')
        .join(', ')}`,
      rows.flatMap((k) => [
        `usr_rec${String(k).padStart(6, '0')}`,
        ten.id,
        `r${k}@example.com`,
        `R ${k}`,
        'active',
        now + k,
        now + k,
      ]),
    );
  }
  const registry = USERS + 1; // the users and the one client

  let d = await startDaemon(db.url, db.dir, { IAM_RECOVERY_STABILIZATION_SECONDS: '0' });
  const issuer = d.url;
  // The daemon started again listens where this one did (same issuer).
  const env = { IAM_PORT: String(d.port), IAM_RECOVERY_STABILIZATION_SECONDS: '0' };
  daemons.push(d);

  const cli = async (args: string[]) => {
    const r = await iam(db, [...args, '--json'], { IAM_ISSUER: issuer, IAM_RECOVERY_STABILIZATION_SECONDS: '0' });
    if (r.code !== 0) throw new Error(`iam ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
    return { body: JSON.parse(r.stdout) as { recovery: Record<string, any> }, stderr: r.stderr };
  };
  const op = (await cli(['recovery', 'start', '--tenant', ten.id, '--reason', 'fault test'])).body.recovery;
  const opId = String(op.operationId);
  const drain = Number(op.drainNotBefore) - Date.now();
  // A clock to pass: the service refuses the confirmation before drainNotBefore.
  if (drain > 0) await sleep(drain + 50);
  await cli(['recovery', 'confirm-restore', '--operation', opId, '--restore-reference', 'snap-fault']);

  const opRow = async () => (await all<OpRow>(ds, 'SELECT * FROM tenant_recovery_operations WHERE id = ?', [opId]))[0];
  const generationRows = async (gen: unknown) =>
    Number(
      (
        await all<{ n: unknown }>(
          ds,
          'SELECT COUNT(*) AS n FROM tenant_lookup_rows WHERE tenant_id = ? AND registry_generation = ?',
          [ten.id, gen],
        )
      )[0].n,
    );

  // 1. verify, killed mid-scan by the signal a crash or an OOM kill would be.
  const proc = spawn(
    process.execPath,
    [CLI_BIN, 'recovery', 'verify', '--operation', opId, '--batch-size', String(BATCH), '--json'],
    {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        IAM_DATABASE_URL: db.url,
        IAM_SECRET_KEY: TEST_SECRET_KEY,
        IAM_DATA_DIR: db.dir,
        IAM_ISSUER: issuer,
        IAM_RECOVERY_STABILIZATION_SECONDS: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise((r) => proc.once('close', r));
  let scanned = 0;
  let err = '';
  await new Promise<void>((resolve) => {
    proc.stderr.on('data', (b: Buffer) => {
      err += b.toString();
      scanned = (err.match(/^lookup scan batch/gm) ?? []).length;
      if (scanned >= 10) resolve();
    });
    void exited.then(() => resolve());
  });
  proc.kill('SIGKILL');
  await exited;
  t.true(scanned >= 10, `verify reached the scan:\n${err}`);

  const killed = await opRow();
  t.is(killed.state, 'verifying');
  t.is(killed.lookup_stage, 'scan', 'killed mid-scan');
  const projected = Number(killed.lookup_projected_rows);
  t.true(projected > 0 && projected < registry, `projected ${projected} of ${registry}`);
  t.is(projected % BATCH, 0, 'whole batches only');
  t.is(await generationRows(killed.lookup_registry_generation), projected, 'the committed batches, nothing more');
  t.truthy(killed.lease_owner, 'the dead run still holds the lease');

  // The dead run's lease expires (a minute; the test lets it pass), and verify resumes.
  await ds.query('UPDATE tenant_recovery_operations SET lease_expires_at = ? WHERE id = ?', [Date.now() - 1, opId]);
  const resumed = await cli(['recovery', 'verify', '--operation', opId, '--batch-size', String(BATCH)]);
  const first = /^lookup scan batch \d+: \d+ rows \(projected (\d+)/m.exec(resumed.stderr);
  t.truthy(first, resumed.stderr);
  t.is(Number(first![1]), projected + BATCH, 'the resumed run continues after the last committed batch');
  const done = await opRow();
  t.is(done.state, 'stabilizing');
  t.is(Number(done.lookup_projected_rows), registry);
  t.is(Number(done.lookup_verified_rows), registry);
  t.is(await generationRows(done.lookup_registry_generation), registry);

  // 2. the daemon killed just after a reactivation is sent.
  const platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  const key = randomUUID();
  const reactivate = (base: string, token: string) =>
    fetch(`${base}/api/admin/platform/control-plane/tenant-recovery/${opId}/reactivate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ confirmation: `REACTIVATE_RECOVERED_TENANT:${ten.id}` }),
    });
  const inFlight = reactivate(d.url, platform).then(
    (r) => r.status,
    () => 0,
  );
  // A random moment for the kill, by design: not a condition.
  await sleep(Math.floor(Math.random() * 80));
  await d.stop('SIGKILL');
  const answered = await inFlight;
  const atKill = await opRow();
  const [tenantAtKill] = await all<{ lifecycle_state: string }>(
    ds,
    'SELECT lifecycle_state FROM tenants WHERE id = ?',
    [ten.id],
  );
  t.log(`reactivation answered ${answered || 'nothing'} before the kill; operation ${atKill.state}`);
  if (answered === 200) t.is(atKill.state, 'reactivated', 'an acknowledged reactivation is kept');
  // All or nothing: the state of the operation and of the tenant move together.
  t.true(
    (atKill.state === 'stabilizing' && tenantAtKill.lifecycle_state === 'recovering') ||
      (atKill.state === 'reactivated' && tenantAtKill.lifecycle_state === 'active'),
    `${atKill.state} / ${tenantAtKill.lifecycle_state}`,
  );

  d = await startDaemon(db.url, db.dir, env);
  daemons.push(d);
  const platform2 = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  let again = await reactivate(d.url, platform2);
  if (again.status === 409) {
    // The dead daemon's claim on the key: an `in_flight` row, which by design means nothing
    // committed (the answer is recorded in the change's transaction). A retry takes it over
    // once it is older than any request lives (IDEMPOTENCY_ABANDONED_MS, 2 minutes); the test
    // lets that time pass.
    t.is(((await again.json()) as { error: string }).error, 'idempotency_in_flight');
    t.is(atKill.state, 'stabilizing', 'an in-flight key only where nothing committed');
    await ds.query("UPDATE idempotency_keys SET created_at = ? WHERE idem_key = ? AND status = 'in_flight'", [
      Date.now() - 10 * 60_000,
      key,
    ]);
    again = await reactivate(d.url, platform2);
  }
  // Reactivated now, or the committed reactivation's answer replayed.
  t.is(again.status, 200, await again.clone().text());
  const final = await opRow();
  t.is(final.state, 'reactivated');
  const audits = await all<{ n: unknown }>(
    ds,
    "SELECT COUNT(*) AS n FROM audit_events WHERE action = 'tenant.recovery.reactivate' AND outcome = 'success'",
  );
  t.is(Number(audits[0].n), 1, 'reactivated once');
  // The tenant serves again.
  await clientCredentialsToken(d.url, worker.client.client_id, worker.client_secret!);
});
