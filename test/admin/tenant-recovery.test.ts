/**
 * Tenant disaster recovery: the operator's `iam recovery` steps (real executable) and
 * POST /api/admin/platform/control-plane/tenant-recovery/{operationId}/reactivate on a real
 * daemon: the full path with a signed route publication verified against /jwks, every refusal,
 * Idempotency-Key replay, and concurrent reactivations with one winner.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { iam } from '../helpers/cli.js';
import {
  activeTenant,
  clientCredentialsToken,
  openServices,
  seed,
  type Seeded,
  introspectAs,
} from '../helpers/seed.js';
import { ApiError } from '../../shared/errors.js';
import { KeyService } from '../../shared/services/keys.js';
import { RecoveryService, type VerifyProgress } from '../../shared/services/recovery/index.js';
import { api } from '../helpers/api.js';

/** A JSON body: untyped by nature; the assertions check its shape field by field. */
type Json = ReturnType<typeof JSON.parse>;

let db: TestDb;
let d: Daemon;
let s: Seeded;
let platform: string;
let tenantAdmin: string;
let n = 0;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  d = await startDaemon(db.url, db.dir, { IAM_RECOVERY_STABILIZATION_SECONDS: '0' });
  platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  tenantAdmin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

interface Creds {
  clientId: string;
  secret: string;
}

/** The operator's shell: the daemon's environment (issuer), stabilization 0 unless told. */
async function cli(args: string[], env: Record<string, string> = {}) {
  const r = await iam(db, [...args, '--json'], { IAM_ISSUER: d.url, IAM_RECOVERY_STABILIZATION_SECONDS: '0', ...env });
  let body: Json;
  try {
    body = JSON.parse(r.stdout);
  } catch {
    body = undefined;
  }
  return { ...r, body };
}
async function cliOk(args: string[], env: Record<string, string> = {}) {
  const r = await cli(args, env);
  if (r.code !== 0) throw new Error(`iam ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** A fresh tenant with a worker, a resource server, a login client, an extra client and two users. */
async function newTenant(users = 2) {
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  try {
    const actor = { type: 'system' as const, id: 'test' };
    const ten = await activeTenant(provisioning, { name: `Recovery ${++n}` }, actor);
    const rs = await directory.createClient(
      ten.id,
      {
        name: 'rs',
        grant_types: ['client_credentials'],
        scopes: ['api'],
        resource_identifiers: [`https://rs${n}.example.test`],
      },
      actor,
    );
    const w = await directory.createClient(
      ten.id,
      { name: 'w', grant_types: ['client_credentials'], scopes: ['api'] },
      actor,
    );
    const web = await directory.createClient(
      ten.id,
      { name: 'web', public: true, redirect_uris: ['http://127.0.0.1/cb'] },
      actor,
    );
    for (let i = 0; i < users; i++)
      await directory.createUser(ten.id, { email: `u${i}@r${n}.example.test`, name: `User ${i}` }, actor);
    return {
      id: ten.id,
      rs: { clientId: rs.client.client_id, secret: rs.client_secret! },
      worker: { clientId: w.client.client_id, secret: w.client_secret! },
      web: web.client.client_id,
      lookupRows: 3 + users,
    };
  } finally {
    await ds.destroy();
  }
}

async function sql<T = Json>(q: string, params: unknown[] = []): Promise<T[]> {
  const { ds } = await openServices(db.url, db.dir);
  try {
    return await ds.query<T[]>(q, params);
  } finally {
    await ds.destroy();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function started(tenantId: string) {
  return (await cliOk(['recovery', 'start', '--tenant', tenantId, '--reason', 'INC-7 test'])).body.recovery;
}
/** Waits out the deny drain, then confirms the restore. */
async function confirmed(op: { operationId: string; drainNotBefore: number }) {
  const wait = op.drainNotBefore - Date.now();
  // A clock to pass: the service refuses the confirmation before drainNotBefore.
  if (wait > 0) await sleep(wait + 50);
  return (
    await cliOk([
      'recovery',
      'confirm-restore',
      '--operation',
      op.operationId,
      '--restore-reference',
      'snap-2026-11-21',
    ])
  ).body.recovery;
}
async function verified(opId: string, env: Record<string, string> = {}) {
  return (await cliOk(['recovery', 'verify', '--operation', opId, '--batch-size', '2'], env)).body;
}
async function readyToReactivate() {
  const ten = await newTenant();
  const op = await started(ten.id);
  await confirmed(op);
  const v = await verified(op.operationId);
  return { ten, op: v.recovery };
}

const call = (
  method: string,
  path: string,
  body?: unknown,
  opts: { token?: string | null; key?: string; base?: string } = {},
) =>
  api(opts.base ?? d.url, method, path, {
    body,
    token: opts.token === undefined ? platform : opts.token,
    idempotencyKey: opts.key,
  });
const reactivate = (opId: string, body: unknown, opts?: Parameters<typeof call>[3]) =>
  call('POST', `/api/admin/platform/control-plane/tenant-recovery/${opId}/reactivate`, body, opts);
const confirmation = (tenantId: string) => ({ confirmation: `REACTIVATE_RECOVERED_TENANT:${tenantId}` });

function basic(c: Creds) {
  return 'Basic ' + Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.secret)}`).toString('base64');
}
async function tokenStatus(c: Creds): Promise<number> {
  const res = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(c) },
    body: new URLSearchParams({ grant_type: 'client_credentials' }),
  });
  await res.body?.cancel();
  return res.status;
}
const introspect = (caller: Creds, token: string) => introspectAs(d.url, caller, token);
async function loginCodeStatus(clientId: string, email: string): Promise<number> {
  const res = await fetch(`${d.url}/api/v1/auth/direct/email-code/send`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: clientId, email }),
  });
  await res.body?.cancel();
  return res.status;
}

const INT_OR_NULL = (v: unknown) => v === null || Number.isInteger(v);

/** Every field the spec lists for a Tenant recovery operation, with its type. */
function assertRecoveryShape(t: ExecutionContext, r: Record<string, Json>) {
  for (const k of ['operationId', 'environmentId', 'tenantId', 'state']) t.is(typeof r[k], 'string', k);
  t.true(Number.isInteger(r.pinnedRouteGeneration));
  for (const k of [
    'denyRuntimeGeneration',
    'denyRegistryGeneration',
    'denyObservedAt',
    'drainNotBefore',
    'restoredAt',
    'migrationVerifiedAt',
    'lookupReprojectedAt',
    'bindingSmokeVerifiedAt',
    'reactivatedRuntimeGeneration',
    'reactivatedAt',
  ]) {
    t.true(k in r && INT_OR_NULL(r[k]), k);
  }
  t.is(typeof r.restoreReferenceRecorded, 'boolean');
  t.true(r.lastErrorCode === null || typeof r.lastErrorCode === 'string');
  // Added beside it (the record is extensible): the sanitised cause of the last error.
  t.true(r.lastErrorCause === null || typeof r.lastErrorCause === 'string');
  for (const k of ['canCancel', 'canConfirmRestore', 'canVerify', 'canReactivate']) t.is(typeof r[k], 'boolean', k);
  const l = r.lookupReprojection;
  t.is(typeof l.stage, 'string');
  for (const k of ['targetIndex', 'afterCreatedAt', 'afterRowId', 'projectedRows', 'verifiedRows'])
    t.true(Number.isInteger(l[k]), `lookupReprojection.${k}`);
  t.is(typeof l.afterId, 'string');
  t.is(typeof l.registryDigestPinned, 'boolean');
  t.is(typeof l.leaseActive, 'boolean');
  t.true(Array.isArray(r.targets) && r.targets.length === 1);
  for (const target of r.targets) {
    for (const k of [
      'shardId',
      'dataRole',
      'residencyPartition',
      'bindingRef',
      'providerDatabaseId',
      'migrationStreamId',
      'releaseId',
      'manifestDigest',
    ])
      t.is(typeof target[k], 'string', `target.${k}`);
    for (const k of ['assignmentGeneration', 'shardGeneration']) t.true(Number.isInteger(target[k]), `target.${k}`);
    for (const k of ['restoreConfirmedAt', 'migrationVerifiedAt', 'lookupReprojectedAt', 'bindingSmokeVerifiedAt'])
      t.true(k in target && INT_OR_NULL(target[k]), `target.${k}`);
  }
  t.true(Number.isInteger(r.createdAt) && Number.isInteger(r.updatedAt));
}

test('full path: start denies the tenant, confirm-restore, verify, reactivate publishes the pinned route as active', async (t) => {
  const ten = await newTenant();
  const oldToken = await clientCredentialsToken(d.url, ten.worker.clientId, ten.worker.secret);
  t.is(await loginCodeStatus(ten.web, 'u0@example.test'), 200, 'logins work before the recovery');

  const op = await started(ten.id);
  t.regex(op.operationId, new RegExp(`^dr_${ten.id}_1$`), "deterministic id: the tenant's first recovery");
  t.is(op.state, 'awaiting_restore');
  t.is(op.environmentId, d.url);
  t.is(op.pinnedRouteGeneration, 1);
  t.true(Number.isInteger(op.denyRuntimeGeneration) && Number.isInteger(op.denyObservedAt));
  t.true(op.drainNotBefore > op.denyObservedAt);
  t.is(op.targets[0].shardId, 'primary');
  t.is(op.targets[0].migrationStreamId, 'iam-core');
  t.regex(op.targets[0].manifestDigest, /^sha256:[0-9a-f]{64}$/);
  t.false(op.targets[0].bindingRef.includes('password'));

  // While recovering: no tokens, no logins, and an earlier token introspects inactive.
  t.is((await sql('SELECT lifecycle_state FROM tenants WHERE id = ?', [ten.id]))[0].lifecycle_state, 'recovering');
  t.is(await tokenStatus(ten.worker), 401);
  t.is(await loginCodeStatus(ten.web, 'u0@example.test'), 403);
  const intro = await introspect(s.platform, oldToken);
  t.is(intro.status, 200);
  t.deepEqual(intro.body, { active: false });

  // The deny route publication is signed and observable.
  const denied = await call('GET', `/api/admin/platform/control-plane/tenant-routes/${ten.id}`);
  t.is(denied.status, 200, JSON.stringify(denied.body));
  t.is(denied.body.route.state, 'deny');
  t.is(denied.body.publication.state, 'deny');
  t.is(denied.body.publication.runtimeGeneration, op.denyRuntimeGeneration);

  const c = await confirmed(op);
  t.is(c.state, 'restore_confirmed');
  t.true(c.restoreReferenceRecorded);
  t.true(Number.isInteger(c.restoredAt));

  const v = await cliOk(['recovery', 'verify', '--operation', op.operationId, '--batch-size', '2']);
  t.regex(v.stderr, /lookup scan batch 1: 2 rows/, 'a progress line per batch');
  const rec = v.body.recovery;
  t.is(rec.state, 'stabilizing');
  t.is(rec.lookupReprojection.stage, 'done');
  t.is(rec.lookupReprojection.projectedRows, ten.lookupRows);
  t.is(rec.lookupReprojection.verifiedRows, ten.lookupRows);
  t.true(rec.lookupReprojection.registryDigestPinned);
  t.false(rec.lookupReprojection.leaseActive);
  t.deepEqual(
    v.body.smokeChecks.map((x: Json) => [x.check, x.ok]),
    [
      ['tenant_read', true],
      ['write_rollback', true],
      ['signing_key', true],
    ],
  );
  t.true(
    Number.isInteger(rec.migrationVerifiedAt) &&
      Number.isInteger(rec.lookupReprojectedAt) &&
      Number.isInteger(rec.bindingSmokeVerifiedAt),
  );
  t.true(rec.canReactivate);
  const row = (
    await sql(
      `SELECT smoke_success_count, lookup_registry_generation, registry_digest FROM tenant_recovery_operations
      WHERE id = ?`,
      [op.operationId],
    )
  )[0];
  t.is(Number(row.smoke_success_count), 3);
  const rows = await sql(
    'SELECT lookup_kind, lookup_key FROM tenant_lookup_rows WHERE tenant_id = ? AND registry_generation = ?',
    [ten.id, Number(row.lookup_registry_generation)],
  );
  t.is(rows.length, ten.lookupRows);
  t.true(rows.some((x) => x.lookup_kind === 'client_id' && x.lookup_key === ten.worker.clientId));

  const r = await reactivate(op.operationId, confirmation(ten.id));
  t.is(r.status, 200, JSON.stringify(r.body));
  t.deepEqual(Object.keys(r.body).sort(), ['auditId', 'recovery']);
  assertRecoveryShape(t, r.body.recovery);
  const done = r.body.recovery;
  t.is(done.state, 'reactivated');
  t.true(Number.isInteger(done.reactivatedAt));
  t.is(done.reactivatedRuntimeGeneration, op.denyRuntimeGeneration + 1);
  t.false(done.canReactivate);
  t.false(done.canCancel);
  const auditRow = await sql(
    'SELECT action, target_id, tenant_id, actor_id, request_id, summary FROM audit_events WHERE id = ?',
    [r.body.auditId],
  );
  t.is(auditRow.length, 1);
  t.is(auditRow[0].action, 'tenant.recovery.reactivate');
  t.is(auditRow[0].target_id, op.operationId);
  t.is(auditRow[0].tenant_id, ten.id);
  t.is(auditRow[0].actor_id, s.platform.clientId);
  t.truthy(auditRow[0].request_id);
  const summary = JSON.parse(auditRow[0].summary);
  t.is(summary.before.lifecycle_state, 'recovering');
  t.is(summary.after.lifecycle_state, 'active');

  // The tenant serves again.
  t.is((await sql('SELECT lifecycle_state FROM tenants WHERE id = ?', [ten.id]))[0].lifecycle_state, 'active');
  t.is(await tokenStatus(ten.worker), 200);
  t.is(await loginCodeStatus(ten.web, 'u1@example.test'), 200);

  // The signed route publication verifies against the daemon's published keys.
  const route = await call('GET', `/api/admin/platform/control-plane/tenant-routes/${ten.id}`);
  t.is(route.status, 200);
  t.is(route.body.route.state, 'active');
  t.is(route.body.route.routeGeneration, op.pinnedRouteGeneration);
  t.is(route.body.route.runtimeGeneration, done.reactivatedRuntimeGeneration);
  const pub = route.body.publication;
  t.is(decodeProtectedHeader(pub.jws).typ, 'route-publication+jwt');
  const { payload } = await jwtVerify(pub.jws, createRemoteJWKSet(new URL(`${d.url}/jwks`)), {
    issuer: d.url,
    typ: 'route-publication+jwt',
  });
  t.is(payload.tenant_id, ten.id);
  t.is(payload.state, 'active');
  t.is(payload.route_generation, op.pinnedRouteGeneration);
  t.is(payload.runtime_generation, done.reactivatedRuntimeGeneration);
  t.is(payload.operation_id, op.operationId);
  t.is(payload.registry_digest, row.registry_digest);
  t.regex(String(payload.registry_digest), /^sha256:[0-9a-f]{64}$/);
  t.is(typeof payload.iat, 'number');

  // GET shows the closed operation; the pre-deny registry generation is retired.
  const got = await call('GET', `/api/admin/platform/control-plane/tenant-recovery/${op.operationId}`);
  t.is(got.status, 200);
  t.is(got.body.recovery.state, 'reactivated');
  const gens = await sql('SELECT DISTINCT registry_generation FROM tenant_lookup_rows WHERE tenant_id = ?', [ten.id]);
  t.deepEqual(
    gens.map((g) => Number(g.registry_generation)),
    [Number(row.lookup_registry_generation)],
  );

  // Already reactivated.
  const again = await reactivate(op.operationId, confirmation(ten.id));
  t.is(again.status, 409);
  t.is(again.body.error, 'recovery_not_reactivatable');

  // A second recovery of the same tenant gets the next sequence number.
  const second = await started(ten.id);
  t.is(second.operationId, `dr_${ten.id}_2`);
  t.is((await cliOk(['recovery', 'cancel', '--operation', second.operationId])).body.recovery.state, 'cancelled');
});

test('refusals: 404, 401, 403 for a tenant admin, 400 without confirmation, 422 wrong confirmation, 409 restore_not_confirmed', async (t) => {
  const ten = await newTenant(0);
  const op = await started(ten.id);
  t.is((await reactivate('dr_no-such-tenant_1', confirmation('no-such-tenant'))).status, 404);
  t.is((await reactivate(op.operationId, confirmation(ten.id), { token: null })).status, 401);
  const forbidden = await reactivate(op.operationId, confirmation(ten.id), { token: tenantAdmin });
  t.is(forbidden.status, 403);
  t.is(forbidden.body.error, 'insufficient_scope');
  t.is(
    (
      await call('GET', `/api/admin/platform/control-plane/tenant-recovery/${op.operationId}`, undefined, {
        token: tenantAdmin,
      })
    ).status,
    403,
  );
  const missing = await reactivate(op.operationId, {});
  t.is(missing.status, 400);
  t.is(missing.body.error, 'invalid_request');

  const wrong = await reactivate(op.operationId, { confirmation: `REACTIVATE_RECOVERED_TENANT:${s.tenantId}` });
  t.is(wrong.status, 422);
  t.is(wrong.body.error, 'confirmation_mismatch');
  t.true(wrong.body.message.includes('REACTIVATE_RECOVERED_TENANT:{tenantId}'), wrong.body.message);

  const early = await reactivate(op.operationId, confirmation(ten.id));
  t.is(early.status, 409);
  t.is(early.body.error, 'restore_not_confirmed');
  t.deepEqual(early.body.unmetPreconditions, [
    'restore_not_confirmed',
    'migration_not_verified',
    'lookup_not_reprojected',
    'binding_smoke_incomplete',
  ]);

  // The CLI refuses to verify before the restore, and to confirm before the deny drained.
  const v = await cli(['recovery', 'verify', '--operation', op.operationId]);
  t.is(v.code, 1);
  t.is(v.body.error, 'restore_not_confirmed');
  // The drain rule is "never confirmed before drainNotBefore". Usually the CLI gets there first
  // and is refused; on a loaded machine it may start after the drain, and is then accepted.
  const c = await cli(['recovery', 'confirm-restore', '--operation', op.operationId, '--restore-reference', 'snap']);
  if (c.code === 0) {
    t.true(c.body.recovery.restoredAt >= op.drainNotBefore, 'accepted only once the drain was over');
  } else {
    t.is(c.code, 1);
    t.is(c.body.error, 'drain_pending');
    await confirmed(op);
  }
  const unverified = await reactivate(op.operationId, confirmation(ten.id));
  t.is(unverified.status, 409);
  t.is(unverified.body.error, 'migration_not_verified');
  t.deepEqual(unverified.body.unmetPreconditions, [
    'migration_not_verified',
    'lookup_not_reprojected',
    'binding_smoke_incomplete',
  ]);
  t.is(
    (await sql('SELECT lifecycle_state FROM tenants WHERE id = ?', [ten.id]))[0].lifecycle_state,
    'recovering',
    'nothing moved',
  );
});

test("stabilization: pending until the deadline set at verify; the daemon's own interval is a floor; a stale registry needs a new verify", async (t) => {
  const ten = await newTenant(1);
  const op = await started(ten.id);
  await confirmed(op);
  const v = await verified(op.operationId, { IAM_RECOVERY_STABILIZATION_SECONDS: '3600' });
  t.false(v.recovery.canReactivate);
  t.is(v.stabilizationNotBefore, v.recovery.bindingSmokeVerifiedAt + 3_600_000);
  const pending = await reactivate(op.operationId, confirmation(ten.id));
  t.is(pending.status, 409);
  t.is(pending.body.error, 'stabilization_pending');
  t.is(pending.body.notBefore, v.stabilizationNotBefore);
  t.true(pending.body.message.includes(new Date(v.stabilizationNotBefore).toISOString()));

  // Verify again with no interval: the CLI's deadline is now, but a daemon configured with
  // a long interval still refuses.
  const v2 = await verified(op.operationId);
  // Same issuer: another node of the deployment, so the platform token is valid there.
  const strict = await startDaemon(db.url, db.dir, { IAM_ISSUER: d.url, IAM_RECOVERY_STABILIZATION_SECONDS: '3600' });
  t.teardown(() => strict.stop());
  const floor = await reactivate(op.operationId, confirmation(ten.id), { base: strict.url });
  t.is(floor.status, 409);
  t.is(floor.body.error, 'stabilization_pending');
  t.is(floor.body.notBefore, v2.recovery.bindingSmokeVerifiedAt + 3_600_000);

  // A client added after the verify makes the pinned registry stale.
  const { ds, directory } = await openServices(db.url, db.dir);
  await directory.createClient(
    ten.id,
    { name: 'late', grant_types: ['client_credentials'], scopes: ['api'] },
    { type: 'system', id: 'test' },
  );
  await ds.destroy();
  const stale = await reactivate(op.operationId, confirmation(ten.id));
  t.is(stale.status, 409);
  t.is(stale.body.error, 'lookup_not_reprojected');
  const v3 = await verified(op.operationId);
  t.is(v3.recovery.lookupReprojection.projectedRows, ten.lookupRows + 1);
  const ok = await reactivate(op.operationId, confirmation(ten.id));
  t.is(ok.status, 200, JSON.stringify(ok.body));
});

test('Idempotency-Key: a replay returns the stored response with idempotent_replay; another payload is 422', async (t) => {
  const { ten, op } = await readyToReactivate();
  const key = `reactivate-${op.operationId}`;
  const first = await reactivate(op.operationId, confirmation(ten.id), { key });
  t.is(first.status, 200, JSON.stringify(first.body));
  t.is(first.body.idempotent_replay, undefined);
  const replay = await reactivate(op.operationId, confirmation(ten.id), { key });
  t.is(replay.status, 200);
  t.is(replay.body.idempotent_replay, true);
  const { idempotent_replay: _, ...rest } = replay.body;
  t.deepEqual(rest, first.body);
  const mismatch = await reactivate(op.operationId, { confirmation: 'REACTIVATE_RECOVERED_TENANT:other' }, { key });
  t.is(mismatch.status, 422);
  t.is(mismatch.body.error, 'idempotency_key_mismatch');
  const audits = await sql(
    "SELECT id FROM audit_events WHERE action = 'tenant.recovery.reactivate' AND target_id = ?",
    [op.operationId],
  );
  t.is(audits.length, 1, 'the replay did not reactivate twice');
});

test('concurrent reactivates: exactly one 200, the rest 409 recovery_not_reactivatable; one active publication', async (t) => {
  const { ten, op } = await readyToReactivate();
  const results = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      reactivate(op.operationId, confirmation(ten.id), { key: i % 2 ? `race-${i}-${op.operationId}` : undefined }),
    ),
  );
  const statuses = results.map((r) => r.status).sort();
  t.deepEqual(statuses, [200, 409, 409, 409, 409, 409, 409, 409], JSON.stringify(results.map((r) => r.body)));
  for (const r of results.filter((x) => x.status === 409)) t.is(r.body.error, 'recovery_not_reactivatable');
  const pubs = await sql(
    `SELECT runtime_generation FROM tenant_route_publications WHERE tenant_id = ? AND operation_id = ?
    AND state = 'active'`,
    [ten.id, op.operationId],
  );
  t.is(pubs.length, 1);
  const audits = await sql(
    "SELECT id FROM audit_events WHERE action = 'tenant.recovery.reactivate' AND target_id = ?",
    [op.operationId],
  );
  t.is(audits.length, 1);
});

test('cancel puts the tenant back as it was and publishes its route active again; a cancelled operation is not reactivatable', async (t) => {
  const ten = await newTenant(1);
  const op = await started(ten.id);
  t.is(await tokenStatus(ten.worker), 401);
  const dup = await cli(['recovery', 'start', '--tenant', ten.id, '--reason', 'again']);
  t.is(dup.code, 1);
  t.is(dup.body.error, 'recovery_already_open');
  t.true(dup.body.message.includes(op.operationId));

  const c = await cliOk(['recovery', 'cancel', '--operation', op.operationId]);
  t.is(c.body.recovery.state, 'cancelled');
  t.false(c.body.recovery.canCancel);
  t.is((await sql('SELECT lifecycle_state FROM tenants WHERE id = ?', [ten.id]))[0].lifecycle_state, 'active');
  t.is(await tokenStatus(ten.worker), 200);
  const route = await call('GET', `/api/admin/platform/control-plane/tenant-routes/${ten.id}`);
  t.is(route.body.route.state, 'active');
  t.is(route.body.publication.runtimeGeneration, op.denyRuntimeGeneration + 1);
  const r = await reactivate(op.operationId, confirmation(ten.id));
  t.is(r.status, 409);
  t.is(r.body.error, 'recovery_not_reactivatable');
  const again = await cli(['recovery', 'cancel', '--operation', op.operationId]);
  t.is(again.code, 1);
  t.is(again.body.error, 'recovery_not_open');

  const actions = await sql('SELECT action, actor_id FROM audit_events WHERE target_id = ? ORDER BY created_at', [
    op.operationId,
  ]);
  t.deepEqual(
    actions.map((a) => a.action),
    ['tenant.recovery.start', 'tenant.recovery.cancel'],
  );
  t.true(actions.every((a) => a.actor_id.length > 0));
});

test('iam recovery show and list; a suspended tenant is recovered back to suspended', async (t) => {
  const ten = await newTenant(0);
  const { ds } = await openServices(db.url, db.dir);
  await ds.query("UPDATE tenants SET lifecycle_state = 'suspended' WHERE id = ?", [ten.id]);
  await ds.destroy();
  const op = await started(ten.id);
  const shown = await cliOk(['recovery', 'show', '--operation', op.operationId]);
  t.is(shown.body.recovery.operationId, op.operationId);
  t.is(shown.body.details.reason, 'INC-7 test');
  t.is(shown.body.details.previousLifecycleState, 'suspended');
  const listed = await cliOk(['recovery', 'list', '--tenant', ten.id]);
  t.deepEqual(
    listed.body.map((r: Json) => r.operationId),
    [op.operationId],
  );
  const human = await iam(db, ['recovery', 'show', '--operation', op.operationId], { IAM_ISSUER: d.url });
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /state:\s+awaiting_restore/);
  t.regex(human.stdout, /confirm-restore --operation/);
  const unknown = await cli(['recovery', 'show', '--operation', 'dr_nope_1']);
  t.is(unknown.code, 1);
  t.is(unknown.body.error, 'not_found');

  await confirmed(op);
  await verified(op.operationId);
  const r = await reactivate(op.operationId, confirmation(ten.id));
  t.is(r.status, 200, JSON.stringify(r.body));
  t.is((await sql('SELECT lifecycle_state FROM tenants WHERE id = ?', [ten.id]))[0].lifecycle_state, 'suspended');
});

test("the deny drain outlasts the only cache of a tenant's state; the stabilization setting is validated", async (t) => {
  const { DENY_DRAIN_MS } = await import('../../shared/services/recovery/index.js');
  const { CALLER_CACHE_MS } = await import('../../daemon/routes/oauth/introspect.js');
  t.true(DENY_DRAIN_MS > CALLER_CACHE_MS);
  const { loadConfig, ConfigError } = await import('../../shared/config.js');
  const base = { IAM_DATABASE_URL: `sqlite:${db.dir}/cfg.db`, IAM_SECRET_KEY: 'x'.repeat(40) };
  t.is(loadConfig(base).recoveryStabilizationSeconds, 300);
  t.is(loadConfig({ ...base, IAM_RECOVERY_STABILIZATION_SECONDS: '0' }).recoveryStabilizationSeconds, 0);
  const e = t.throws(() => loadConfig({ ...base, IAM_RECOVERY_STABILIZATION_SECONDS: '-5' }), {
    instanceOf: ConfigError,
  });
  t.regex(e.message, /^IAM_RECOVERY_STABILIZATION_SECONDS:/);
});

test('an interrupted verify resumes from its persisted cursor; one verify at a time', async (t) => {
  const ten = await newTenant(6);
  const op = await started(ten.id);
  await confirmed(op);
  // The operator's process, in-process here so the run can be interrupted at a known batch.
  const { ds, config } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const service = new RecoveryService(ds, new KeyService(ds, config.secretKey, config.keyRetireAfterSeconds), d.url);
  const actor = { type: 'cli' as const, id: 'operator' };
  const interrupt = new Error('interrupted');
  let batches = 0;
  let concurrent: unknown;
  await t.throwsAsync(
    service.verify(
      op.operationId,
      {
        batchSize: 2,
        stabilizationSeconds: 0,
        onProgress: () => {
          batches++;
          if (batches === 1) {
            concurrent = service.verify(op.operationId, { batchSize: 2, stabilizationSeconds: 0 }, actor).then(
              () => 'ran',
              (e) => e,
            );
            return;
          }
          throw interrupt;
        },
      },
      actor,
    ),
    { is: interrupt },
  );
  const other = await concurrent;
  t.true(other instanceof ApiError && other.error === 'verify_in_progress', String(other));

  const mid = (await service.get(op.operationId, 0)).recovery;
  t.is(mid.state, 'verifying');
  t.is(mid.lookupReprojection.stage, 'scan');
  t.is(mid.lookupReprojection.projectedRows, 4, 'two committed batches of two');
  t.not(mid.lookupReprojection.afterId, '');
  t.true(mid.lookupReprojection.afterCreatedAt > 0);
  t.false(mid.lookupReprojection.leaseActive, 'the interrupted run released its lease');
  t.true(mid.canVerify);

  const seen: VerifyProgress[] = [];
  const v = await service.verify(
    op.operationId,
    { batchSize: 2, stabilizationSeconds: 0, onProgress: (p) => seen.push(p) },
    actor,
  );
  t.is(seen[0].stage, 'scan');
  t.is(seen[0].projectedRows, 6, 'the resumed run continues after the fourth row');
  t.is(v.recovery.state, 'stabilizing');
  t.is(v.recovery.lookupReprojection.projectedRows, ten.lookupRows);
  t.is(v.recovery.lookupReprojection.verifiedRows, ten.lookupRows);
  const row = (
    await sql('SELECT lookup_registry_generation FROM tenant_recovery_operations WHERE id = ?', [op.operationId])
  )[0];
  const rows = await sql('SELECT lookup_key FROM tenant_lookup_rows WHERE tenant_id = ? AND registry_generation = ?', [
    ten.id,
    Number(row.lookup_registry_generation),
  ]);
  t.is(rows.length, ten.lookupRows);
  t.is(new Set(rows.map((r) => r.lookup_key)).size, ten.lookupRows, 'each identifier once');
  const audits = await sql(
    "SELECT outcome FROM audit_events WHERE action = 'tenant.recovery.verify' AND target_id = ? ORDER BY created_at",
    [op.operationId],
  );
  t.deepEqual(
    audits.map((a) => a.outcome),
    ['success'],
  );
});

test('iam recovery reactivate (over the admin API): a wrongly typed confirmation sends nothing; the right one reactivates', async (t) => {
  const { ten, op } = await readyToReactivate();
  const config = join(mkdtempSync(join(tmpdir(), 'iam-op-')), 'config.json');
  t.teardown(() => rmSync(dirname(config), { recursive: true, force: true }));
  const opEnv = { IAM_CLI_CONFIG: config };
  const login = await iam(
    db,
    ['login', '--url', d.url, '--client-id', s.platform.clientId, '--client-secret-stdin', '--json'],
    opEnv,
    { stdin: `${s.platform.secret}\n` },
  );
  t.is(login.code, 0, login.stdout + login.stderr);

  // The operator types the confirmation at the prompt, with a typo: refused, nothing sent.
  const typo = await iam(db, ['recovery', 'reactivate', '--operation', op.operationId], opEnv, {
    stdin: `REACTIVATE_RECOVERED_TENANT:${ten.id}x\n`,
  });
  t.is(typo.code, 1, typo.stdout + typo.stderr);
  t.regex(
    typo.stderr,
    new RegExp(`Type REACTIVATE_RECOVERED_TENANT:${ten.id}`),
    'the prompt names the exact string to type',
  );
  t.regex(typo.stderr, /does not match/);
  // A wrong --confirm under --json: the same refusal, as JSON.
  const wrong = await iam(
    db,
    [
      'recovery',
      'reactivate',
      '--operation',
      op.operationId,
      '--confirm',
      'REACTIVATE_RECOVERED_TENANT:another',
      '--json',
    ],
    opEnv,
  );
  t.is(wrong.code, 1);
  t.is(JSON.parse(wrong.stdout).error, 'confirmation_mismatch');
  t.is(
    (await call('GET', `/api/admin/platform/control-plane/tenant-recovery/${op.operationId}`)).body.recovery.state,
    'stabilizing',
    'still not reactivated',
  );

  // Typed right: reactivated, with the audit id and the spec's recovery object.
  const done = await iam(
    db,
    [
      'recovery',
      'reactivate',
      '--operation',
      op.operationId,
      '--confirm',
      `REACTIVATE_RECOVERED_TENANT:${ten.id}`,
      '--json',
    ],
    opEnv,
  );
  t.is(done.code, 0, done.stdout + done.stderr);
  const out = JSON.parse(done.stdout);
  t.is(out.recovery.operationId, op.operationId);
  t.is(out.recovery.tenantId, ten.id);
  t.is(out.recovery.state, 'reactivated');
  t.is(typeof out.recovery.reactivatedAt, 'number');
  t.is(typeof out.recovery.reactivatedRuntimeGeneration, 'number');
  t.is(typeof out.auditId, 'string');
  const audits = await sql<{ action: string; actor_id: string }>(
    'SELECT action, actor_id FROM audit_events WHERE id = ?',
    [out.auditId],
  );
  t.is(audits[0]?.action, 'tenant.recovery.reactivate');
  t.is(audits[0]?.actor_id, s.platform.clientId);
  t.is(
    (await sql<{ lifecycle_state: string }>('SELECT lifecycle_state FROM tenants WHERE id = ?', [ten.id]))[0]
      .lifecycle_state,
    'active',
  );
});

test('a verify step that fails keeps its code and cause: the API and `iam recovery show` name both', async (t) => {
  const ten = await newTenant(0);
  const op = await started(ten.id);
  t.is(op.lastErrorCause, null);
  await confirmed(op);
  // Something moved the tenant out of recovering behind the operation's back: tenant_read fails.
  await sql("UPDATE tenants SET lifecycle_state = 'suspended' WHERE id = ?", [ten.id]);
  const v = await cli(['recovery', 'verify', '--operation', op.operationId, '--batch-size', '2']);
  t.is(v.code, 1, v.stdout + v.stderr);
  t.is(v.body.error, 'binding_smoke_failed');

  const shown = await cliOk(['recovery', 'show', '--operation', op.operationId]);
  t.is(shown.body.recovery.lastErrorCode, 'binding_smoke_failed');
  t.regex(shown.body.recovery.lastErrorCause, /tenant_read \(the tenant is suspended, expected recovering\)/);
  const human = await iam(db, ['recovery', 'show', '--operation', op.operationId], { IAM_ISSUER: d.url });
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /last error:\s+binding_smoke_failed: Binding smoke checks failed: tenant_read/);
  const api = await call('GET', `/api/admin/platform/control-plane/tenant-recovery/${op.operationId}`);
  t.is(api.status, 200);
  t.is(api.body.recovery.lastErrorCode, 'binding_smoke_failed');
  t.is(api.body.recovery.lastErrorCause, shown.body.recovery.lastErrorCause);
});
