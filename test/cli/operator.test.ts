/**
 * The operator commands that act through the admin API, run as the real `iam` executable
 * against a real daemon: login and its credentials file, suspend/resume with confirmation,
 * preconditions and idempotency-key replay, scope errors, the audit listing, and the recovery
 * command's no-prompt rule under --json.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { writeCredentials } from '../../cli/http/config.js';
import { spawn } from 'node:child_process';
import { iam, type Run } from '../helpers/cli.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { CLI_BIN, freePort, startDaemon, type Daemon } from '../helpers/daemon.js';
import {
  activeTenant,
  clientCredentialsToken,
  openServices,
  seed,
  type Seeded,
  introspectAs,
} from '../helpers/seed.js';
import { api } from '../helpers/api.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let home: string;
let platformConfig: string;
let n = 0;

interface Creds {
  clientId: string;
  secret: string;
}

/** Runs `iam` with its own CLI config file (never the real user's). */
function op(args: string[], config: string, opts: { stdin?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return iam(db, args, { IAM_CLI_CONFIG: config, ...opts.env }, opts.stdin === undefined ? {} : { stdin: opts.stdin });
}

const newConfig = () => join(mkdtempSync(join(home, 'cfg-')), 'iam', 'config.json');

async function login(c: Creds, config = newConfig()): Promise<string> {
  const r = await op(['login', '--url', d.url, '--client-id', c.clientId, '--client-secret-stdin', '--json'], config, {
    stdin: `${c.secret}\n`,
  });
  if (r.code !== 0) throw new Error(`login failed: ${r.stdout}${r.stderr}`);
  return config;
}

const json = (r: Run) => JSON.parse(r.stdout) as Record<string, any>;

async function newTenant() {
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  try {
    const actor = { type: 'system' as const, id: 'test' };
    const ten = await activeTenant(provisioning, { name: `Operator ${++n}` }, actor);
    const rs = await directory.createClient(
      ten.id,
      {
        name: 'rs',
        grant_types: ['client_credentials'],
        scopes: ['api'],
        resource_identifiers: ['https://op.example.test'],
      },
      actor,
    );
    const w = await directory.createClient(
      ten.id,
      { name: 'w', grant_types: ['client_credentials'], scopes: ['api'] },
      actor,
    );
    return {
      id: ten.id,
      rs: { clientId: rs.client.client_id, secret: rs.client_secret! },
      worker: { clientId: w.client.client_id, secret: w.client_secret! },
    };
  } finally {
    await ds.destroy();
  }
}

async function tenantState(id: string): Promise<string> {
  const { ds } = await openServices(db.url, db.dir);
  try {
    const rows = await ds.query<
      {
        lifecycle_state: string;
      }[]
    >('SELECT lifecycle_state FROM tenants WHERE id = ?', [id]);
    return rows[0].lifecycle_state;
  } finally {
    await ds.destroy();
  }
}

/** Audit events of one action on a tenant: by default the moves that happened, not the refused attempts. */
async function countAudit(tenant: string, action: string, outcome: 'success' | 'failure' = 'success'): Promise<number> {
  const { ds } = await openServices(db.url, db.dir);
  try {
    return (
      await ds.query<unknown[]>('SELECT id FROM audit_events WHERE tenant_id = ? AND action = ? AND outcome = ?', [
        tenant,
        action,
        outcome,
      ])
    ).length;
  } finally {
    await ds.destroy();
  }
}

const introspect = (caller: Creds, token: string) => introspectAs(d.url, caller, token);

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  d = await startDaemon(db.url, db.dir);
  home = mkdtempSync(join(tmpdir(), 'iam-cli-home-'));
  platformConfig = await login(s.platform);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
  if (home) rmSync(home, { recursive: true, force: true });
});

test('login verifies, reports scopes and tenant, and writes the config 0600 in a 0700 directory; the secret is never printed', async (t) => {
  const config = newConfig();
  const r = await op(['login', '--url', d.url, '--client-id', s.platform.clientId, '--client-secret-stdin'], config, {
    stdin: `${s.platform.secret}\n`,
  });
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /scopes: iam\.platform/);
  t.true(r.stdout.includes(`tenant: ${s.tenantId}`));
  t.false(r.stdout.includes(s.platform.secret) || r.stderr.includes(s.platform.secret));
  t.is(statSync(config).mode & 0o777, 0o600);
  t.is(statSync(join(config, '..')).mode & 0o777, 0o700);
  const saved = JSON.parse(readFileSync(config, 'utf8')) as Record<string, string>;
  t.deepEqual(saved, { url: d.url, client_id: s.platform.clientId, client_secret: s.platform.secret });

  // --json reports the same; the secret may also come from IAM_CLIENT_SECRET.
  const viaEnv = await op(['login', '--url', d.url, '--client-id', s.tenantAdmin.clientId, '--json'], newConfig(), {
    env: { IAM_CLIENT_SECRET: s.tenantAdmin.secret },
  });
  t.is(viaEnv.code, 0, viaEnv.stdout);
  t.deepEqual(json(viaEnv).scopes, ['iam.admin']);
  t.is(json(viaEnv).tenant_id, s.tenantId);
  t.false(viaEnv.stdout.includes(s.tenantAdmin.secret));

  const out = await op(['logout', '--json'], config);
  t.is(out.code, 0);
  t.true(json(out).removed);
  t.false(existsSync(config));
});

test('login with a wrong secret fails clearly and writes nothing; no secret at all is a usage error', async (t) => {
  const config = newConfig();
  const r = await op(
    ['login', '--url', d.url, '--client-id', s.platform.clientId, '--client-secret-stdin', '--json'],
    config,
    { stdin: 'wrong-secret\n' },
  );
  t.is(r.code, 1);
  t.is(json(r).error, 'invalid_client');
  t.regex(json(r).message, /wrong client id or secret.*nothing was saved/);
  t.false(existsSync(config));
  t.false(r.stdout.includes('wrong-secret'));

  const none = await op(['login', '--url', d.url, '--client-id', s.platform.clientId, '--json'], config);
  t.is(none.code, 2);
  t.is(json(none).error, 'missing_secret');
  t.false(existsSync(config));
});

test('a config readable by group or others is refused with the chmod fix', async (t) => {
  const config = await login(s.platform);
  chmodSync(config, 0o644);
  const r = await op(['audit', 'list', '--json'], config);
  t.is(r.code, 1);
  t.is(json(r).error, 'config_insecure');
  t.true(json(r).message.includes(`chmod 600 ${config}`));
  chmodSync(config, 0o600);
  t.is((await op(['audit', 'list', '--json', '--limit', '1'], config)).code, 0);
});

test('not logged in: every operator command says to run iam login', async (t) => {
  const config = newConfig();
  for (const args of [
    ['tenants', 'suspend', '--tenant', 'x', '--reason', 'r', '--yes'],
    ['audit', 'list'],
    ['provisioning', 'retry', '--tenant', 'x'],
    ['recovery', 'reactivate', '--operation', 'op1', '--confirm', 'REACTIVATE_RECOVERED_TENANT:x'],
  ]) {
    const r = await op([...args, '--json'], config);
    t.is(r.code, 1, args.join(' '));
    t.is(json(r).error, 'not_logged_in');
    t.regex(json(r).message, /iam login/);
  }
});

test('a daemon that is not running: the message asks whether it runs at the URL', async (t) => {
  const config = newConfig();
  const url = `http://127.0.0.1:${await freePort()}`;
  writeCredentials(config, { url, client_id: 'x', client_secret: 'y' });
  const r = await op(['audit', 'list', '--json', '--timeout', '5'], config);
  t.is(r.code, 1);
  t.is(json(r).error, 'connection_refused');
  t.true(json(r).message.includes(`is the daemon running at ${url}?`));
});

test('tenants suspend --json --yes suspends (tokens inactive); resume brings it back; audit list shows the actor', async (t) => {
  const ten = await newTenant();
  const tok = await clientCredentialsToken(d.url, ten.worker.clientId, ten.worker.secret);
  t.is((await introspect(ten.rs, tok)).body.active, true);

  const r = await op(
    ['tenants', 'suspend', '--tenant', ten.id, '--reason', 'INC-1 abuse', '--yes', '--json'],
    platformConfig,
  );
  t.is(r.code, 0, r.stdout + r.stderr);
  const job = json(r);
  t.regex(job.job_id, /^tlj_/);
  t.is(job.lifecycle_state, 'suspended');
  t.is(job.tenant_id, ten.id);
  t.regex(job.idempotency_key, /^iamcli-[0-9a-f]{40}$/);
  t.is(job.idempotent_replay, undefined);
  t.is(await tenantState(ten.id), 'suspended');
  const after = await introspect(ten.rs, tok);
  // Inactive at once; the suspended tenant's own resource server may itself be refused (401).
  if (after.status === 200) t.deepEqual(after.body, { active: false });
  else t.is(after.status, 401);

  const audit = await op(['audit', 'list', '--json', '--tenant', ten.id, '--action', 'tenant.suspend'], platformConfig);
  t.is(audit.code, 0, audit.stdout);
  const events = json(audit).events as Record<string, any>[];
  t.is(events.length, 1);
  t.is(events[0].actor_id, s.platform.clientId);
  t.is(events[0].actor_type, 'client');
  t.is(events[0].summary.reason, 'INC-1 abuse');
  t.is(events[0].summary.job_id, job.job_id);
  // The table view names the actor and the reason.
  const tableView = await op(['audit', 'list', '--tenant', ten.id, '--action', 'tenant.suspend'], platformConfig);
  t.regex(
    tableView.stdout,
    new RegExp(`client:${s.platform.clientId}\\s+tenant\\.suspend\\s+tenant:${ten.id}\\s+success\\s+INC-1 abuse`),
  );

  const back = await op(
    ['tenants', 'resume', '--tenant', ten.id, '--reason', 'INC-1 resolved', '--yes', '--json'],
    platformConfig,
  );
  t.is(back.code, 0, back.stdout);
  t.is(json(back).lifecycle_state, 'active');
  t.is(await tenantState(ten.id), 'active');
  const fresh = await clientCredentialsToken(d.url, ten.worker.clientId, ten.worker.secret);
  t.is((await introspect(ten.rs, fresh)).body.active, true);
});

test('the same explicit --idempotency-key replays: idempotent_replay, same job_id, no second action', async (t) => {
  const ten = await newTenant();
  const args = [
    'tenants',
    'suspend',
    '--tenant',
    ten.id,
    '--reason',
    'INC-2',
    '--idempotency-key',
    `inc-2-${ten.id}`,
    '--yes',
    '--json',
  ];
  const first = await op(args, platformConfig);
  t.is(first.code, 0, first.stdout);
  t.is(json(first).idempotency_key, `inc-2-${ten.id}`);
  const again = await op(args, platformConfig);
  t.is(again.code, 0, again.stdout);
  t.is(json(again).idempotent_replay, true);
  t.is(json(again).job_id, json(first).job_id);
  t.is(await countAudit(ten.id, 'tenant.suspend'), 1);

  // Human output says so.
  const human = await op(
    args.filter((a) => a !== '--json'),
    platformConfig,
  );
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /Already done \(replayed\)/);
  t.true(human.stderr.includes(`Idempotency key: inc-2-${ten.id}`));
});

test('without a key, re-running the same command after it succeeded replays instead of acting again', async (t) => {
  const ten = await newTenant();
  const args = ['tenants', 'suspend', '--tenant', ten.id, '--reason', 'INC-3', '--yes', '--json'];
  const first = await op(args, platformConfig);
  t.is(first.code, 0, first.stdout);
  const again = await op(args, platformConfig);
  t.is(again.code, 0, again.stdout);
  t.is(json(again).idempotent_replay, true);
  t.is(json(again).job_id, json(first).job_id);
  t.is(json(again).idempotency_key, json(first).idempotency_key);
  t.is(await countAudit(ten.id, 'tenant.suspend'), 1);

  // Another reason is another operation: refused locally, with the current values.
  const other = await op(
    ['tenants', 'suspend', '--tenant', ten.id, '--reason', 'something else', '--yes', '--json'],
    platformConfig,
  );
  t.is(other.code, 1);
  t.is(json(other).error, 'precondition_failed');
  t.is(json(other).lifecycle_state, 'suspended');
  t.is(typeof json(other).updated_at, 'number');
  t.is(await countAudit(ten.id, 'tenant.suspend'), 1);
});

test('confirmation: --json without --yes is a usage error, "n" or no answer aborts; nothing is sent', async (t) => {
  const ten = await newTenant();
  const base = ['tenants', 'suspend', '--tenant', ten.id, '--reason', 'INC-4'];
  const noYes = await op([...base, '--json'], platformConfig, { stdin: 'y\n' });
  t.is(noYes.code, 2);
  t.is(json(noYes).error, 'confirmation_required');
  t.regex(json(noYes).message, /--yes/);

  const no = await op(base, platformConfig, { stdin: 'n\n' });
  t.is(no.code, 1);
  t.regex(no.stderr, /lifecycle_state|state:\s+active/);
  t.regex(no.stderr, /Suspend tenant .* \[y\/N\]/);
  t.regex(no.stderr, /aborted: nothing was sent/);

  const eof = await op(base, platformConfig, { stdin: '' });
  t.is(eof.code, 1);
  t.regex(eof.stderr, /aborted/);
  t.is(await tenantState(ten.id), 'active');
  t.is(await countAudit(ten.id, 'tenant.suspend'), 0);

  const yes = await op(base, platformConfig, { stdin: 'y\n' });
  t.is(yes.code, 0, yes.stderr);
  t.regex(yes.stdout, /suspended/);
  t.is(await tenantState(ten.id), 'suspended');
});

test('a change made while the operator is at the prompt makes the service refuse, showing the current values', async (t) => {
  const ten = await newTenant();
  const proc = spawn(process.execPath, [CLI_BIN, 'tenants', 'suspend', '--tenant', ten.id, '--reason', 'INC-5'], {
    env: { PATH: process.env.PATH, HOME: home, IAM_CLI_CONFIG: platformConfig },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (b: Buffer) => {
    stdout += b.toString();
  });
  const exited = new Promise<number | null>((resolve) => proc.on('close', resolve));
  await new Promise<void>((resolve) =>
    proc.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
      if (stderr.includes('[y/N]')) resolve();
    }),
  );
  // Someone else suspends and resumes the tenant while the prompt waits: same state, new updated_at.
  const token = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  const move = (name: string, body: unknown) =>
    api(d.url, 'POST', `/api/admin/tenants/${ten.id}/lifecycle/${name}`, { body, token }).then((r) => r.body);
  const cur = (await (
    await fetch(`${d.url}/api/admin/tenants/${ten.id}`, { headers: { authorization: `Bearer ${token}` } })
  ).json()) as { updated_at: number };
  await move('suspend', { expected_state: 'active', expected_updated_at: cur.updated_at, reason: 'someone else' });
  const now = (await (
    await fetch(`${d.url}/api/admin/tenants/${ten.id}`, { headers: { authorization: `Bearer ${token}` } })
  ).json()) as { updated_at: number };
  await move('resume', { expected_state: 'suspended', expected_updated_at: now.updated_at, reason: 'someone else' });
  proc.stdin.end('y\n');
  t.is(await exited, 1, stdout + stderr);
  t.regex(stderr, /Error: .*Current values: lifecycle_state="active", updated_at=\d+\. Re-run the command/);
  t.is(await tenantState(ten.id), 'active');
  t.is(await countAudit(ten.id, 'tenant.suspend'), 1, "only the other operator's suspend happened");
  t.is(await countAudit(ten.id, 'tenant.suspend', 'failure'), 1, 'the refused attempt is recorded');
});

test('a tenant admin gets the message naming the scope it lacks; another tenant is tenant_forbidden', async (t) => {
  const config = await login(s.tenantAdmin);
  const own = await op(['tenants', 'suspend', '--tenant', s.tenantId, '--reason', 'try', '--yes', '--json'], config);
  t.is(own.code, 1);
  t.is(json(own).error, 'insufficient_scope');
  t.is(json(own).status, 403);
  t.regex(json(own).message, /lacks the scope this needs: iam\.platform/);
  t.regex(json(own).message, /iam login/);
  t.is(await tenantState(s.tenantId), 'active');

  const ten = await newTenant();
  const other = await op(['tenants', 'suspend', '--tenant', ten.id, '--reason', 'try', '--yes', '--json'], config);
  t.is(other.code, 1);
  t.is(json(other).error, 'tenant_forbidden');
  t.regex(json(other).message, /confined to tenant/);
});

test('unknown tenant: not_found naming the flag', async (t) => {
  const r = await op(
    ['tenants', 'resume', '--tenant', 't_doesnotexist', '--reason', 'x', '--yes', '--json'],
    platformConfig,
  );
  t.is(r.code, 1);
  t.is(json(r).error, 'not_found');
  t.regex(json(r).message, /--tenant: no tenant with id "t_doesnotexist"/);
  const human = await op(['tenants', 'resume', '--tenant', 't_doesnotexist', '--reason', 'x', '--yes'], platformConfig);
  t.is(human.code, 1);
  t.regex(human.stderr, /^Error: --tenant: no tenant/m);
});

test('resume of an active tenant is refused before anything is sent, with the current values', async (t) => {
  const ten = await newTenant();
  const r = await op(['tenants', 'resume', '--tenant', ten.id, '--reason', 'x', '--yes', '--json'], platformConfig);
  t.is(r.code, 1);
  t.is(json(r).error, 'precondition_failed');
  t.is(json(r).lifecycle_state, 'active');
  t.regex(json(r).message, /is already active .*nothing was sent/);
  t.is(await countAudit(ten.id, 'tenant.resume'), 0);
});

test('recovery reactivate --json without --confirm fails without prompting or reading stdin', async (t) => {
  // Usage error before reading the login or stdin, so a script can never hang here.
  const r = await op(['recovery', 'reactivate', '--operation', 'op-1', '--json'], newConfig(), {
    stdin: 'REACTIVATE_RECOVERED_TENANT:x\n',
  });
  t.is(r.code, 2);
  t.is(json(r).error, 'confirmation_required');
  t.regex(json(r).message, /pass --confirm REACTIVATE_RECOVERED_TENANT:\{tenantId\}/);
  t.is(r.stderr.includes('Type '), false, 'no prompt was written');
});

test('audit list: --since takes ISO or epoch ms; a bad time is a usage error; --all follows cursors', async (t) => {
  const bad = await op(['audit', 'list', '--since', 'yesterday', '--json'], platformConfig);
  t.is(bad.code, 2);
  t.is(json(bad).error, 'invalid_time');
  const future = new Date(Date.now() + 86_400_000).toISOString();
  const none = await op(['audit', 'list', '--since', future, '--json'], platformConfig);
  t.is(none.code, 0);
  t.deepEqual(json(none).events, []);
  const page = await op(['audit', 'list', '--tenant', s.tenantId, '--limit', '1', '--json'], platformConfig);
  t.is(json(page).events.length, 1);
  t.is(typeof json(page).next_cursor, 'string');
  const all = await op(['audit', 'list', '--tenant', s.tenantId, '--limit', '1', '--all', '--json'], platformConfig);
  t.is(all.code, 0, all.stdout);
  const one = await op(['audit', 'list', '--tenant', s.tenantId, '--limit', '200', '--json'], platformConfig);
  t.deepEqual(
    json(all).events.map((e: { id: string }) => e.id),
    json(one).events.map((e: { id: string }) => e.id),
  );
  t.true(json(all).events.length >= 3);
  t.is(json(all).next_cursor, undefined);
  const since = await op(
    ['audit', 'list', '--tenant', s.tenantId, '--since', String(json(one).events[0].created_at), '--json'],
    platformConfig,
  );
  t.true(json(since).events.length >= 1);
});

test('help: every operator command has a summary and examples', async (t) => {
  const root = await iam(db, ['--help']);
  for (const cmd of [
    'login',
    'logout',
    'tenants suspend',
    'tenants resume',
    'audit list',
    'provisioning retry',
    'recovery reactivate',
  ]) {
    t.regex(root.stdout, new RegExp(`^\\s+${cmd}\\s+\\S`, 'm'), `root help lists "${cmd}"`);
    const h = await iam(db, [...cmd.split(' '), '--help']);
    t.is(h.code, 0);
    t.regex(h.stdout, /EXAMPLES/, cmd);
  }
});
