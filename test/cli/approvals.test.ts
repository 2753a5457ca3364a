/**
 * `iam relationships add|list|remove` and `iam approvals create|list|decide|cancel`, run as an
 * operator would with `--json`, against a real database; the admin API of a daemon on the same
 * database sees what the CLI wrote.
 */
import test from 'ava';
import { iam, iamJson } from '../helpers/cli.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { clientCredentialsToken, seed } from '../helpers/seed.js';
import { openServices } from '../helpers/seed.js';
import { api as apiCall } from '../helpers/api.js';

const actor = { type: 'system' as const, id: 'test' };
let db: TestDb;
let d: Daemon;
let tenantId: string;
let token: string;
const users: Record<string, string> = {};

test.before(async () => {
  db = await createTestDatabase();
  const s = await seed(db.url, db.dir);
  tenantId = s.tenantId;
  const { ds, directory } = await openServices(db.url, db.dir);
  for (const n of ['boss', 'worker', 'requester', 'peer'])
    users[n] = (await directory.createUser(tenantId, { email: `${n}@example.com`, name: n }, actor)).id;
  await ds.destroy();
  d = await startDaemon(db.url, db.dir);
  token = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

const api = (path: string) => apiCall(d.url, 'GET', path, { token }).then((r) => r.body);

test.serial('relationships add, list (both directions, --direction), remove', async (t) => {
  const rel = await iamJson(db, [
    'relationships',
    'add',
    users.boss,
    '--tenant',
    tenantId,
    '--type',
    'manager_of',
    '--related',
    users.worker,
  ]);
  t.like(rel, { subject_id: users.boss, related_subject_id: users.worker, relationship_type: 'manager_of' });
  const listed = await iamJson(db, ['relationships', 'list', users.boss, '--tenant', tenantId]);
  t.is(listed.user_id, users.boss);
  t.like(listed.outgoing_relationships[0], { id: rel.id, related_email: 'worker@example.com', related_name: 'worker' });
  t.deepEqual(listed.incoming_relationships, []);
  const incoming = await iamJson(db, [
    'relationships',
    'list',
    users.worker,
    '--tenant',
    tenantId,
    '--direction',
    'incoming',
  ]);
  t.like(incoming.incoming_relationships[0], { subject_id: users.boss, subject_email: 'boss@example.com' });
  t.is(incoming.outgoing_relationships, undefined);
  // The admin API sees the CLI's edge.
  t.is((await api(`/api/admin/users/${users.worker}/relationships`)).incoming_relationships[0].id, rel.id);

  const temp = await iamJson(db, [
    'relationships',
    'add',
    users.peer,
    '--tenant',
    tenantId,
    '--type',
    'delegate_of',
    '--related',
    users.worker,
    '--expires-at',
    new Date(Date.now() + 86_400_000).toISOString(),
  ]);
  t.is(typeof temp.expires_at, 'number');
  const removed = await iamJson(db, ['relationships', 'remove', users.peer, temp.id, '--tenant', tenantId]);
  t.deepEqual(removed, { removed: true, id: temp.id });
  t.deepEqual(
    (await iamJson(db, ['relationships', 'list', users.peer, '--tenant', tenantId])).outgoing_relationships,
    [],
  );
});

test.serial('relationships: refusals exit 1 with the error code', async (t) => {
  const self = await iam(db, [
    'relationships',
    'add',
    users.boss,
    '--tenant',
    tenantId,
    '--type',
    'manager_of',
    '--related',
    users.boss,
    '--json',
  ]);
  t.is(self.code, 1);
  t.is(JSON.parse(self.stdout || self.stderr).error, 'self_relationship');
  const badType = await iam(db, [
    'relationships',
    'add',
    users.boss,
    '--tenant',
    tenantId,
    '--type',
    'boss_of',
    '--related',
    users.peer,
  ]);
  t.is(badType.code, 1);
  t.regex(badType.stderr, /--type/);
  const missing = await iam(db, ['relationships', 'list', 'usr_missing', '--tenant', tenantId, '--json']);
  t.is(missing.code, 1);
  t.is(JSON.parse(missing.stdout || missing.stderr).error, 'not_found');
});

test.serial(
  'approvals create (approvers from manager_of), list, decide: self-approval refused, then approved',
  async (t) => {
    const a = await iamJson(db, [
      'approvals',
      'create',
      '--tenant',
      tenantId,
      '--requester',
      users.requester,
      '--target',
      users.worker,
      '--action',
      'read_mailbox',
      '--resource-class',
      'mailbox',
      '--audience',
      'https://mail.example.test',
      '--investigation',
      'inv-cli',
    ]);
    t.like(a, { status: 'pending', request_surface: 'cli', investigation_id: 'inv-cli' });
    t.like(a.approvals[0], { subject_id: users.boss, relation_source: 'relationship', step_key: 'manager_1' });
    t.like(a.notification_results[0], { step_key: 'manager_1', method: 'email', success: true });

    const listed = await iamJson(db, ['approvals', 'list', '--tenant', tenantId, '--investigation', 'inv-cli']);
    t.is(listed.total, 1);
    t.is(listed.items[0].id, a.id);

    const self = await iam(db, [
      'approvals',
      'decide',
      a.id,
      'manager_1',
      '--tenant',
      tenantId,
      '--decision',
      'approve',
      '--actor',
      users.requester,
      '--json',
    ]);
    t.is(self.code, 1);
    t.is(JSON.parse(self.stdout || self.stderr).error, 'self_approval_forbidden');

    const ok = await iamJson(db, [
      'approvals',
      'decide',
      a.id,
      'manager_1',
      '--tenant',
      tenantId,
      '--decision',
      'approve',
      '--actor',
      users.boss,
    ]);
    t.is(ok.status, 'approved');
    t.is(ok.grants.length, 1);
    t.is((await iamJson(db, ['approvals', 'list', '--tenant', tenantId, '--status', 'approved'])).total, 1);
    // The daemon's admin API lists the CLI's decision.
    const viaApi = await api('/api/admin/approvals?status=approved');
    t.is(viaApi.items[0].id, a.id);
    t.is(viaApi.items[0].grants[0].actor_subject_id, users.boss);

    const again = await iam(db, [
      'approvals',
      'decide',
      a.id,
      'manager_1',
      '--tenant',
      tenantId,
      '--decision',
      'deny',
      '--actor',
      users.boss,
      '--json',
    ]);
    t.is(again.code, 1);
    t.is(JSON.parse(again.stdout || again.stderr).error, 'approval_not_pending');
  },
);

test.serial('approvals create with --step, deny, and cancel; list --limit bound', async (t) => {
  const a = await iamJson(db, [
    'approvals',
    'create',
    '--tenant',
    tenantId,
    '--requester',
    users.requester,
    '--target',
    users.worker,
    '--action',
    'export',
    '--resource-class',
    'hr_record',
    '--audience',
    'hr',
    '--step',
    'peer=usr_unknown',
  ]).catch((e: Error) => e);
  t.true(a instanceof Error);
  const denied = await iamJson(db, [
    'approvals',
    'create',
    '--tenant',
    tenantId,
    '--requester',
    users.requester,
    '--target',
    users.worker,
    '--action',
    'export',
    '--resource-class',
    'hr_record',
    '--audience',
    'hr',
    '--step',
    `peer=${users.peer}`,
  ]);
  const d1 = await iamJson(db, [
    'approvals',
    'decide',
    denied.id,
    'peer',
    '--tenant',
    tenantId,
    '--decision',
    'deny',
    '--actor',
    users.peer,
  ]);
  t.is(d1.status, 'denied');
  t.deepEqual(d1.grants, []);
  const c = await iamJson(db, [
    'approvals',
    'create',
    '--tenant',
    tenantId,
    '--requester',
    users.requester,
    '--target',
    users.worker,
    '--action',
    'export',
    '--resource-class',
    'hr_record',
    '--audience',
    'hr',
    '--step',
    `peer=${users.peer}`,
  ]);
  const cancelled = await iamJson(db, ['approvals', 'cancel', c.id, '--tenant', tenantId]);
  t.is(cancelled.status, 'cancelled');
  const tooMany = await iam(db, ['approvals', 'list', '--tenant', tenantId, '--limit', '201']);
  t.is(tooMany.code, 2);
});
