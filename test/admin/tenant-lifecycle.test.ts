/**
 * POST /api/admin/tenants/{id}/lifecycle/suspend and …/resume: optimistic precondition with one
 * winner, Idempotency-Key replay and mismatch (and crash-correctness: an answer committed with
 * the change is replayed, never acted on twice), scopes, and the effect on a second daemon.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import Koa from 'koa';
import type { AppState } from '../../daemon/context.js';
import {
  idempotency,
  IDEMPOTENCY_ABANDONED_MS,
  IDEMPOTENCY_RETENTION_MS,
  idempotencyRequestHash,
} from '../../daemon/middleware/koa-idempotency.js';
import { IdempotencyService } from '../../shared/services/idempotency.js';
import { TenantLifecycleService, type LifecycleRequest } from '../../shared/services/tenant-lifecycle.js';
import type { AccessTokenClaims } from '../../shared/services/tokens.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import {
  clientCredentialsToken,
  openServices,
  seed,
  type Seeded,
  activeTenant,
  introspectAs,
} from '../helpers/seed.js';
import { api } from '../helpers/api.js';

/** A JSON body: untyped by nature; the assertions check its shape field by field. */
type Json = ReturnType<typeof JSON.parse>;

let db: TestDb;
let d: Daemon;
let d2: Daemon;
let s: Seeded;
let platform: string;
let tenantAdmin: string;
let n = 0;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  d = await startDaemon(db.url, db.dir);
  // Same issuer: two nodes of one deployment behind a load balancer.
  d2 = await startDaemon(db.url, db.dir, { IAM_ISSUER: d.url });
  platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  tenantAdmin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
});
test.after.always(async () => {
  await d?.stop();
  await d2?.stop();
  await db?.drop();
});

interface Creds {
  clientId: string;
  secret: string;
}

/** A fresh tenant (so tests do not suspend each other's) with a worker and a resource server. */
async function newTenant() {
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  try {
    const actor = { type: 'system' as const, id: 'test' };
    const ten = await activeTenant(provisioning, { name: `Lifecycle ${++n}` }, actor);
    const rs = await directory.createClient(
      ten.id,
      {
        name: 'rs',
        grant_types: ['client_credentials'],
        scopes: ['api'],
        resource_identifiers: ['https://lc.example.test'],
      },
      actor,
    );
    const w = await directory.createClient(
      ten.id,
      { name: 'w', grant_types: ['client_credentials'], scopes: ['api'] },
      actor,
    );
    const row = await ds.query<{ lifecycle_state: string; updated_at: unknown }[]>(
      'SELECT lifecycle_state, updated_at FROM tenants WHERE id = ?',
      [ten.id],
    );
    return {
      id: ten.id,
      state: row[0].lifecycle_state,
      updatedAt: Number(row[0].updated_at),
      rs: { clientId: rs.client.client_id, secret: rs.client_secret! },
      worker: { clientId: w.client.client_id, secret: w.client_secret! },
    };
  } finally {
    await ds.destroy();
  }
}

const post = (path: string, body: unknown, opts: { token?: string | null; key?: string; base?: string } = {}) =>
  api(opts.base ?? d.url, 'POST', path, {
    body,
    token: opts.token === undefined ? platform : opts.token,
    idempotencyKey: opts.key,
  });

const suspend = (id: string, body: unknown, opts?: Parameters<typeof post>[2]) =>
  post(`/api/admin/tenants/${id}/lifecycle/suspend`, body, opts);
const resume = (id: string, body: unknown, opts?: Parameters<typeof post>[2]) =>
  post(`/api/admin/tenants/${id}/lifecycle/resume`, body, opts);

const introspect = introspectAs;

async function tokenStatus(c: Creds): Promise<number> {
  const res = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization:
        'Basic ' + Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.secret)}`).toString('base64'),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials' }),
  });
  await res.body?.cancel();
  return res.status;
}

test('suspend: 200 with a completed lifecycle job; the tenant is suspended', async (t) => {
  const ten = await newTenant();
  t.is(ten.state, 'active');
  const r = await suspend(ten.id, {
    expected_state: 'active',
    expected_updated_at: ten.updatedAt,
    reason: 'abuse report #1',
    extra_field: 'tolerated',
  });
  t.is(r.status, 200, JSON.stringify(r.body));
  t.regex(r.body.job_id, /^tlj_/);
  t.is(r.body.status, 'completed');
  t.is(r.body.tenant_id, ten.id);
  t.is(r.body.lifecycle_state, 'suspended');
  t.is(r.body.validation_required, false);
  t.is(r.body.idempotent_replay, undefined);
  t.is(await tokenStatus(ten.worker), 401, 'a suspended tenant gets no tokens');
});

test('stale expected_updated_at: 409 precondition_failed with the current values', async (t) => {
  const ten = await newTenant();
  const r = await suspend(ten.id, {
    expected_state: 'active',
    expected_updated_at: ten.updatedAt - 1,
    reason: 'stale',
  });
  t.is(r.status, 409);
  t.is(r.body.error, 'precondition_failed');
  t.is(r.body.lifecycle_state, 'active');
  t.is(r.body.updated_at, ten.updatedAt);
});

test('wrong expected_state: 409 precondition_failed', async (t) => {
  const ten = await newTenant();
  const r = await suspend(ten.id, {
    expected_state: 'suspended',
    expected_updated_at: ten.updatedAt,
    reason: 'wrong state',
  });
  t.is(r.status, 409);
  t.is(r.body.error, 'precondition_failed');
  t.is(r.body.lifecycle_state, 'active');
  t.is(r.body.updated_at, ten.updatedAt);
});

test('break_glass skips the updated_at check but still needs an active tenant', async (t) => {
  const ten = await newTenant();
  const r = await suspend(ten.id, {
    expected_state: 'active',
    expected_updated_at: 0,
    reason: 'emergency',
    break_glass: true,
  });
  t.is(r.status, 200, JSON.stringify(r.body));
  const again = await suspend(ten.id, {
    expected_state: 'active',
    expected_updated_at: 0,
    reason: 'emergency',
    break_glass: true,
  });
  t.is(again.status, 409);
  t.is(again.body.lifecycle_state, 'suspended');
  const { ds } = await openServices(db.url, db.dir);
  const rows = await ds.query<{ outcome: string; summary: unknown }[]>(
    `SELECT outcome, summary FROM audit_events WHERE target_id = ? AND action = 'tenant.suspend'
    ORDER BY created_at, id`,
    [ten.id],
  );
  await ds.destroy();
  t.deepEqual(
    rows.map((r) => r.outcome).sort(),
    ['failure', 'success'],
    'the move and the refused second attempt are both recorded',
  );
  const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v) as Record<string, Json>;
  const summary = parse(rows.find((r) => r.outcome === 'success')!.summary);
  t.is(summary.break_glass, true);
  t.is(summary.reason, 'emergency');
  t.is(summary.before.lifecycle_state, 'active');
  t.is(summary.after.lifecycle_state, 'suspended');
  const refused = parse(rows.find((r) => r.outcome === 'failure')!.summary);
  t.is(refused.error, 'precondition_failed');
  t.is(refused.current.lifecycle_state, 'suspended');
});

test('missing reason: 400', async (t) => {
  const ten = await newTenant();
  const r = await suspend(ten.id, { expected_state: 'active', expected_updated_at: ten.updatedAt });
  t.is(r.status, 400);
  t.is(r.body.error, 'invalid_request');
});

test('unknown tenant: 404', async (t) => {
  const r = await suspend('no-such-tenant', { expected_state: 'active', expected_updated_at: 1, reason: 'x' });
  t.is(r.status, 404);
});

test('a tenant admin may not suspend: 403; no token: 401', async (t) => {
  const ten = await newTenant();
  const body = { expected_state: 'active', expected_updated_at: ten.updatedAt, reason: 'not allowed' };
  t.is((await suspend(ten.id, body, { token: tenantAdmin })).status, 403);
  t.is((await suspend(s.tenantId, body, { token: tenantAdmin })).status, 403, 'not even its own tenant');
  t.is((await suspend(ten.id, body, { token: null })).status, 401);
});

test('Idempotency-Key: a replay returns the same job with idempotent_replay; another payload is 422', async (t) => {
  const ten = await newTenant();
  const body = { expected_state: 'active', expected_updated_at: ten.updatedAt, reason: 'replay me' };
  const key = `key-${ten.id}`;
  const first = await suspend(ten.id, body, { key });
  t.is(first.status, 200, JSON.stringify(first.body));
  t.is(first.body.idempotent_replay, undefined);
  const replay = await suspend(ten.id, body, { key });
  t.is(replay.status, 200);
  t.is(replay.body.job_id, first.body.job_id);
  t.is(replay.body.idempotent_replay, true);
  // The replay is served from the key even though the precondition no longer holds.
  const onOther = await suspend(ten.id, body, { key, base: d2.url });
  t.is(onOther.body.job_id, first.body.job_id, 'and from another daemon');
  const mismatch = await suspend(ten.id, { ...body, reason: 'something else' }, { key });
  t.is(mismatch.status, 422);
  t.is(mismatch.body.error, 'idempotency_key_mismatch');
  // Without the key, the same request runs again and fails its precondition.
  t.is((await suspend(ten.id, body)).status, 409);
});

test('Idempotency-Key syntax: not printable ASCII or too long is 400', async (t) => {
  const ten = await newTenant();
  const body = { expected_state: 'active', expected_updated_at: ten.updatedAt, reason: 'bad key' };
  t.is((await suspend(ten.id, body, { key: 'x'.repeat(256) })).status, 400);
  t.is((await suspend(ten.id, body, { key: 'tab\there' })).status, 400);
});

test('a 409 first attempt is stored: the replay answers the same 409', async (t) => {
  const ten = await newTenant();
  const body = { expected_state: 'active', expected_updated_at: ten.updatedAt + 5, reason: 'stale with key' };
  const key = `stale-${ten.id}`;
  const a = await suspend(ten.id, body, { key });
  t.is(a.status, 409);
  const b = await suspend(ten.id, body, { key });
  t.is(b.status, 409);
  t.is(b.body.error, 'precondition_failed');
  t.is(b.body.idempotent_replay, true);
});

test('10 concurrent suspends with the same precondition: exactly one 200, the rest 409', async (t) => {
  const ten = await newTenant();
  const body = { expected_state: 'active', expected_updated_at: ten.updatedAt, reason: 'race' };
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      suspend(ten.id, body, { key: i % 2 ? `race-${i}-${ten.id}` : undefined, base: i % 3 ? d.url : d2.url }),
    ),
  );
  const statuses = results.map((r) => r.status).sort();
  t.deepEqual(statuses, [200, 409, 409, 409, 409, 409, 409, 409, 409, 409], JSON.stringify(results.map((r) => r.body)));
  for (const r of results.filter((x) => x.status === 409)) {
    t.is(r.body.error, 'precondition_failed');
    t.is(r.body.lifecycle_state, 'suspended');
  }
});

test('after suspend a token is inactive at once on a second daemon; resume restores tokens', async (t) => {
  const ten = await newTenant();
  const tok = await clientCredentialsToken(d.url, ten.worker.clientId, ten.worker.secret);
  const before = await introspect(d2.url, ten.rs, tok);
  t.is(before.status, 200);
  t.is(before.body.active, true);

  const r = await suspend(ten.id, {
    expected_state: 'active',
    expected_updated_at: ten.updatedAt,
    reason: 'suspend for test',
  });
  t.is(r.status, 200);
  const after = await introspect(d2.url, ten.rs, tok);
  // Inactive at once; the suspended tenant's own resource server may itself be refused (401).
  if (after.status === 200) t.deepEqual(after.body, { active: false });
  else t.is(after.status, 401);
  t.is(await tokenStatus(ten.worker), 401);

  // Resume needs the suspended state and the updated_at the suspend wrote.
  const stale = await resume(ten.id, {
    expected_state: 'suspended',
    expected_updated_at: ten.updatedAt,
    reason: 'resume',
  });
  t.is(stale.status, 409);
  t.is(stale.body.lifecycle_state, 'suspended');
  const res = await resume(ten.id, {
    expected_state: 'suspended',
    expected_updated_at: stale.body.updated_at,
    reason: 'resume',
  });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.lifecycle_state, 'active');
  t.regex(res.body.job_id, /^tlj_/);
  const fresh = await clientCredentialsToken(d.url, ten.worker.clientId, ten.worker.secret);
  const ok = await introspect(d2.url, ten.rs, fresh);
  t.is(ok.status, 200);
  t.is(ok.body.active, true);
});

test('Idempotency-Key in flight on another daemon: 409 idempotency_in_flight; a row abandoned by a crashed daemon is taken over', async (t) => {
  const ten = await newTenant();
  const body = { expected_state: 'active', expected_updated_at: ten.updatedAt, reason: 'in flight' };
  const route = `POST /api/admin/tenants/${ten.id}/lifecycle/suspend`;
  // The row another daemon writes when it starts this very request (same principal, route,
  // key and payload), and holds until it stores the response.
  const { ds } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const inFlight = async (key: string, createdAt: number) =>
    ds.query(
      `INSERT INTO idempotency_keys (id, tenant_id, principal, route, idem_key, request_hash, status, response_status,
       response_body, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, 'in_flight', NULL, NULL, ?, ?)`,
      [
        `busy-${key}`,
        s.tenantId,
        s.platform.clientId,
        route,
        key,
        idempotencyRequestHash(route, body),
        createdAt,
        createdAt + IDEMPOTENCY_RETENTION_MS,
      ],
    );

  await inFlight(`busy-${ten.id}`, Date.now());
  const busy = await suspend(ten.id, body, { key: `busy-${ten.id}` });
  t.is(busy.status, 409);
  t.is(busy.body.error, 'idempotency_in_flight');
  t.is(
    (await ds.query('SELECT lifecycle_state FROM tenants WHERE id = ?', [ten.id]))[0].lifecycle_state,
    'active',
    'nothing ran',
  );

  // The same, left behind by a daemon that died mid-request longer ago than any request lives.
  await inFlight(`crashed-${ten.id}`, Date.now() - IDEMPOTENCY_ABANDONED_MS - 1000);
  const retried = await suspend(ten.id, body, { key: `crashed-${ten.id}` });
  t.is(retried.status, 200, JSON.stringify(retried.body));
  t.is(retried.body.lifecycle_state, 'suspended');
  const replay = await suspend(ten.id, body, { key: `crashed-${ten.id}` });
  t.is(replay.body.job_id, retried.body.job_id);
  t.is(replay.body.idempotent_replay, true);
});

/**
 * A daemon in this process, as the real one is built for the suspend route (the platform
 * client's claims, the parsed body, the idempotency middleware, the lifecycle service), whose
 * handler runs the move and then `afterCommit`: where a real daemon would die.
 */
async function crashingDaemon(
  t: ExecutionContext,
  tenantId: string,
  body: LifecycleRequest,
  afterCommit: () => Promise<void>,
): Promise<{ url: string; committed: Promise<void> }> {
  const { ds } = await openServices(db.url, db.dir);
  const service = new TenantLifecycleService(ds);
  let markCommitted!: () => void;
  const committed = new Promise<void>((resolve) => (markCommitted = resolve));
  const app = new Koa<AppState>();
  app.use(async (ctx, next) => {
    const claims: AccessTokenClaims = { client_id: s.platform.clientId, tenant_id: s.tenantId, scope: 'iam.platform' };
    ctx.state.auth = claims;
    (ctx.request as { body?: unknown }).body = body;
    await next();
  });
  app.use(idempotency(new IdempotencyService(ds)));
  app.use(async (ctx) => {
    const actor = { type: 'client' as const, id: s.platform.clientId };
    ctx.body = await service.move(tenantId, 'suspend', body, actor, ctx.state.idempotency);
    markCommitted();
    await afterCommit();
  });
  app.silent = true;
  const handle = app.callback();
  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await ds.destroy();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, committed };
}

async function suspendsOf(tenantId: string) {
  const { ds } = await openServices(db.url, db.dir);
  try {
    const audits = await ds.query<{ outcome: string }[]>(
      "SELECT outcome FROM audit_events WHERE action = 'tenant.suspend' AND target_id = ?",
      [tenantId],
    );
    const jobs = await ds.query<{ id: string }[]>('SELECT id FROM tenant_lifecycle_jobs WHERE tenant_id = ?', [
      tenantId,
    ]);
    return { audits: audits.map((a) => a.outcome), jobs: jobs.map((j) => j.id) };
  } finally {
    await ds.destroy();
  }
}

test('Idempotency-Key: a daemon that dies after its commit, before answering: the retry replays the committed job', async (t) => {
  const ten = await newTenant();
  const body = { expected_state: 'active', expected_updated_at: ten.updatedAt, reason: 'crash after commit' };
  const key = `crash-${ten.id}`;
  // The request commits the suspend, then its daemon stops dead: its middleware never runs again.
  const crashing = await crashingDaemon(t, ten.id, body, () => new Promise<void>(() => undefined));
  const aborted = new AbortController();
  const lost = fetch(`${crashing.url}/api/admin/tenants/${ten.id}/lifecycle/suspend`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
    signal: aborted.signal,
  }).catch(() => undefined);
  await crashing.committed;
  aborted.abort();
  await lost;
  // The client retries long after: the row is older than any request lives, as after a real crash.
  const { ds } = await openServices(db.url, db.dir);
  await ds.query('UPDATE idempotency_keys SET created_at = created_at - ? WHERE idem_key = ?', [
    IDEMPOTENCY_ABANDONED_MS + 1000,
    key,
  ]);
  await ds.destroy();

  const retried = await suspend(ten.id, body, { key });
  t.is(retried.status, 200, JSON.stringify(retried.body));
  t.is(retried.body.idempotent_replay, true, 'the committed answer, not a new run');
  t.is(retried.body.lifecycle_state, 'suspended');
  const done = await suspendsOf(ten.id);
  t.deepEqual(done.audits, ['success'], 'one suspend, and no refused second attempt');
  t.deepEqual(done.jobs, [retried.body.job_id]);
});

test('Idempotency-Key: a handler that fails after its commit keeps the committed answer for the retry', async (t) => {
  const ten = await newTenant();
  const body = { expected_state: 'active', expected_updated_at: ten.updatedAt, reason: 'fail after commit' };
  const key = `fail-${ten.id}`;
  const failing = await crashingDaemon(t, ten.id, body, () => Promise.reject(new Error('after the commit')));
  const first = await fetch(`${failing.url}/api/admin/tenants/${ten.id}/lifecycle/suspend`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  await first.body?.cancel();
  t.is(first.status, 500);
  const retried = await suspend(ten.id, body, { key });
  t.is(retried.status, 200, JSON.stringify(retried.body));
  t.is(retried.body.idempotent_replay, true);
  const done = await suspendsOf(ten.id);
  t.deepEqual(done.audits, ['success']);
  t.deepEqual(done.jobs, [retried.body.job_id]);
});
