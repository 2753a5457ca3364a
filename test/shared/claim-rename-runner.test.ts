/**
 * The claim rename runner in-process (no daemon): a lease held by another runner is left
 * alone until it expires, then taken over; a switch that cannot happen (the schema changed
 * under the rename) ends the operation `failed` with its error code, the schema at its old key
 * and `active`, the copies under the new key gone and the keys free again.
 */
import test from 'ava';
import { ClaimRenameService } from '../../shared/services/claim-rename.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';
import { actor, insertSchema, seedValues, valuesUnder } from '../helpers/claim-rename.js';

async function world(t: Parameters<typeof testDatabase>[0]) {
  const db = await testDatabase(t);
  const services = await openServices(db.url, db.dir);
  t.teardown(() => services.ds.destroy());
  const tenant = await activeTenant(services.provisioning, { name: 'Runner' }, actor);
  await insertSchema(services.ds, tenant.id, 'ccs_r', 'region');
  await seedValues(services.ds, tenant.id, 'region', 450);
  // Never inline: these tests drive the accepted operation themselves.
  const runner = new ClaimRenameService(services.ds, {
    options: { batchSize: 100, inlineMaxUsers: 0 },
    holder: 'runner-1',
  });
  return { ds: services.ds, tenantId: tenant.id, runner };
}

test('a lease held by another runner is left alone until it expires, then taken over', async (t) => {
  const { ds, tenantId, runner } = await world(t);
  const { operation } = await runner.start(tenantId, 'ccs_r', { new_field_key: 'area' }, actor);
  await ds.query("UPDATE claim_rename_operations SET lease_holder = 'runner-0', lease_until = ? WHERE id = ?", [
    Date.now() + 60_000,
    operation.id,
  ]);
  t.false(await runner.runOne(tenantId, operation.id));
  t.is((await valuesUnder(ds, tenantId, 'area')).size, 0);
  // Its holder died: the lease runs out, and this runner resumes the work to the end.
  await ds.query('UPDATE claim_rename_operations SET lease_until = ? WHERE id = ?', [Date.now() - 1, operation.id]);
  t.true(await runner.runOne(tenantId, operation.id));
  const done = await runner.status(tenantId, 'ccs_r');
  t.is(done.operation.state, 'completed');
  t.is(done.operation.copied_count, 450);
  t.is(done.schema.field_key, 'area');
  t.is((await valuesUnder(ds, tenantId, 'area')).size, 450);
  t.is((await valuesUnder(ds, tenantId, 'region')).size, 0);
});

test('a switch that cannot happen fails the rename: old key kept, copies deleted, keys released', async (t) => {
  const { ds, tenantId, runner } = await world(t);
  const { operation } = await runner.start(tenantId, 'ccs_r', { new_field_key: 'zone' }, actor);
  // The schema is changed behind the rename's back (no longer `renaming`).
  await ds.query("UPDATE custom_claim_schemas SET operation_status = 'active' WHERE id = 'ccs_r'");
  t.true(await runner.runOne(tenantId, operation.id));
  const failed = await runner.status(tenantId, 'ccs_r');
  t.is(failed.operation.state, 'failed');
  t.is(failed.operation.error_code, 'schema_changed');
  t.is(failed.schema.field_key, 'region');
  t.is(failed.schema.operation_status, 'active');
  t.is((await valuesUnder(ds, tenantId, 'zone')).size, 0);
  t.is((await valuesUnder(ds, tenantId, 'region')).size, 450);
  t.is((await ds.query('SELECT COUNT(*) AS n FROM claim_key_reservations'))[0].n, 0);
  const audit = await ds.query<{ action: string; outcome: string }[]>(
    "SELECT action, outcome FROM audit_events WHERE action LIKE 'custom_claim.rename%' ORDER BY created_at",
  );
  t.deepEqual(
    audit.map((a) => [a.action, a.outcome]),
    [
      ['custom_claim.rename', 'success'],
      ['custom_claim.rename.failed', 'failure'],
    ],
  );
  // The keys are free: the schema can be renamed again, and this time it completes.
  const again = await runner.start(tenantId, 'ccs_r', { new_field_key: 'zone' }, actor);
  t.true(await runner.runOne(tenantId, again.operation.id));
  t.is((await runner.status(tenantId, 'ccs_r')).schema.field_key, 'zone');
});

test('a small rename runs in start under the lease it claimed on acceptance; if that run dies, another runner resumes it', async (t) => {
  const db = await testDatabase(t);
  const services = await openServices(db.url, db.dir);
  t.teardown(() => services.ds.destroy());
  const { ds } = services;
  const tenantId = (await activeTenant(services.provisioning, { name: 'Inline' }, actor)).id;
  await insertSchema(ds, tenantId, 'ccs_i', 'region');
  await seedValues(ds, tenantId, 'region', 450);
  // The process running the inline rename dies at once: nothing of the work is done.
  class Dying extends ClaimRenameService {
    override runOne(): Promise<boolean> {
      return Promise.reject(new Error('killed'));
    }
  }
  const dying = new Dying(ds, { options: { batchSize: 100 }, holder: 'inline-1' });
  const accepted = await dying.start(tenantId, 'ccs_i', { new_field_key: 'area' }, actor);
  t.is(accepted.operation.state, 'copying');
  t.is(accepted.schema.operation_status, 'renaming');
  // The lease was claimed with the acceptance: no other runner starts it while it is held.
  const [row] = await ds.query<{ lease_holder: string; lease_until: number }[]>(
    'SELECT lease_holder, lease_until FROM claim_rename_operations WHERE id = ?',
    [accepted.operation.id],
  );
  t.is(row.lease_holder, 'inline-1');
  const other = new ClaimRenameService(ds, { options: { batchSize: 100 }, holder: 'runner-2' });
  t.false(await other.runOne(tenantId, accepted.operation.id));
  // Its lease runs out: the job's runner resumes it to the end.
  await ds.query('UPDATE claim_rename_operations SET lease_until = ? WHERE id = ?', [
    Date.now() - 1,
    accepted.operation.id,
  ]);
  t.true(await other.runOne(tenantId, accepted.operation.id));
  const done = await other.status(tenantId, 'ccs_i');
  t.is(done.operation.state, 'completed');
  t.is(done.schema.field_key, 'area');
  t.is((await valuesUnder(ds, tenantId, 'area')).size, 450);
});

test('a small rename finishes in start: the schema under its new key, the operation completed', async (t) => {
  const db = await testDatabase(t);
  const services = await openServices(db.url, db.dir);
  t.teardown(() => services.ds.destroy());
  const { ds } = services;
  const tenantId = (await activeTenant(services.provisioning, { name: 'Inline' }, actor)).id;
  await insertSchema(ds, tenantId, 'ccs_i', 'region');
  await seedValues(ds, tenantId, 'region', 450);
  const r = await new ClaimRenameService(ds, { options: { batchSize: 100 } }).start(
    tenantId,
    'ccs_i',
    { new_field_key: 'area' },
    actor,
  );
  t.is(r.operation.state, 'completed');
  t.is(r.schema.field_key, 'area');
  t.is(r.schema.operation_status, 'active');
  t.is(r.affected_users, 450);
  t.is((await valuesUnder(ds, tenantId, 'region')).size, 0);
});
