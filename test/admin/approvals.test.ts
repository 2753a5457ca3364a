/**
 * /api/admin/users/{id}/relationships and /api/admin/approvals against a real daemon: every
 * endpoint, bound and refusal; listing by direction with the other party's display fields and
 * expired edges hidden; approvers notified through the email outbox (the mail arrives, the
 * attempt is recorded as notification_results); the requester refused as approver; all steps
 * approve → approved with a grant; one deny → denied; cancel; expiry auto-denies (the expiry
 * job's service run directly); tenant reach.
 */
import test from 'ava';
import { SCOPE_PLATFORM, SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';
import { ApprovalService } from '../../shared/services/approvals.js';
import { Outbox } from '../../shared/services/outbox.js';
import { APPROVALS_MAX_LIMIT } from '../../shared/schemas/approvals.js';
import { activeTenant, clientCredentialsToken, openServices } from '../helpers/seed.js';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { sql } from '../helpers/oauth.js';
import { until } from '../helpers/poll.js';
import { api } from '../helpers/api.js';

let e: LoginEnv;
let platform: string;
let admin: string;
let otherAdmin: string;
let otherTenantId: string;
let otherUserId: string;
const actor = { type: 'system' as const, id: 'test' };

test.before(async () => {
  e = await startLoginEnv();
  const { ds, directory, provisioning } = await openServices(e.db.url, e.db.dir);
  const p = await directory.createClient(
    e.app.tenantId,
    { name: 'platform', grant_types: ['client_credentials'], scopes: [SCOPE_PLATFORM] },
    actor,
  );
  const other = await activeTenant(provisioning, { name: 'Other' }, actor);
  otherTenantId = other.id;
  otherUserId = (await directory.createUser(other.id, { email: 'other@example.com', name: 'Other' }, actor)).id;
  const oa = await directory.createClient(
    other.id,
    { name: 'other admin', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN] },
    actor,
  );
  await ds.destroy();
  platform = await clientCredentialsToken(e.d.url, p.client.client_id, p.client_secret!);
  admin = await clientCredentialsToken(e.d.url, e.app.admin.clientId, e.app.admin.secret);
  otherAdmin = await clientCredentialsToken(e.d.url, oa.client.client_id, oa.client_secret!);
});
test.after.always(async () => {
  await stopLoginEnv(e);
});

const call = (method: string, path: string, token?: string, body?: unknown) =>
  api(e.d.url, method, path, { token, body });
const rels = (userId: string, query = '') => `/api/admin/users/${userId}/relationships${query}`;
const addRel = (from: string, body: Record<string, unknown>, token = admin) => call('POST', rels(from), token, body);

// ---------------------------------------------------------------- relationships

test('relationships: add, list by direction with display fields, remove', async (t) => {
  const m = await createUserIn(e, 'mgr');
  const r = await createUserIn(e, 'rep');
  const added = await addRel(m.id, { related_subject_id: r.id, relationship_type: 'manager_of' });
  t.is(added.status, 201, JSON.stringify(added.body));
  t.like(added.body, { subject_id: m.id, related_subject_id: r.id, relationship_type: 'manager_of', expires_at: null });
  t.regex(added.body.id, /^rel_/);
  t.is(typeof added.body.created_at, 'number');

  const both = await call('GET', rels(m.id), admin);
  t.is(both.status, 200);
  t.is(both.body.user_id, m.id);
  t.is(both.body.outgoing_relationships.length, 1);
  t.like(both.body.outgoing_relationships[0], {
    id: added.body.id,
    related_subject_id: r.id,
    related_email: r.email,
    relationship_type: 'manager_of',
    expires_at: null,
  });
  t.is(typeof both.body.outgoing_relationships[0].related_name, 'string');
  t.deepEqual(both.body.incoming_relationships, []);

  const incoming = await call('GET', rels(r.id, '?direction=incoming'), admin);
  t.is(incoming.status, 200);
  t.is(incoming.body.outgoing_relationships, undefined);
  t.like(incoming.body.incoming_relationships[0], { subject_id: m.id, subject_email: m.email });
  const outgoing = await call('GET', rels(r.id, '?direction=outgoing'), admin);
  t.deepEqual(outgoing.body.outgoing_relationships, []);
  t.is(outgoing.body.incoming_relationships, undefined);

  const dup = await addRel(m.id, { related_subject_id: r.id, relationship_type: 'manager_of' });
  t.is(dup.status, 409);
  t.is(dup.body.error, 'relationship_exists');

  const del = await call('DELETE', rels(m.id, `/${added.body.id}`), admin);
  t.is(del.status, 204);
  t.deepEqual((await call('GET', rels(m.id), admin)).body.outgoing_relationships, []);
  t.is((await call('DELETE', rels(m.id, `/${added.body.id}`), admin)).status, 404);
});

test('relationships: expired edges are not listed; an expiring edge shows expires_at; re-adding replaces it', async (t) => {
  const a = await createUserIn(e, 'exa');
  const b = await createUserIn(e, 'exb');
  const until = Date.now() + 3_600_000;
  const added = await addRel(a.id, { related_subject_id: b.id, relationship_type: 'delegate_of', expires_at: until });
  t.is(added.status, 201);
  t.is((await call('GET', rels(a.id), admin)).body.outgoing_relationships[0].expires_at, until);
  await sql(e.db.url, e.db.dir, 'UPDATE user_relationships SET expires_at = ? WHERE id = ?', [
    Date.now() - 1000,
    added.body.id,
  ]);
  t.deepEqual((await call('GET', rels(a.id), admin)).body.outgoing_relationships, []);
  t.deepEqual((await call('GET', rels(b.id), admin)).body.incoming_relationships, []);
  const again = await addRel(a.id, { related_subject_id: b.id, relationship_type: 'delegate_of' });
  t.is(again.status, 201, JSON.stringify(again.body));
  t.is((await call('GET', rels(a.id), admin)).body.outgoing_relationships.length, 1);
});

test('relationships: refusals and bounds', async (t) => {
  const a = await createUserIn(e, 'rfa');
  const b = await createUserIn(e, 'rfb');
  t.is((await call('GET', rels(a.id))).status, 401);
  const badDir = await call('GET', rels(a.id, '?direction=sideways'), admin);
  t.is(badDir.status, 400);
  t.regex(badDir.body.message, /direction/);
  t.is((await call('GET', rels('usr_missing'), admin)).status, 404);
  t.is((await addRel('usr_missing', { related_subject_id: b.id, relationship_type: 'manager_of' })).status, 404);
  const self = await addRel(a.id, { related_subject_id: a.id, relationship_type: 'manager_of' });
  t.is(self.status, 400);
  t.is(self.body.error, 'self_relationship');
  const foreign = await addRel(a.id, { related_subject_id: otherUserId, relationship_type: 'manager_of' });
  t.is(foreign.status, 400);
  t.is(foreign.body.error, 'unknown_related_subject');
  const badType = await addRel(a.id, { related_subject_id: b.id, relationship_type: 'boss' });
  t.is(badType.status, 400);
  t.regex(badType.body.message, /relationship_type/);
  t.is((await addRel(a.id, { related_subject_id: b.id, relationship_type: 'custom:mentor_of' })).status, 201);
  const past = await addRel(a.id, { related_subject_id: b.id, relationship_type: 'guardian_of', expires_at: 1000 });
  t.is(past.status, 400);
  t.regex(past.body.message, /expires_at/);
  const extra = await addRel(a.id, { related_subject_id: b.id, relationship_type: 'guardian_of', x: 1 });
  t.is(extra.status, 400);
  // Another tenant's admin reaches neither this tenant's users nor (by naming it) this tenant.
  t.is((await call('GET', rels(a.id), otherAdmin)).status, 404);
  const reach = await call('GET', rels(a.id, `?tenant_id=${e.app.tenantId}`), otherAdmin);
  t.is(reach.status, 403);
  t.is(reach.body.error, 'tenant_forbidden');
  // A platform admin names the tenant.
  t.is((await call('GET', rels(otherUserId, `?tenant_id=${otherTenantId}`), platform)).status, 200);
});

// ---------------------------------------------------------------- approvals

const base = (requester: string, target: string, extra: Record<string, unknown> = {}) => ({
  requester_subject_id: requester,
  target_subject_id: target,
  requested_action: 'read_mailbox',
  resource_class: 'mailbox',
  audience: 'https://mail.example.test',
  scope_json: { folders: ['inbox'], days: 30 },
  ...extra,
});
const create = (body: Record<string, unknown>, token = admin, query = '') =>
  call('POST', `/api/admin/approvals${query}`, token, body);
const decide = (id: string, step: string, body: Record<string, unknown>, token = admin) =>
  call('POST', `/api/admin/approvals/${id}/steps/${step}/decision`, token, body);

test('approvals: create notifies the approver by email and records it; self-approval refused; approve issues a grant', async (t) => {
  const req = await createUserIn(e, 'req');
  const tgt = await createUserIn(e, 'tgt');
  const apv = await createUserIn(e, 'apv');
  const made = await create(
    base(req.id, tgt.id, {
      investigation_id: 'inv-approve',
      reason_code: 'legal_hold',
      steps: [{ step_key: 'manager', subject_id: apv.id }],
    }),
  );
  t.is(made.status, 201, JSON.stringify(made.body));
  const a = made.body;
  t.like(a, {
    tenant_id: e.app.tenantId,
    status: 'pending',
    requester_subject_type: 'user',
    requester_subject_id: req.id,
    target_subject_id: tgt.id,
    investigation_id: 'inv-approve',
    request_surface: 'admin_api',
    reason_code: 'legal_hold',
    decided_at: null,
    scope_canonical: '{"days":30,"folders":["inbox"]}',
  });
  t.deepEqual(a.scope_json, { folders: ['inbox'], days: 30 });
  t.regex(a.id, /^apr_/);
  t.true(a.expires_at > a.requested_at);
  t.deepEqual(a.grants, []);
  t.is(a.approvals.length, 1);
  t.like(a.approvals[0], {
    approval_request_id: a.id,
    step_key: 'manager',
    side: 'approver',
    subject_type: 'user',
    subject_id: apv.id,
    status: 'pending',
    relation_source: 'explicit',
    notification_count: 1,
  });
  t.is(a.notification_results.length, 1);
  t.like(a.notification_results[0], {
    approval_id: a.approvals[0].id,
    step_key: 'manager',
    action: 'approval_requested',
    method: 'email',
    success: true,
    retryable: false,
  });
  t.regex(a.notification_results[0].completion_artifact.outbox_id, /^mail_/);
  const mail = await e.sink.waitFor((m) => m.to.includes(apv.email));
  t.regex(mail.subject, /Approval requested: read_mailbox/);

  const self = await decide(a.id, 'manager', { decision: 'approve', actor_subject_id: req.id });
  t.is(self.status, 403);
  t.is(self.body.error, 'self_approval_forbidden');
  const stranger = await decide(a.id, 'manager', { decision: 'approve', actor_subject_id: tgt.id });
  t.is(stranger.status, 403);
  t.is(stranger.body.error, 'not_step_approver');
  t.is((await decide(a.id, 'nope', { decision: 'approve', actor_subject_id: apv.id })).status, 404);
  t.is((await decide(a.id, 'manager', { decision: 'maybe', actor_subject_id: apv.id })).status, 400);

  const ok = await decide(a.id, 'manager', { decision: 'approve', actor_subject_id: apv.id, reason_code: 'ok' });
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.is(ok.body.status, 'approved');
  t.is(typeof ok.body.decided_at, 'number');
  t.like(ok.body.approvals[0], { status: 'approved', reason_code: 'ok' });
  t.is(ok.body.grants.length, 1);
  t.like(ok.body.grants[0], {
    approval_request_id: a.id,
    tenant_id: e.app.tenantId,
    status: 'active',
    target_audience: 'https://mail.example.test',
    resource_class: 'mailbox',
    requester_subject_id: req.id,
    actor_subject_type: 'user',
    actor_subject_id: apv.id,
    scope_canonical: a.scope_canonical,
  });
  t.is(ok.body.grants[0].expires_at - ok.body.grants[0].issued_at, 3_600_000);

  const late = await decide(a.id, 'manager', { decision: 'deny', actor_subject_id: apv.id });
  t.is(late.status, 409);
  t.is(late.body.error, 'approval_not_pending');
  t.is((await call('POST', `/api/admin/approvals/${a.id}/cancel`, admin, {})).status, 409);
});

test('approvals: every step must approve; one deny ends the request and cancels the other steps', async (t) => {
  const req = await createUserIn(e, 'req2');
  const tgt = await createUserIn(e, 'tgt2');
  const [s1, s2, s3] = [await createUserIn(e, 's1'), await createUserIn(e, 's2'), await createUserIn(e, 's3')];
  const made = await create(
    base(req.id, tgt.id, {
      steps: [
        { step_key: 'one', subject_id: s1.id },
        { step_key: 'two', subject_id: s2.id },
        { step_key: 'three', subject_id: s3.id, side: 'security' },
      ],
    }),
  );
  t.is(made.status, 201);
  const id = made.body.id;
  const first = await decide(id, 'one', { decision: 'approve', actor_subject_id: s1.id });
  t.is(first.body.status, 'pending');
  t.deepEqual(first.body.grants, []);
  const denied = await decide(id, 'two', { decision: 'deny', actor_subject_id: s2.id, reason_note: 'no' });
  t.is(denied.status, 200);
  t.is(denied.body.status, 'denied');
  t.deepEqual(
    denied.body.approvals.map((s: { step_key: string; status: string }) => [s.step_key, s.status]),
    [
      ['one', 'approved'],
      ['two', 'denied'],
      ['three', 'cancelled'],
    ],
  );
  t.deepEqual(denied.body.grants, []);
  const after = await decide(id, 'three', { decision: 'approve', actor_subject_id: s3.id });
  t.is(after.status, 409);
});

test('approvals: approvers derived from manager_of edges toward the target; none → 422', async (t) => {
  const req = await createUserIn(e, 'req3');
  const tgt = await createUserIn(e, 'tgt3');
  const none = await create(base(req.id, tgt.id));
  t.is(none.status, 422);
  t.is(none.body.error, 'no_approvers');
  const mgr = await createUserIn(e, 'mgr3');
  t.is((await addRel(mgr.id, { related_subject_id: tgt.id, relationship_type: 'manager_of' })).status, 201);
  // The requester as the target's manager is never an approver of their own request.
  t.is((await addRel(req.id, { related_subject_id: tgt.id, relationship_type: 'manager_of' })).status, 201);
  const made = await create(base(req.id, tgt.id));
  t.is(made.status, 201, JSON.stringify(made.body));
  t.is(made.body.approvals.length, 1);
  t.like(made.body.approvals[0], {
    subject_id: mgr.id,
    relation_type: 'manager_of',
    relation_source: 'relationship',
    step_key: 'manager_1',
  });
});

test('approvals: creation refusals', async (t) => {
  const req = await createUserIn(e, 'req4');
  const tgt = await createUserIn(e, 'tgt4');
  t.is((await call('POST', '/api/admin/approvals', undefined, base(req.id, tgt.id))).status, 401);
  const selfStep = await create(base(req.id, tgt.id, { steps: [{ step_key: 'me', subject_id: req.id }] }));
  t.is(selfStep.status, 400);
  t.is(selfStep.body.error, 'self_approval_forbidden');
  const dupKeys = await create(
    base(req.id, tgt.id, {
      steps: [
        { step_key: 'a', subject_id: tgt.id },
        { step_key: 'a', subject_id: tgt.id },
      ],
    }),
  );
  t.is(dupKeys.status, 400);
  t.regex(dupKeys.body.message, /steps\.1\.step_key/);
  const unknown = await create(base('usr_nobody', tgt.id, { steps: [{ step_key: 'a', subject_id: tgt.id }] }));
  t.is(unknown.status, 400);
  t.regex(unknown.body.message, /requester_subject_id/);
  const foreign = await create(base(req.id, tgt.id, { steps: [{ step_key: 'a', subject_id: otherUserId }] }));
  t.is(foreign.status, 400);
  t.regex(foreign.body.message, /steps\.0\.subject_id/);
  const tooMany = await create(
    base(req.id, tgt.id, { steps: Array.from({ length: 11 }, (_, i) => ({ step_key: `k${i}`, subject_id: tgt.id })) }),
  );
  t.is(tooMany.status, 400);
  t.is((await create(base(req.id, tgt.id, { steps: [], x: 1 }))).status, 400);
  const timeout = await create(
    base(req.id, tgt.id, { step_timeout_seconds: 0, steps: [{ step_key: 'a', subject_id: tgt.id }] }),
  );
  t.is(timeout.status, 400);
  t.regex(timeout.body.message, /step_timeout_seconds/);
});

test('approvals: cancel withdraws a pending request', async (t) => {
  const req = await createUserIn(e, 'req5');
  const apv = await createUserIn(e, 'apv5');
  const made = await create(base(req.id, apv.id, { steps: [{ step_key: 'x', subject_id: apv.id }] }));
  const c = await call('POST', `/api/admin/approvals/${made.body.id}/cancel`, admin, { reason_code: 'withdrawn' });
  t.is(c.status, 200);
  t.is(c.body.status, 'cancelled');
  t.like(c.body.approvals[0], { status: 'cancelled', reason_code: 'withdrawn' });
  t.is((await decide(made.body.id, 'x', { decision: 'approve', actor_subject_id: apv.id })).status, 409);
  t.is((await call('POST', '/api/admin/approvals/apr_missing/cancel', admin, {})).status, 404);
  t.is((await call('GET', `/api/admin/approvals/${made.body.id}`, admin)).body.status, 'cancelled');
  t.is((await call('GET', `/api/admin/approvals/${made.body.id}`, otherAdmin)).status, 404);
});

test('approvals: a step past its timeout is expired by the expiry job (auto-deny, no grant)', async (t) => {
  const req = await createUserIn(e, 'req6');
  const apv = await createUserIn(e, 'apv6');
  const made = await create(
    base(req.id, apv.id, { step_timeout_seconds: 1, steps: [{ step_key: 'x', subject_id: apv.id }] }),
  );
  t.is(made.status, 201);
  const { ds, config } = await openServices(e.db.url, e.db.dir);
  try {
    const service = new ApprovalService(ds, new Outbox(ds, config.secretKey));
    // Run the job's work at a time past the deadline (no waiting on the clock).
    t.true((await service.expireDue(made.body.expires_at + 1)) >= 1);
    const first = (await call('GET', `/api/admin/approvals/${made.body.id}`, admin)).body;
    // A second run leaves this request as the first left it. (Its count is not asserted: other
    // tests in this file run at the same time and may have made their own requests due.)
    await service.expireDue(made.body.expires_at + 1);
    t.deepEqual((await call('GET', `/api/admin/approvals/${made.body.id}`, admin)).body, first);
  } finally {
    await ds.destroy();
  }
  const after = await call('GET', `/api/admin/approvals/${made.body.id}`, admin);
  t.is(after.body.status, 'expired');
  t.like(after.body.approvals[0], { status: 'expired', reason_code: 'timeout' });
  t.deepEqual(after.body.grants, []);
  const late = await decide(made.body.id, 'x', { decision: 'approve', actor_subject_id: apv.id });
  t.is(late.status, 409);
  t.is(late.body.error, 'approval_not_pending');
});

test('approvals list: filters, total, limit bounds', async (t) => {
  const req = await createUserIn(e, 'req7');
  const apv = await createUserIn(e, 'apv7');
  for (let i = 0; i < 3; i++)
    t.is(
      (
        await create(
          base(req.id, apv.id, { investigation_id: 'inv-list', steps: [{ step_key: 'x', subject_id: apv.id }] }),
        )
      ).status,
      201,
    );
  const all = await call('GET', '/api/admin/approvals?investigation_id=inv-list', admin);
  t.is(all.status, 200);
  t.is(all.body.total, 3);
  t.is(all.body.items.length, 3);
  for (const item of all.body.items) {
    t.true(Array.isArray(item.approvals));
    t.true(Array.isArray(item.grants));
    t.is(item.investigation_id, 'inv-list');
  }
  t.true(all.body.items[0].created_at >= all.body.items[2].created_at);
  const one = await call('GET', '/api/admin/approvals?investigation_id=inv-list&limit=1', admin);
  t.is(one.body.items.length, 1);
  t.is(one.body.total, 3);
  const pending = await call('GET', '/api/admin/approvals?status=pending&investigation_id=inv-list', admin);
  t.is(pending.body.total, 3);
  const approved = await call('GET', '/api/admin/approvals?status=approved&investigation_id=inv-list', admin);
  t.is(approved.body.total, 0);
  t.deepEqual(approved.body.items, []);
  for (const q of ['limit=0', `limit=${APPROVALS_MAX_LIMIT + 1}`, 'limit=x', 'status=open']) {
    const r = await call('GET', `/api/admin/approvals?${q}`, admin);
    t.is(r.status, 400, q);
    t.regex(r.body.message, new RegExp(q.split('=')[0]));
  }
  t.is((await call('GET', `/api/admin/approvals?limit=${APPROVALS_MAX_LIMIT}`, admin)).status, 200);
  t.is((await call('GET', '/api/admin/approvals')).status, 401);
  // Another tenant sees none of these.
  t.is((await call('GET', '/api/admin/approvals?investigation_id=inv-list', otherAdmin)).body.total, 0);
});

test('approvals: a decision after the step deadline expires the request instead (the timeout wins)', async (t) => {
  const req = await createUserIn(e, 'req8');
  const apv = await createUserIn(e, 'apv8');
  const made = await create(base(req.id, apv.id, { steps: [{ step_key: 'x', subject_id: apv.id }] }));
  t.is(made.status, 201);
  await sql(e.db.url, e.db.dir, 'UPDATE approval_steps SET expires_at = ? WHERE approval_request_id = ?', [
    Date.now() - 1000,
    made.body.id,
  ]);
  const late = await decide(made.body.id, 'x', { decision: 'approve', actor_subject_id: apv.id });
  t.is(late.status, 409);
  t.is(late.body.error, 'approval_not_pending');
  const after = await call('GET', `/api/admin/approvals/${made.body.id}`, admin);
  t.is(after.body.status, 'expired');
  t.is(after.body.approvals[0].status, 'expired');
  t.deepEqual(after.body.grants, []);
});

test('approvals: the daemon runs the approval-expiry job: a request past its step timeout becomes expired', async (t) => {
  const req = await createUserIn(e, 'req9');
  const apv = await createUserIn(e, 'apv9');
  const made = await create(
    base(req.id, apv.id, { step_timeout_seconds: 1, steps: [{ step_key: 'x', subject_id: apv.id }] }),
  );
  t.is(made.status, 201);
  // The job runs every 15 s; poll until it has closed the request (bounded, no timing assertion).
  let status = 'pending';
  await until(
    async () => {
      status = (await call('GET', `/api/admin/approvals/${made.body.id}`, admin)).body.status;
      return status !== 'pending';
    },
    { timeoutMs: 45_000, intervalMs: 500, what: 'the expiry job closing the request' },
  );
  t.is(status, 'expired');
});
