/**
 * Suspend and resume of a tenant that is being provisioned (docs/tenant-lifecycle.md, "Moves").
 * The interface specification's only condition for a suspend is that `expected_state` and
 * `expected_updated_at` equal the tenant's current values, so a `provisioning` tenant with
 * matching values is suspended; its provisioning pauses (the runner neither works nor activates
 * it, and counts nothing) and a resume takes it back to `provisioning`, where the runner
 * carries on to `active`. The runner is driven in-process (no daemon job races the test).
 */
import test from 'ava';
import { TenantLifecycleService } from '../../shared/services/tenant-lifecycle.js';
import { createTestDatabase, testDatabase, type TestDb } from '../helpers/db.js';
import { freePort, startDaemon, type Daemon } from '../helpers/daemon.js';
import { clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';
import { api } from '../helpers/api.js';

const actor = { type: 'system' as const, id: 'test' };

async function lifecycle(ds: Awaited<ReturnType<typeof openServices>>['ds'], id: string) {
  const [row] = await ds.query<{ lifecycle_state: string; updated_at: unknown }[]>(
    'SELECT lifecycle_state, updated_at FROM tenants WHERE id = ?',
    [id],
  );
  return { state: row.lifecycle_state, updatedAt: Number(row.updated_at) };
}

// The HTTP test's daemon cannot finish a provisioning (its mail relay is down, and a failed
// step waits 5 minutes), so a tenant created for it stays `provisioning` whatever its job does.
let db: TestDb;
let s: Seeded;
let d: Daemon;
let platform: string;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  d = await startDaemon(db.url, db.dir, {
    IAM_SMTP_URL: `smtp://127.0.0.1:${await freePort()}`,
    IAM_PROVISIONING_RETRY_BASE_MS: '300000',
    IAM_PROVISIONING_MAX_ATTEMPTS: '100',
  });
  platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

const post = (path: string, body: unknown) => api(d.url, 'POST', path, { body, token: platform });

test('POST suspend of a provisioning tenant with matching values: 200 suspended; resume: back to provisioning', async (t) => {
  const services = await openServices(db.url, db.dir);
  t.teardown(() => services.ds.destroy());
  const { tenant } = await services.provisioning.createTenant({ name: 'Being provisioned' }, actor);
  const before = await lifecycle(services.ds, tenant.id);
  t.is(before.state, 'provisioning');

  const r = await post(`/api/admin/tenants/${tenant.id}/lifecycle/suspend`, {
    expected_state: 'provisioning',
    expected_updated_at: before.updatedAt,
    reason: 'hold the rollout',
  });
  t.is(r.status, 200, JSON.stringify(r.body));
  t.is(r.body.lifecycle_state, 'suspended');
  t.is(r.body.status, 'completed');
  const suspended = await lifecycle(services.ds, tenant.id);
  t.is(suspended.state, 'suspended');
  const [auditRow] = await services.ds.query<{ summary: string }[]>(
    "SELECT summary FROM audit_events WHERE action = 'tenant.suspend' AND target_id = ?",
    [tenant.id],
  );
  const summary = JSON.parse(String(auditRow.summary)) as { before: { lifecycle_state: string } };
  t.is(summary.before.lifecycle_state, 'provisioning');

  // Suspending a suspended tenant, its values matching: there is no such move.
  const again = await post(`/api/admin/tenants/${tenant.id}/lifecycle/suspend`, {
    expected_state: 'suspended',
    expected_updated_at: suspended.updatedAt,
    reason: 'again',
  });
  t.is(again.status, 409);
  t.is(again.body.error, 'lifecycle_move_not_allowed');
  t.is(again.body.lifecycle_state, 'suspended');

  // The provisioning has not completed: resume goes back to provisioning, not to active.
  const resumed = await post(`/api/admin/tenants/${tenant.id}/lifecycle/resume`, {
    expected_state: 'suspended',
    expected_updated_at: suspended.updatedAt,
    reason: 'go on',
  });
  t.is(resumed.status, 200, JSON.stringify(resumed.body));
  t.is(resumed.body.lifecycle_state, 'provisioning');
  t.is((await lifecycle(services.ds, tenant.id)).state, 'provisioning');
});

test('provisioning pauses while the tenant is suspended and carries on to active after resume', async (t) => {
  const own = await testDatabase(t);
  const { ds, provisioning } = await openServices(own.url, own.dir);
  t.teardown(() => ds.destroy());
  const tenants = new TenantLifecycleService(ds);
  const { tenant, operation } = await provisioning.createTenant({ name: 'Paused' }, actor);
  const before = await lifecycle(ds, tenant.id);
  const job = await tenants.move(
    tenant.id,
    'suspend',
    { expected_state: 'provisioning', expected_updated_at: before.updatedAt, reason: 'pause' },
    actor,
  );
  t.is(job.lifecycle_state, 'suspended');

  // The job's queue skips it, and a runner that claims it directly (as `iam tenants create`
  // does) hands it back: no step attempted, nothing counted, the tenant still suspended.
  t.is(await provisioning.runDue(), 0);
  t.true(await provisioning.advance(operation.operation_id));
  const paused = await provisioning.latest(tenant.id);
  t.is(paused.status, 'queued');
  t.is(paused.attempt_count, 0);
  t.is(paused.last_error_code, null);
  t.true(paused.steps.every((st) => st.status === 'pending' && st.attempt_count === 0));
  t.is((await lifecycle(ds, tenant.id)).state, 'suspended');
  // A waiting caller (`iam tenants create`) runs nothing either; it returns at its timeout.
  const waited = await provisioning.waitFor(tenant.id, { timeoutMs: 300 });
  t.is(waited.status, 'queued');
  t.is(waited.attempt_count, 0);

  const suspended = await lifecycle(ds, tenant.id);
  const back = await tenants.move(
    tenant.id,
    'resume',
    { expected_state: 'suspended', expected_updated_at: suspended.updatedAt, reason: 'go on' },
    actor,
  );
  t.is(back.lifecycle_state, 'provisioning');
  t.is(await provisioning.runDue(), 1);
  const done = await provisioning.latest(tenant.id);
  t.is(done.status, 'completed');
  t.is((await lifecycle(ds, tenant.id)).state, 'active');
});

test('a tenant suspended between two steps: the run stops before the next one, counting nothing', async (t) => {
  const own = await testDatabase(t);
  const { ds, provisioning } = await openServices(own.url, own.dir);
  t.teardown(() => ds.destroy());
  const tenants = new TenantLifecycleService(ds);
  const { tenant, operation } = await provisioning.createTenant({ name: 'Midway' }, actor);
  let suspendedOnce = false;
  await provisioning.advance(operation.operation_id, undefined, async () => {
    if (suspendedOnce) return;
    suspendedOnce = true;
    const cur = await lifecycle(ds, tenant.id);
    await tenants.move(
      tenant.id,
      'suspend',
      { expected_state: 'provisioning', expected_updated_at: cur.updatedAt, reason: 'midway' },
      actor,
    );
  });
  const op = await provisioning.latest(tenant.id);
  t.is(op.status, 'queued');
  t.is(op.last_error_code, null);
  t.deepEqual(
    op.steps.map((st) => [st.step_key, st.status]),
    [
      ['request_accepted', 'completed'],
      ['schema_verified', 'pending'],
      ['signing_key_ready', 'pending'],
      ['mail_transport_verified', 'pending'],
      ['tenant_activated', 'pending'],
    ],
  );
  t.is((await lifecycle(ds, tenant.id)).state, 'suspended');
});

test('no move from recovering; resume of an active tenant is refused with lifecycle_move_not_allowed', async (t) => {
  const own = await testDatabase(t);
  const { ds, provisioning } = await openServices(own.url, own.dir);
  t.teardown(() => ds.destroy());
  const tenants = new TenantLifecycleService(ds);
  const { tenant } = await provisioning.createTenant({ name: 'Recovering' }, actor);
  // As the recovery service leaves it (docs/recovery.md); the move table is what is tested here.
  await ds.query("UPDATE tenants SET lifecycle_state = 'recovering' WHERE id = ?", [tenant.id]);
  const cur = await lifecycle(ds, tenant.id);
  for (const action of ['suspend', 'resume'] as const) {
    const e = await t.throwsAsync(
      tenants.move(
        tenant.id,
        action,
        { expected_state: 'recovering', expected_updated_at: cur.updatedAt, reason: 'x' },
        actor,
      ),
    );
    t.is((e as { error?: string }).error, 'lifecycle_move_not_allowed', action);
  }
  await ds.query("UPDATE tenants SET lifecycle_state = 'active' WHERE id = ?", [tenant.id]);
  const e = await t.throwsAsync(
    tenants.move(
      tenant.id,
      'resume',
      { expected_state: 'active', expected_updated_at: cur.updatedAt, reason: 'x' },
      actor,
    ),
  );
  t.is((e as { error?: string }).error, 'lifecycle_move_not_allowed');
  t.is((await lifecycle(ds, tenant.id)).state, 'active');
});
