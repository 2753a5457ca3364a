/**
 * Operational notification states at the service level (shared/services/notification-states.ts):
 * one open state per condition and subject, kept by the database; automatic clear; an operator's
 * resolve, its replay, and the quiet that follows it until the condition ends.
 */
import test from 'ava';
import { NotificationStates } from '../../shared/services/notification-states.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

const actor = { type: 'system' as const, id: 'test' };
const source = { type: 'federation_trust_source', id: 'fts_test' };

async function world(t: Parameters<typeof testDatabase>[0]) {
  const db = await testDatabase(t);
  const services = await openServices(db.url, db.dir);
  t.teardown(() => services.ds.destroy());
  const tenant = await activeTenant(services.provisioning, { name: 'N' }, actor);
  return { ds: services.ds, tenantId: tenant.id, states: new NotificationStates(services.ds) };
}

test('raise opens one state per condition and subject; repeats refresh it, never duplicate it', async (t) => {
  const { tenantId, states, ds } = await world(t);
  const first = await states.raise(tenantId, 'metadata_expiring', source, { daysLeft: 6 });
  t.is(first.outcome, 'opened');
  const again = await states.raise(tenantId, 'metadata_expiring', source, { daysLeft: 5 });
  t.deepEqual(again, { id: first.id, outcome: 'refreshed' });
  // Raised concurrently: still one open row.
  await Promise.all(
    Array.from({ length: 5 }, () => states.raise(tenantId, 'metadata_expiring', source, { daysLeft: 5 })),
  );
  const open = await states.list(tenantId, { state: 'open' });
  t.is(open.length, 1);
  t.is(open[0].occurrences, 7);
  t.deepEqual(open[0].details, { daysLeft: 5 });
  // Another condition of the same subject is its own state.
  await states.raise(tenantId, 'refresh_failing', source, { failures: 3 });
  t.is((await states.list(tenantId, { state: 'open' })).length, 2);
  t.is((await states.list(tenantId, { condition: 'refresh_failing' })).length, 1);
  // The database itself refuses a second open row for the key.
  await t.throwsAsync(() =>
    ds.query(
      `INSERT INTO operational_notification_states (id, tenant_id, condition_code, subject_type, subject_id, state,
        details, raise_count, raised_at, updated_at, open_key) VALUES ('ons_dup', ?, 'metadata_expiring', 'x', 'y',
        'open', '{}', 1, 1, 1, ?)`,
      [tenantId, 'metadata_expiring:federation_trust_source:fts_test'],
    ),
  );
});

test('clear resolves the open state automatically; a later raise opens a new one', async (t) => {
  const { tenantId, states } = await world(t);
  const first = await states.raise(tenantId, 'metadata_expired', source);
  t.true(await states.clear(tenantId, 'metadata_expired', source));
  t.false(await states.clear(tenantId, 'metadata_expired', source));
  const cleared = await states.get(tenantId, first.id!);
  t.is(cleared.state, 'resolved');
  t.is(cleared.resolution, 'automatic');
  t.is(typeof cleared.resolvedAt, 'number');
  const next = await states.raise(tenantId, 'metadata_expired', source);
  t.is(next.outcome, 'opened');
  t.not(next.id, first.id);
});

test('an operator resolve returns the previous state; a second is idempotent; the condition stays quiet until it ends', async (t) => {
  const { tenantId, states } = await world(t);
  const raised = await states.raise(tenantId, 'signing_identity_changed', source, { fingerprint: 'ab' });
  const r1 = await states.resolve(tenantId, raised.id!, 'alice', actor);
  t.deepEqual(r1, { result: { id: raised.id!, previousState: 'open', state: 'resolved', idempotent: false } });
  const r2 = await states.resolve(tenantId, raised.id!, 'bob', actor);
  t.deepEqual(r2, { result: { id: raised.id!, previousState: 'resolved', state: 'resolved', idempotent: true } });
  const view = await states.get(tenantId, raised.id!);
  t.is(view.assignedTo, 'alice');
  t.is(view.resolution, 'operator');
  // Still holding: the next poll's raise does not reopen what the operator dealt with.
  t.deepEqual(await states.raise(tenantId, 'signing_identity_changed', source), { id: null, outcome: 'quiet' });
  // It ended, then came back: a new state.
  await states.clear(tenantId, 'signing_identity_changed', source);
  t.is((await states.raise(tenantId, 'signing_identity_changed', source)).outcome, 'opened');
  await t.throwsAsync(() => states.resolve(tenantId, 'ons_nope', null, actor), { message: /was not found/ });
});
