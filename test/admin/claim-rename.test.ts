/**
 * PATCH (and GET) /api/admin/custom-claims/{id}/rename: authentication and tenant reach, every
 * refusal with its own error code, and a rename that completes with the stored values moved
 * to the new key (none left under the old one), the schema `active` again, and the audit event.
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { activeTenant, clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';
import {
  actor,
  insertSchema,
  pollRename,
  renameCall,
  seedValues,
  userId,
  valueOf,
  valuesUnder,
} from '../helpers/claim-rename.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let services: Awaited<ReturnType<typeof openServices>>;
let platform: string;
let tenantAdmin: string;
let noScope: string;
let otherTenantId: string;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  services = await openServices(db.url, db.dir);
  const { ds, directory, provisioning } = services;
  otherTenantId = (await activeTenant(provisioning, { name: 'Other' }, actor)).id;
  const reporter = await directory.createClient(
    s.tenantId,
    { name: 'reporter', grant_types: ['client_credentials'], scopes: ['reports.read'] },
    actor,
  );
  await insertSchema(ds, s.tenantId, 'ccs_dept', 'department');
  await insertSchema(ds, s.tenantId, 'ccs_cost', 'cost_center');
  await insertSchema(ds, s.tenantId, 'ccs_sys', 'locale_pref', { system: true });
  await insertSchema(ds, otherTenantId, 'ccs_other', 'badge');
  await seedValues(ds, s.tenantId, 'department', 1200);
  // Exactly the inline bound (INLINE_RENAME_MAX_USERS), on other users.
  await insertSchema(ds, s.tenantId, 'ccs_small', 'team_name');
  await seedValues(ds, s.tenantId, 'team_name', 1000, 5000);
  d = await startDaemon(db.url, db.dir);
  platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  tenantAdmin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
  noScope = await clientCredentialsToken(d.url, reporter.client.client_id, reporter.client_secret!);
});
test.after.always(async () => {
  await d?.stop();
  await services?.ds.destroy();
  await db?.drop();
});

test.serial(
  '401 without a token (before the body is validated), 403 without an admin scope or for another tenant',
  async (t) => {
    const none = await renameCall(d.url, 'PATCH', undefined, 'ccs_dept', { nope: 1 });
    t.is(none.status, 401);
    t.is(none.body.error, 'invalid_token');
    const scope = await renameCall(d.url, 'PATCH', noScope, 'ccs_dept', { new_field_key: 'division' });
    t.is(scope.status, 403);
    t.is(scope.body.error, 'insufficient_scope');
    const other = await renameCall(
      d.url,
      'PATCH',
      tenantAdmin,
      'ccs_other',
      { new_field_key: 'x_badge' },
      otherTenantId,
    );
    t.is(other.status, 403);
    t.is(other.body.error, 'tenant_forbidden');
    // Another tenant's schema named with the caller's own tenant: not found, not renamed.
    const foreign = await renameCall(d.url, 'PATCH', tenantAdmin, 'ccs_other', { new_field_key: 'x_badge' });
    t.is(foreign.status, 404);
    t.is(foreign.body.error, 'not_found');
  },
);

test.serial('refusals, each with its own error code; none of them changes the schema', async (t) => {
  const cases: [string, unknown, number, string][] = [
    ['ccs_dept', {}, 400, 'invalid_request'],
    ['ccs_dept', { new_field_key: 'division', extra: true }, 400, 'invalid_request'],
    ['ccs_dept', { new_field_key: 42 }, 400, 'invalid_request'],
    ['ccs_dept', { new_field_key: '' }, 400, 'invalid_request'],
    ['ccs_dept', { new_field_key: 'x'.repeat(201) }, 400, 'invalid_request'],
    ['ccs_dept', { new_field_key: '9lives' }, 400, 'invalid_claim_key'],
    ['ccs_dept', { new_field_key: 'has-dash' }, 400, 'invalid_claim_key'],
    ['ccs_dept', { new_field_key: 'a'.repeat(65) }, 400, 'invalid_claim_key'],
    ['ccs_dept', { new_field_key: 'sub' }, 400, 'reserved_claim_key'],
    ['ccs_dept', { new_field_key: 'auth_time' }, 400, 'reserved_claim_key'],
    ['ccs_dept', { new_field_key: 'tenant_id' }, 400, 'reserved_claim_key'],
    ['ccs_dept', { new_field_key: 'department' }, 400, 'same_field_key'],
    ['ccs_nope', { new_field_key: 'division' }, 404, 'not_found'],
    ['ccs_sys', { new_field_key: 'locale_choice' }, 409, 'system_claim_schema'],
    ['ccs_dept', { new_field_key: 'cost_center' }, 409, 'claim_key_conflict'],
  ];
  for (const [id, body, status, error] of cases) {
    const r = await renameCall(d.url, 'PATCH', tenantAdmin, id, body);
    t.is(r.status, status, `${id} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
    t.is(r.body.error, error, `${id} ${JSON.stringify(body)}`);
    if (status === 400 && error !== 'invalid_request') t.regex(r.body.message, /new_field_key/);
  }
  const rows = await services.ds.query<{ field_key: string; operation_status: string }[]>(
    "SELECT field_key, operation_status FROM custom_claim_schemas WHERE id IN ('ccs_dept', 'ccs_sys') ORDER BY id",
  );
  t.deepEqual(
    rows.map((r) => [r.field_key, r.operation_status]),
    [
      ['department', 'active'],
      ['locale_pref', 'active'],
    ],
  );
  const none = await renameCall(d.url, 'GET', tenantAdmin, 'ccs_dept');
  t.is(none.status, 404);
});

test.serial(
  'a rename of more than 1,000 values is accepted (202, renaming), completes, and moves every value',
  async (t) => {
    const r = await renameCall(d.url, 'PATCH', platform, 'ccs_dept', { new_field_key: 'division' }, s.tenantId);
    t.is(r.status, 202, JSON.stringify(r.body));
    t.is(r.body.old_key, 'department');
    t.is(r.body.new_key, 'division');
    t.is(r.body.affected_users, 1200);
    t.is(r.body.schema.id, 'ccs_dept');
    t.is(r.body.schema.operation_status, 'renaming');
    t.is(r.body.operation.affected_users, 1200);
    t.regex(r.body.operation.id, /^cro_/);

    // While it runs, the new key is held: another claim may not take it, nor rename again.
    const again = await renameCall(d.url, 'PATCH', tenantAdmin, 'ccs_cost', { new_field_key: 'division' });
    if (again.status === 409) t.is(again.body.error, 'claim_key_conflict');
    else t.fail(`expected 409, got ${again.status}`);

    const done = await pollRename(d.url, tenantAdmin, 'ccs_dept', (b) => b.operation.state === 'completed');
    t.is(done.schema.field_key, 'division');
    t.is(done.schema.operation_status, 'active');
    t.is(done.operation.copied_count, 1200);
    t.is(done.operation.deleted_count, 1200);
    t.is(done.operation.error_code, null);
    t.true(done.operation.completed_at >= done.operation.created_at);

    const moved = await valuesUnder(services.ds, s.tenantId, 'division');
    t.is(moved.size, 1200);
    for (let i = 0; i < 1200; i++) t.is(moved.get(userId(i)), valueOf(i));
    t.is((await valuesUnder(services.ds, s.tenantId, 'department')).size, 0);

    const audit = await services.ds.query<{ action: string; target_id: string }[]>(
      "SELECT action, target_id FROM audit_events WHERE action = 'custom_claim.rename'",
    );
    t.deepEqual(
      audit.map((a) => [a.action, a.target_id]),
      [['custom_claim.rename', 'ccs_dept']],
    );

    // The old key is free again: another claim may now take it (no values: finished in the request).
    const back = await renameCall(d.url, 'PATCH', tenantAdmin, 'ccs_cost', { new_field_key: 'department' });
    t.is(back.status, 200, JSON.stringify(back.body));
    t.is(back.body.affected_users, 0);
    t.is(back.body.schema.field_key, 'department');
  },
);

test.serial(
  'a rename of at most 1,000 values finishes in the request: 200, the schema under its new key, values moved',
  async (t) => {
    const r = await renameCall(d.url, 'PATCH', tenantAdmin, 'ccs_small', { new_field_key: 'squad' });
    // Interface specification, "States and transitions": `field_key` becomes `new_field_key`.
    t.is(r.status, 200, JSON.stringify(r.body));
    t.is(r.body.schema.id, 'ccs_small');
    t.is(r.body.schema.field_key, 'squad');
    t.is(r.body.schema.operation_status, 'active');
    t.is(r.body.affected_users, 1000);
    t.is(r.body.old_key, 'team_name');
    t.is(r.body.new_key, 'squad');
    t.is(r.body.operation.state, 'completed');
    t.is(r.body.operation.copied_count, 1000);
    t.is(r.body.operation.deleted_count, 1000);
    const moved = await valuesUnder(services.ds, s.tenantId, 'squad');
    t.is(moved.size, 1000);
    t.is(moved.get(userId(5000)), valueOf(5000));
    t.is((await valuesUnder(services.ds, s.tenantId, 'team_name')).size, 0);
    // The work was the runner's: the operation row holds it, lease released, keys free.
    const keys = await services.ds.query<{ n: number }[]>(
      "SELECT COUNT(*) AS n FROM claim_key_reservations WHERE field_key IN ('team_name', 'squad')",
    );
    t.is(Number(keys[0].n), 0);
    const status = await renameCall(d.url, 'GET', tenantAdmin, 'ccs_small');
    t.is(status.body.operation.id, r.body.operation.id);
    t.is(status.body.operation.state, 'completed');
  },
);
