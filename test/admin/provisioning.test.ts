/**
 * Tenant provisioning over HTTP: POST /api/admin/tenants returns the operation and the daemon's
 * job activates the tenant; a step that keeps failing (SMTP relay down: IAM_SMTP_URL names a
 * port where nothing listens) blocks the operation, with its error code and the cause (the
 * connection was refused); retry requeues it, keeping completed steps and history, with scopes,
 * 404/409 and Idempotency-Key replay. See docs/provisioning.md.
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { freePort, startDaemon, type Daemon } from '../helpers/daemon.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';
import { until } from '../helpers/poll.js';
import { api } from '../helpers/api.js';

/** A JSON body: untyped by nature; the assertions check its shape field by field. */
type Json = ReturnType<typeof JSON.parse>;

const STEPS = [
  'request_accepted',
  'schema_verified',
  'signing_key_ready',
  'mail_transport_verified',
  'tenant_activated',
];
const OP_FIELDS = [
  'operation_id',
  'tenant_id',
  'operation_kind',
  'source_tenant_id',
  'isolation_policy',
  'status',
  'current_step',
  'attempt_count',
  'next_attempt_at',
  'last_error_code',
  'created_at',
  'updated_at',
  'completed_at',
  'preparation_result',
  'capacity_operation_ids',
  'steps',
];
const STEP_FIELDS = [
  'step_key',
  'status',
  'attempt_count',
  'next_attempt_at',
  'last_error_code',
  'observed_resource_id',
  'progress_current',
  'progress_total',
  'started_at',
  'completed_at',
  'updated_at',
];
/** Failures of one step before blocked, in the blocking daemon. */
const MAX_ATTEMPTS = 2;

// Daemon A: mail goes to a working SMTP sink, so provisioning completes.
let dbA: TestDb;
let sA: Seeded;
let sinkA: SmtpSink;
let dA: Daemon;
let platformA: string;
// Daemon B: IAM_SMTP_URL names a port where nothing listens (until the test starts a sink there).
let dbB: TestDb;
let sB: Seeded;
let dB: Daemon;
let closedPort: number;
let sinkB: SmtpSink | undefined;
let platformB: string;
let adminB: string;

test.before(async () => {
  dbA = await createTestDatabase();
  sA = await seed(dbA.url, dbA.dir);
  sinkA = await startSmtpSink();
  dA = await startDaemon(dbA.url, dbA.dir, { IAM_SMTP_URL: sinkA.url });
  platformA = await clientCredentialsToken(dA.url, sA.platform.clientId, sA.platform.secret);

  dbB = await createTestDatabase();
  sB = await seed(dbB.url, dbB.dir);
  closedPort = await freePort();
  dB = await startDaemon(dbB.url, dbB.dir, {
    IAM_SMTP_URL: `smtp://127.0.0.1:${closedPort}`,
    IAM_PROVISIONING_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
    // Long enough that a request right after a retry finds the operation not yet blocked again.
    IAM_PROVISIONING_RETRY_BASE_MS: '3000',
  });
  platformB = await clientCredentialsToken(dB.url, sB.platform.clientId, sB.platform.secret);
  adminB = await clientCredentialsToken(dB.url, sB.tenantAdmin.clientId, sB.tenantAdmin.secret);
});

test.after.always(async () => {
  await dA?.stop();
  await dB?.stop();
  await sinkA?.close();
  await sinkB?.close();
  await dbA?.drop();
  await dbB?.drop();
});

const call = (
  base: string,
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown; key?: string } = {},
) => api(base, method, path, { token: opts.token, body: opts.body, idempotencyKey: opts.key });

const getOp = async (base: string, token: string, id: string) =>
  (await call(base, 'GET', `/api/admin/tenants/${id}/provisioning`, { token })).body;
const retry = (id: string, token: string | null, key?: string) =>
  call(dB.url, 'POST', `/api/admin/tenants/${id}/provisioning/retry`, { token, key });

async function waitForStatus(
  base: string,
  token: string,
  id: string,
  pred: (op: Record<string, Json>) => boolean,
): Promise<Record<string, Json>> {
  let op: Record<string, Json> = {};
  await until(
    async () => {
      op = await getOp(base, token, id);
      return pred(op);
    },
    { timeoutMs: 30_000, what: () => `the operation in the expected state (last seen: ${JSON.stringify(op)})` },
  );
  return op;
}

const stepOf = (op: Record<string, Json>, key: string) =>
  (op.steps as Record<string, Json>[]).find((s) => s.step_key === key)!;

async function tokenStatus(base: string, clientId: string, secret: string): Promise<number> {
  const res = await fetch(`${base}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic ' + Buffer.from(`${clientId}:${secret}`).toString('base64'),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials' }),
  });
  await res.body?.cancel();
  return res.status;
}

async function auditRows(db: TestDb, action: string, targetId: string) {
  const { ds } = await openServices(db.url, db.dir);
  try {
    return await ds.query<{ actor_type: string; actor_id: string; summary: unknown }[]>(
      'SELECT actor_type, actor_id, summary FROM audit_events WHERE action = ? AND target_id = ?',
      [action, targetId],
    );
  } finally {
    await ds.destroy();
  }
}

test('POST /api/admin/tenants returns the provisioning operation; the job activates the tenant, every step completed', async (t) => {
  const r = await call(dA.url, 'POST', '/api/admin/tenants', { token: platformA, body: { name: 'Provisioned' } });
  t.is(r.status, 201, JSON.stringify(r.body));
  // The tenant's fields stay at the top level, as before.
  t.regex(r.body.id, /^ten_/);
  t.is(r.body.name, 'Provisioned');
  t.is(r.body.lifecycle_state, 'provisioning');
  const op = r.body.provisioning;
  for (const f of OP_FIELDS) t.true(f in op, `operation field ${f}`);
  t.regex(op.operation_id, /^prv_/);
  t.is(op.tenant_id, r.body.id);
  t.is(op.operation_kind, 'tenant_create');
  t.is(op.source_tenant_id, null);
  t.is(typeof op.isolation_policy, 'string');
  // As written, before any runner claimed it.
  t.is(op.status, 'queued');
  t.is(op.current_step, 'request_accepted');
  t.is(op.attempt_count, 0);
  t.deepEqual(op.capacity_operation_ids, {});
  t.is(op.completed_at, null);
  t.deepEqual(
    op.steps.map((s: { step_key: string }) => s.step_key),
    STEPS,
  );
  for (const s of op.steps) for (const f of STEP_FIELDS) t.true(f in s, `step field ${f}`);

  // (That a provisioning tenant's clients get no token is checked on the blocked tenant below,
  // where the state is certain.)
  const done = await waitForStatus(dA.url, platformA, r.body.id, (o) => o.status === 'completed');
  t.is(done.operation_id, op.operation_id);
  t.is(done.current_step, 'tenant_activated');
  t.is(done.last_error_code, null);
  t.is(done.last_error_cause, null);
  t.is(done.next_attempt_at, null);
  t.true(done.completed_at >= done.created_at);
  for (const s of done.steps) {
    t.is(s.status, 'completed', s.step_key);
    t.is(s.attempt_count, 1, s.step_key);
    t.true(typeof s.completed_at === 'number' && s.completed_at >= s.started_at, s.step_key);
  }
  t.is(done.attempt_count, STEPS.length);
  const schema = stepOf(done, 'schema_verified');
  t.true(schema.progress_total > 0);
  t.is(schema.progress_current, schema.progress_total);
  // The kid observed is a key the service publishes.
  const jwks = (await (await fetch(`${dA.url}/jwks`)).json()) as { keys: { kid: string }[] };
  const kid = stepOf(done, 'signing_key_ready').observed_resource_id;
  t.true(
    jwks.keys.some((k) => k.kid === kid),
    'the signing key is published',
  );
  t.is(stepOf(done, 'mail_transport_verified').observed_resource_id, 'smtp');
  t.deepEqual(
    done.history.map((e: { event: string }) => e.event).filter((e: string) => e !== 'attempt'),
    ['created', ...STEPS.map(() => 'completed')],
  );

  const list = await call(dA.url, 'GET', '/api/admin/tenants', { token: platformA });
  t.is(list.body.tenants.find((x: { id: string }) => x.id === r.body.id).lifecycle_state, 'active');
  const c = await call(dA.url, 'POST', `/api/admin/tenants/${r.body.id}/clients`, {
    token: platformA,
    body: { name: 'w', grant_types: ['client_credentials'], scopes: ['api'] },
  });
  t.is(await tokenStatus(dA.url, c.body.client_id, c.body.client_secret), 200);
  const activations = await auditRows(dbA, 'tenant.activate', r.body.id);
  t.deepEqual(
    activations.map((a) => [a.actor_type, a.actor_id]),
    [['system', 'provisioning']],
  );
});

test('both endpoints are in /openapi.json with their scopes', async (t) => {
  const doc = (await (await fetch(`${dA.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { security: Record<string, string[]>[] }>>;
  };
  t.deepEqual(doc.paths['/api/admin/tenants/{id}/provisioning']?.get?.security, [
    { bearer: ['iam.platform', 'iam.admin'] },
  ]);
  t.deepEqual(doc.paths['/api/admin/tenants/{id}/provisioning/retry']?.post?.security, [{ bearer: ['iam.platform'] }]);
});

test("GET provisioning: a tenant admin sees its own tenant's operation, not another's", async (t) => {
  const own = await call(dB.url, 'GET', `/api/admin/tenants/${sB.tenantId}/provisioning`, { token: adminB });
  t.is(own.status, 200);
  t.is(own.body.status, 'completed');
  const created = await call(dB.url, 'POST', '/api/admin/tenants', { token: platformB, body: { name: 'Not yours' } });
  t.is(created.status, 201);
  t.is(
    (await call(dB.url, 'GET', `/api/admin/tenants/${created.body.id}/provisioning`, { token: adminB })).status,
    403,
  );
  t.is((await call(dB.url, 'GET', `/api/admin/tenants/${created.body.id}/provisioning`, { token: null })).status, 401);
  t.is((await call(dB.url, 'GET', '/api/admin/tenants/ten_nope/provisioning', { token: platformB })).status, 404);
});

test.serial(
  'a step that keeps failing blocks the operation; retry requeues it, keeping completed steps and history',
  async (t) => {
    const created = await call(dB.url, 'POST', '/api/admin/tenants', { token: platformB, body: { name: 'Blocked' } });
    t.is(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    const opId = created.body.provisioning.operation_id as string;

    // 1. The relay is unreachable: MAX_ATTEMPTS failures of the mail step, then blocked.
    const blocked = await waitForStatus(dB.url, platformB, id, (o) => o.status === 'blocked');
    t.is(blocked.operation_id, opId);
    t.is(blocked.current_step, 'mail_transport_verified');
    t.is(blocked.last_error_code, 'mail_transport_unreachable');
    t.is(blocked.next_attempt_at, null);
    t.is(blocked.retry_count, 0);
    const mail = stepOf(blocked, 'mail_transport_verified');
    t.is(mail.status, 'blocked');
    t.is(mail.attempt_count, MAX_ATTEMPTS);
    t.is(mail.last_error_code, 'mail_transport_unreachable');
    t.is(mail.completed_at, null);
    // Beside each code, why: the relay refused the connection (a sanitised cause, one line).
    t.regex(blocked.last_error_cause, /connection refused/);
    t.regex(mail.last_error_cause, /connection refused/);
    t.false(/\n|\bat \S+:\d+/.test(blocked.last_error_cause), 'no stack');
    for (const e of blocked.history.filter((x: { event: string }) => x.event === 'failed' || x.event === 'blocked'))
      t.regex(e.error_cause, /connection refused/, e.event);
    for (const k of STEPS.slice(0, 3)) t.is(stepOf(blocked, k).last_error_cause, null, k);
    for (const k of STEPS.slice(0, 3)) t.is(stepOf(blocked, k).status, 'completed', k);
    t.is(stepOf(blocked, 'tenant_activated').status, 'pending');
    t.is(stepOf(blocked, 'tenant_activated').attempt_count, 0);
    const events = blocked.history
      .filter((e: { step_key: string }) => e.step_key === 'mail_transport_verified')
      .map((e: { event: string; attempt: number }) => `${e.event}:${e.attempt}`);
    t.deepEqual(events, ['attempt:1', 'failed:1', 'attempt:2', 'failed:2', 'blocked:2']);
    const completedAt = Object.fromEntries(STEPS.slice(0, 3).map((k) => [k, stepOf(blocked, k).completed_at]));

    // 2. Still provisioning: the tenant's clients get no tokens.
    const list = await call(dB.url, 'GET', '/api/admin/tenants', { token: platformB });
    t.is(list.body.tenants.find((x: { id: string }) => x.id === id).lifecycle_state, 'provisioning');
    const c = await call(dB.url, 'POST', `/api/admin/tenants/${id}/clients`, {
      token: platformB,
      body: { name: 'w', grant_types: ['client_credentials'], scopes: ['api'] },
    });
    t.is(c.status, 201);
    t.is(
      await tokenStatus(dB.url, c.body.client_id, c.body.client_secret),
      401,
      'a provisioning tenant gets no tokens',
    );

    // 3. Who may retry, and what.
    t.is((await retry(id, null)).status, 401);
    const asAdmin = await retry(id, adminB);
    t.is(asAdmin.status, 403, 'a tenant admin of another tenant');
    t.is((await retry(sB.tenantId, adminB)).status, 403, 'a tenant admin, even of its own tenant');
    const unknown = await retry('ten_nope', platformB);
    t.is(unknown.status, 404);
    const done = await retry(sB.tenantId, platformB);
    t.is(done.status, 409);
    t.is(done.body.error, 'provisioning_not_blocked');
    t.is(done.body.operation_status, 'completed');
    t.is(
      stepOf(await getOp(dB.url, platformB, id), 'mail_transport_verified').status,
      'blocked',
      'refused retries changed nothing',
    );

    // 4. A retry with the relay still down: requeued, then blocked again.
    const first = await retry(id, platformB);
    t.is(first.status, 200, JSON.stringify(first.body));
    t.is(first.body.operation_id, opId);
    t.is(first.body.status, 'queued');
    t.is(first.body.current_step, 'request_accepted');
    t.is(first.body.retry_count, 1);
    // Right after it, the operation is queued, running or waiting out its backoff: not blocked.
    const early = await retry(id, platformB);
    t.is(early.status, 409);
    t.is(early.body.error, 'provisioning_not_blocked');
    t.true(['queued', 'running', 'retry_scheduled'].includes(early.body.operation_status), early.body.operation_status);
    const again = await waitForStatus(dB.url, platformB, id, (o) => o.status === 'blocked');
    t.is(stepOf(again, 'mail_transport_verified').attempt_count, 2 * MAX_ATTEMPTS);
    for (const k of STEPS.slice(0, 3)) {
      t.is(stepOf(again, k).completed_at, completedAt[k], `${k} was not run again`);
      t.is(stepOf(again, k).attempt_count, 1, k);
    }

    // 5. The relay answers now: retry (with an Idempotency-Key) and the tenant becomes active.
    sinkB = await startSmtpSink({ port: closedPort });
    const key = `retry-${id}`;
    const second = await retry(id, platformB, key);
    t.is(second.status, 200, JSON.stringify(second.body));
    t.is(second.body.status, 'queued');
    t.is(second.body.current_step, 'request_accepted');
    t.is(second.body.retry_count, 2);
    t.is(second.body.idempotent_replay, undefined);
    const replay = await retry(id, platformB, key);
    t.is(replay.status, 200);
    t.is(replay.body.idempotent_replay, true);
    t.is(replay.body.operation_id, opId);
    t.is(replay.body.status, 'queued', 'the stored response, not a new retry');
    t.is(replay.body.retry_count, 2);

    const finished = await waitForStatus(dB.url, platformB, id, (o) => o.status === 'completed');
    t.is(finished.retry_count, 2);
    t.is(finished.current_step, 'tenant_activated');
    t.is(stepOf(finished, 'mail_transport_verified').status, 'completed');
    t.is(stepOf(finished, 'mail_transport_verified').attempt_count, 2 * MAX_ATTEMPTS + 1);
    t.is(stepOf(finished, 'tenant_activated').status, 'completed');
    for (const k of STEPS.slice(0, 3))
      t.is(stepOf(finished, k).completed_at, completedAt[k], `${k} kept its completed_at`);
    const kinds = finished.history.map((e: { event: string }) => e.event);
    t.is(kinds.filter((e: string) => e === 'failed').length, 2 * MAX_ATTEMPTS);
    t.is(kinds.filter((e: string) => e === 'blocked').length, 2);
    t.is(kinds.filter((e: string) => e === 'retried').length, 2);
    const retried = finished.history.filter((e: { event: string }) => e.event === 'retried');
    t.true(
      retried.every(
        (e: { actor_type: string; actor_id: string; step_key: string }) =>
          e.actor_type === 'client' && e.actor_id === sB.platform.clientId && e.step_key === 'mail_transport_verified',
      ),
    );

    const after = await call(dB.url, 'GET', '/api/admin/tenants', { token: platformB });
    t.is(after.body.tenants.find((x: { id: string }) => x.id === id).lifecycle_state, 'active');
    t.is(await tokenStatus(dB.url, c.body.client_id, c.body.client_secret), 200, 'the active tenant gets tokens');
    // Each accepted retry is audited; replays and refusals are not.
    const audits = await auditRows(dbB, 'tenant.provisioning.retry', id);
    t.is(audits.length, 2);
    t.true(audits.every((a) => a.actor_type === 'client' && a.actor_id === sB.platform.clientId));
    const summary = typeof audits[0].summary === 'string' ? JSON.parse(audits[0].summary) : audits[0].summary;
    t.is(summary.operation_id, opId);
    t.is(summary.blocked_step, 'mail_transport_verified');
    t.is(summary.last_error_code, 'mail_transport_unreachable');
  },
);
