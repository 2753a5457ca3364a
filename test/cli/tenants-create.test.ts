/**
 * `iam tenants create` provisions the tenant before it returns (or not, with --no-wait), and a
 * blocked provisioning exits 1 with `provisioning_blocked`, naming the error code and its cause;
 * `iam provisioning retry` (over the admin API, as an operator logged in with `iam login`)
 * requeues it and waits while a daemon finishes it. The real executable; `tenants create` needs
 * no daemon: it drives the runner itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import test from 'ava';
import { testDatabase } from '../helpers/db.js';
import { freePort, startDaemon } from '../helpers/daemon.js';
import { seed } from '../helpers/seed.js';
import { iam, iamJson } from '../helpers/cli.js';
import { startSmtpSink } from '../helpers/smtp-sink.js';

/** A fresh, migrated database. */
async function migrated(t: Parameters<typeof testDatabase>[0]) {
  const db = await testDatabase(t);
  await iamJson(db, ['db', 'migrate']);
  return db;
}

const STEPS = [
  'request_accepted',
  'schema_verified',
  'signing_key_ready',
  'mail_transport_verified',
  'tenant_activated',
];

test('create --json waits: the tenant, active, with a provisioning summary; --verbose adds the whole operation', async (t) => {
  const db = await migrated(t);
  const r = await iamJson(db, ['tenants', 'create', '--name', 'Ready']);
  t.regex(r.id, /^ten_/);
  t.is(r.name, 'Ready');
  t.is(r.lifecycle_state, 'active');
  t.regex(r.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'times as ISO 8601');
  t.deepEqual(Object.keys(r.provisioning).sort(), [
    'current_step',
    'duration_ms',
    'operation_id',
    'state',
    'steps_done',
    'steps_total',
  ]);
  t.like(r.provisioning, { state: 'completed', current_step: 'tenant_activated', steps_done: 5, steps_total: 5 });
  t.is(typeof r.provisioning.duration_ms, 'number');
  t.true(JSON.stringify(r).length < 1000, 'a summary, not the history');

  const v = await iamJson(db, ['tenants', 'create', '--name', 'Ready too', '--verbose']);
  t.is(v.provisioning.state, 'completed');
  t.is(v.provisioning.operation.tenant_id, v.id);
  t.is(v.provisioning.operation.operation_id, v.provisioning.operation_id);
  t.deepEqual(
    v.provisioning.operation.steps.map((s: { step_key: string; status: string }) => [s.step_key, s.status]),
    STEPS.map((k) => [k, 'completed']),
  );
  t.true(v.provisioning.operation.history.length >= STEPS.length, 'the history, under --verbose');
  const listed = await iamJson<{ id: string; lifecycle_state: string }[]>(db, ['tenants', 'list']);
  t.is(listed.find((x) => x.id === r.id)?.lifecycle_state, 'active');
});

test('create without --json is short; --verbose prints a progress line per step on stderr', async (t) => {
  const db = await migrated(t);
  const r = await iam(db, ['tenants', 'create', '--name', 'Quiet']);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /Created tenant ten_/);
  t.regex(r.stdout, /state:\s+active/);
  t.regex(r.stdout, /provisioning:\s+prv_\S+ completed, 5\/5 steps in \d+\.\d s/);
  t.is(r.stderr, '', 'no progress lines when nothing goes wrong');
  const v = await iam(db, ['tenants', 'create', '--name', 'Chatty', '--verbose']);
  t.is(v.code, 0, v.stderr);
  for (const k of STEPS) t.regex(v.stderr, new RegExp(`${k}: completed`));
  t.false(v.stdout.includes('schema_verified'), 'progress stays off stdout');
});

test('create --no-wait --json returns the tenant still provisioning', async (t) => {
  const db = await migrated(t);
  const r = await iamJson(db, ['tenants', 'create', '--name', 'Later', '--no-wait']);
  t.is(r.lifecycle_state, 'provisioning');
  t.like(r.provisioning, { state: 'queued', current_step: 'request_accepted', steps_done: 0, duration_ms: null });
  const shown = await iamJson(db, ['provisioning', 'show', '--tenant', r.id]);
  t.is(shown.operation_id, r.provisioning.operation_id);
  t.is(shown.status, 'queued');
});

test('a blocked provisioning exits 1 with provisioning_blocked; after the fix, provisioning retry activates the tenant', async (t) => {
  const db = await migrated(t);
  const port = await freePort();
  const env = {
    IAM_SMTP_URL: `smtp://127.0.0.1:${port}`,
    IAM_PROVISIONING_MAX_ATTEMPTS: '2',
    IAM_PROVISIONING_RETRY_BASE_MS: '50',
  };
  const r = await iam(db, ['tenants', 'create', '--name', 'No relay', '--json'], env);
  t.is(r.code, 1, r.stdout + r.stderr);
  const err = JSON.parse(r.stdout) as { error: string; message: string };
  t.is(err.error, 'provisioning_blocked');
  t.regex(err.message, /mail_transport_verified/);
  t.regex(err.message, /mail_transport_unreachable/);
  const id = /iam provisioning retry --tenant (ten_[A-Za-z0-9_-]+)/.exec(err.message)?.[1];
  t.truthy(id, err.message);

  const shown = await iam(db, ['provisioning', 'show', '--tenant', id!], env);
  t.is(shown.code, 0, shown.stderr);
  t.regex(shown.stdout, /blocked/);

  // The operator fixes the cause (the relay is up again), logs in and retries over the admin API.
  const sink = await startSmtpSink({ port });
  t.teardown(() => sink.close());
  const admin = await seed(db.url, db.dir);
  const daemon = await startDaemon(db.url, db.dir, env);
  t.teardown(() => daemon.stop());
  const opEnv = { ...env, IAM_CLI_CONFIG: join(mkdtempSync(join(tmpdir(), 'iam-op-')), 'config.json') };
  t.teardown(() => rmSync(dirname(opEnv.IAM_CLI_CONFIG), { recursive: true, force: true }));
  const login = await iam(
    db,
    ['login', '--url', daemon.url, '--client-id', admin.platform.clientId, '--client-secret-stdin', '--json'],
    opEnv,
    { stdin: `${admin.platform.secret}\n` },
  );
  t.is(login.code, 0, login.stdout + login.stderr);

  const retried = await iam(db, ['provisioning', 'retry', '--tenant', id!, '--json'], opEnv);
  t.is(retried.code, 0, retried.stdout + retried.stderr);
  const op = JSON.parse(retried.stdout);
  t.is(op.status, 'completed');
  t.is(op.retry_count, 1);
  t.deepEqual(
    op.steps.map((x: { status: string }) => x.status),
    STEPS.map(() => 'completed'),
  );
  t.is(typeof op.idempotency_key, 'string');
  const listed = await iamJson<{ id: string; lifecycle_state: string }[]>(db, ['tenants', 'list']);
  t.is(listed.find((x) => x.id === id)?.lifecycle_state, 'active');

  // Not blocked any more: a second retry is refused by the service, and says so.
  const again = await iam(db, ['provisioning', 'retry', '--tenant', id!, '--json'], opEnv);
  t.is(again.code, 1, again.stdout);
  t.is(JSON.parse(again.stdout).error, 'provisioning_not_blocked');
});

test('blocked because the SMTP relay refuses connections: create, show and retry name the code and the cause', async (t) => {
  const db = await migrated(t);
  const env = {
    IAM_SMTP_URL: `smtp://127.0.0.1:${await freePort()}`,
    IAM_PROVISIONING_MAX_ATTEMPTS: '2',
    IAM_PROVISIONING_RETRY_BASE_MS: '50',
  };
  const created = await iam(db, ['tenants', 'create', '--name', 'Refused', '--json'], env);
  t.is(created.code, 1, created.stdout + created.stderr);
  const err = JSON.parse(created.stdout) as Record<string, string>;
  t.is(err.error, 'provisioning_blocked');
  t.is(err.last_error_code, 'mail_transport_unreachable');
  t.regex(err.last_error_cause, /connection refused/);
  t.regex(err.message, /mail_transport_unreachable: connection refused/);
  const id = /iam provisioning retry --tenant (ten_[A-Za-z0-9_-]+)/.exec(err.message)![1];

  // `provisioning show`: the cause in the JSON record and in the human output.
  const shown = await iamJson(db, ['provisioning', 'show', '--tenant', id]);
  t.is(shown.last_error_code, 'mail_transport_unreachable');
  t.regex(shown.last_error_cause, /connection refused/);
  const mail = shown.steps.find((s: { step_key: string }) => s.step_key === 'mail_transport_verified');
  t.regex(mail.last_error_cause, /connection refused/);
  const human = await iam(db, ['provisioning', 'show', '--tenant', id], env);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /Cause: connection refused/);
  t.regex(human.stdout, /mail_transport_verified: mail_transport_unreachable: connection refused/);

  // `provisioning retry` over the admin API, the relay still down: blocked again, with the cause.
  const admin = await seed(db.url, db.dir);
  const daemon = await startDaemon(db.url, db.dir, env);
  t.teardown(() => daemon.stop());
  const opEnv = { ...env, IAM_CLI_CONFIG: join(mkdtempSync(join(tmpdir(), 'iam-op-')), 'config.json') };
  t.teardown(() => rmSync(dirname(opEnv.IAM_CLI_CONFIG), { recursive: true, force: true }));
  const login = await iam(
    db,
    ['login', '--url', daemon.url, '--client-id', admin.platform.clientId, '--client-secret-stdin', '--json'],
    opEnv,
    { stdin: `${admin.platform.secret}\n` },
  );
  t.is(login.code, 0, login.stdout + login.stderr);
  const retried = await iam(db, ['provisioning', 'retry', '--tenant', id, '--json'], opEnv);
  t.is(retried.code, 1, retried.stdout + retried.stderr);
  const again = JSON.parse(retried.stdout) as Record<string, string>;
  t.is(again.error, 'provisioning_blocked');
  t.is(again.last_error_code, 'mail_transport_unreachable');
  t.regex(again.last_error_cause, /connection refused/);
  const humanRetry = await iam(db, ['provisioning', 'retry', '--tenant', id], opEnv);
  t.is(humanRetry.code, 1, humanRetry.stdout + humanRetry.stderr);
  t.regex(humanRetry.stderr, /last error:\s+mail_transport_unreachable: connection refused/);
  t.regex(humanRetry.stderr, /Error: .*mail_transport_unreachable: connection refused/);
});
