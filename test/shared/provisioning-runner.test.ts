/**
 * The provisioning runner's claim: several runners (daemons, a waiting CLI) on one database
 * each run a step only if they won the operation's lease, so no step runs twice.
 */
import test from 'ava';
import { testDatabase } from '../helpers/db.js';
import { openServices } from '../helpers/seed.js';
import { KeyService } from '../../shared/services/keys.js';
import { createEmailProviders } from '../../shared/services/mail/index.js';
import { ProvisioningService } from '../../shared/services/provisioning/index.js';

const actor = { type: 'system' as const, id: 'test' };
const quiet = { info: () => undefined, warn: () => undefined };

test('concurrent runners: one claims the operation, every step runs once, the tenant is active', async (t) => {
  const db = await testDatabase(t);
  const a = await openServices(db.url, db.dir);
  const b = await openServices(db.url, db.dir);
  t.teardown(async () => {
    await a.ds.destroy();
    await b.ds.destroy();
  });
  const { tenant } = await a.provisioning.createTenant({ name: 'Raced' }, actor);
  const runners = [a, b, b].map(
    (s, i) =>
      new ProvisioningService(s.ds, {
        directory: s.directory,
        keys: new KeyService(s.ds, s.config.secretKey, s.config.keyRetireAfterSeconds),
        mail: createEmailProviders(s.config, quiet),
        options: { maxAttempts: 3, retryBaseMs: 10 },
        holder: `runner-${i}`,
      }),
  );
  const opId = (await a.provisioning.latest(tenant.id)).operation_id;
  const claimed = await Promise.all(runners.map((r) => r.advance(opId)));
  t.is(claimed.filter(Boolean).length, 1, 'one winner');
  const op = await a.provisioning.latest(tenant.id);
  t.is(op.status, 'completed');
  t.deepEqual(
    op.steps.map((s) => s.attempt_count),
    [1, 1, 1, 1, 1],
  );
  t.is(op.history.filter((e) => e.event === 'attempt').length, 5);
  t.is((await a.directory.requireTenant(tenant.id)).lifecycle_state, 'active');
  // Done is done: nobody claims a completed operation again.
  t.false(await runners[1].advance(opId));
  const activations = await a.ds.query<{ n: unknown }[]>(
    "SELECT COUNT(*) AS n FROM audit_events WHERE action = 'tenant.activate' AND target_id = ?",
    [tenant.id],
  );
  t.is(Number(activations[0].n), 1);
});

test('a live lease keeps other runners off; an expired one (a dead runner) is taken over', async (t) => {
  const db = await testDatabase(t);
  const s = await openServices(db.url, db.dir);
  t.teardown(() => s.ds.destroy());
  const { tenant, operation } = await s.provisioning.createTenant({ name: 'Leased' }, actor);
  // Another runner holds the lease (as a daemon would mid-step).
  await s.ds.query(
    "UPDATE provisioning_operations SET status = 'running', lease_holder = 'elsewhere', lease_until = ? WHERE id = ?",
    [Date.now() + 60_000, operation.operation_id],
  );
  t.false(await s.provisioning.advance(operation.operation_id));
  t.is((await s.provisioning.latest(tenant.id)).steps[0].attempt_count, 0);
  // That runner died: its lease ran out, and the operation is picked up where it was.
  await s.ds.query('UPDATE provisioning_operations SET lease_until = ? WHERE id = ?', [
    Date.now() - 1,
    operation.operation_id,
  ]);
  t.true(await s.provisioning.advance(operation.operation_id));
  t.is((await s.provisioning.latest(tenant.id)).status, 'completed');
});
