/**
 * The directory's tenants (docs/directory.md, "Tenants"; docs/tenant-lifecycle.md,
 * "Offboarding"): the list's filters and cursor, one tenant with its counts, PATCH under a
 * strong ETag, offboard with its typed confirmation, restore within the grace, and the purge
 * that leaves no row of the tenant but its append-only records, and every row of another tenant.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import type { QueryRunner } from 'typeorm';
import { tenantPurgeJob } from '../../daemon/jobs/tenant-purge.js';
import { TENANT_PURGE_TABLES, TENANT_ROWS_KEPT } from '../../shared/repositories/index.js';
import { TenantDirectoryService } from '../../shared/services/tenant-directory.js';
import { api } from '../helpers/api.js';
import { createTestDatabase, TEST_SECRET_KEY, usingMysql, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { activeTenant, clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let platform: string;
let tenantAdmin: string;
let services: Awaited<ReturnType<typeof openServices>>;
const actor = { type: 'system' as const, id: 'test' };

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  d = await startDaemon(db.url, db.dir);
  services = await openServices(db.url, db.dir);
  platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  tenantAdmin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
});
test.after.always(async () => {
  await d?.stop();
  await services?.ds.destroy();
  await db?.drop();
});

const call = (method: string, path: string, opts: Parameters<typeof api>[3] = {}) =>
  api(d.url, method, path, { token: platform, ...opts });

/** A fresh active tenant with a client_credentials client and a public authorization-code client. */
async function newTenant(name: string) {
  const ten = await activeTenant(services.provisioning, { name }, actor);
  const w = await services.directory.createClient(
    ten.id,
    { name: 'w', grant_types: ['client_credentials'], scopes: ['api'] },
    actor,
  );
  const app = await services.directory.createClient(
    ten.id,
    { name: 'app', public: true, redirect_uris: ['https://app.example.test/cb'], scopes: ['openid'] },
    actor,
  );
  return { id: ten.id, worker: { clientId: w.client.client_id, secret: w.client_secret! }, app: app.client.client_id };
}

async function tokenStatus(c: { clientId: string; secret: string }): Promise<number> {
  const res = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic ' + Buffer.from(`${c.clientId}:${c.secret}`).toString('base64'),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials' }),
  });
  await res.body?.cancel();
  return res.status;
}

/** The status of the start of a sign-in (GET /authorize): 403 "Unavailable" unless the tenant is active. */
async function signInStatus(clientId: string): Promise<number> {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: 'https://app.example.test/cb',
    scope: 'openid',
    state: 'st',
    code_challenge: randomBytes(32).toString('base64url'),
    code_challenge_method: 'S256',
  });
  const res = await fetch(`${d.url}/authorize?${q}`, { redirect: 'manual' });
  await res.body?.cancel();
  return res.status;
}

test('list: lifecycle_state and name_prefix filters, cursor paging; a tenant admin sees its own', async (t) => {
  const ids = [];
  for (const n of [1, 2, 3]) ids.push((await newTenant(`Listing-${n}`)).id);
  const cur = (await call('GET', `/api/admin/tenants/${ids[1]}`)).body;
  const suspended = await call('POST', `/api/admin/tenants/${ids[1]}/lifecycle/suspend`, {
    body: { expected_state: 'active', expected_updated_at: cur.updated_at, reason: 'list test' },
  });
  t.is(suspended.status, 200);

  const first = await call('GET', '/api/admin/tenants?name_prefix=Listing-&limit=2');
  t.is(first.status, 200);
  t.deepEqual(
    first.body.tenants.map((x: { id: string }) => x.id),
    ids.slice(0, 2),
  );
  t.is(typeof first.body.next_cursor, 'string');
  const second = await call('GET', `/api/admin/tenants?name_prefix=Listing-&limit=2&cursor=${first.body.next_cursor}`);
  t.deepEqual(
    second.body.tenants.map((x: { id: string }) => x.id),
    ids.slice(2),
  );
  t.is(second.body.next_cursor, null);
  // The prefix is compared case-sensitively.
  t.is((await call('GET', '/api/admin/tenants?name_prefix=listing-')).body.tenants.length, 0);
  const bySate = await call(
    'GET',
    '/api/admin/tenants?name_prefix=Listing-&lifecycle_state=suspended,pending_deletion',
  );
  t.deepEqual(
    bySate.body.tenants.map((x: { id: string; lifecycle_state: string }) => [x.id, x.lifecycle_state]),
    [[ids[1], 'suspended']],
  );
  t.is((await call('GET', '/api/admin/tenants?lifecycle_state=sleeping')).status, 400);
  const forged = await call('GET', `/api/admin/tenants?cursor=${first.body.next_cursor.slice(0, -2)}xx`);
  t.is(forged.status, 400);
  t.is(forged.body.error, 'invalid_request');
  const own = await call('GET', '/api/admin/tenants', { token: tenantAdmin });
  t.deepEqual(
    own.body.tenants.map((x: { id: string }) => x.id),
    [s.tenantId],
  );
});

test("GET one: its counts and ETag; another tenant's id tells a tenant admin nothing", async (t) => {
  const ten = await newTenant('Counts');
  for (const n of [1, 2]) {
    await services.directory.createUser(ten.id, { email: `u${n}@counts.example`, name: `U${n}` }, actor);
  }
  const [user] = await services.ds.query<{ id: string }[]>('SELECT id FROM users WHERE tenant_id = ?', [ten.id]);
  const now = Date.now();
  const session = (id: string, expires: number, revoked: number | null) =>
    services.ds.query(
      `INSERT INTO sessions (id, tenant_id, user_id, created_at, expires_at, auth_time, acr, amr, last_seen_at,
        revoked_at)
       VALUES (?, ?, ?, ?, ?, ?, '0', '[]', ?, ?)`,
      [id, ten.id, user.id, now, expires, now, now, revoked],
    );
  await session(`s-live-${ten.id}`, now + 3_600_000, null);
  await session(`s-revoked-${ten.id}`, now + 3_600_000, now);
  await session(`s-expired-${ten.id}`, now - 1, null);
  const [clients] = await services.ds.query<{ n: number }[]>('SELECT COUNT(*) AS n FROM clients WHERE tenant_id = ?', [
    ten.id,
  ]);

  const r = await call('GET', `/api/admin/tenants/${ten.id}`);
  t.is(r.status, 200);
  t.deepEqual(r.body.counts, { users: 2, clients: Number(clients.n), active_sessions: 1 });
  t.is(r.body.lifecycle_state, 'active');
  t.is(r.body.purge_after, null);
  t.is(r.headers.get('etag'), `"t${r.body.updated_at}"`);

  // The registry's rule for a tenant in the path (docs/architecture.md): another tenant than the
  // token's is 403 tenant_forbidden before any lookup, the same for one that does not exist, so
  // a tenant admin learns nothing of other tenants; a platform admin gets 404 for no such tenant.
  const other = await call('GET', `/api/admin/tenants/${ten.id}`, { token: tenantAdmin });
  const none = await call('GET', '/api/admin/tenants/ten_nosuchtenant', { token: tenantAdmin });
  t.deepEqual([other.status, other.body.error], [403, 'tenant_forbidden']);
  t.deepEqual([none.status, none.body], [other.status, other.body]);
  const patch = await call('PATCH', `/api/admin/tenants/${ten.id}`, { token: tenantAdmin, body: { name: 'x' } });
  t.is(patch.status, 403);
  t.is((await call('GET', `/api/admin/tenants/${ten.id}`)).body.name, 'Counts');
  t.is((await call('GET', '/api/admin/tenants/ten_nosuchtenant')).status, 404);
  t.is((await call('PATCH', '/api/admin/tenants/ten_nosuchtenant', { body: { name: 'x' } })).status, 404);
});

test('PATCH: name and allow_signup under If-Match; a stale ETag is 412 and changes nothing; audited', async (t) => {
  const ten = await newTenant('Patch me');
  const before = await call('GET', `/api/admin/tenants/${ten.id}`);
  const etag = before.headers.get('etag')!;

  const ok = await call('PATCH', `/api/admin/tenants/${ten.id}`, {
    body: { name: 'Patched', allow_signup: true },
    headers: { 'if-match': etag },
  });
  t.is(ok.status, 200);
  t.is(ok.body.name, 'Patched');
  t.true(ok.body.allow_signup);
  t.not(ok.headers.get('etag'), etag);
  t.is(ok.headers.get('etag'), `"t${ok.body.updated_at}"`);

  const stale = await call('PATCH', `/api/admin/tenants/${ten.id}`, {
    body: { name: 'Lost update' },
    headers: { 'if-match': etag },
  });
  t.is(stale.status, 412);
  t.is(stale.body.error, 'precondition_failed');
  t.is((await call('GET', `/api/admin/tenants/${ten.id}`)).body.name, 'Patched');

  t.is((await call('PATCH', `/api/admin/tenants/${ten.id}`, { body: {} })).status, 400);
  t.is((await call('PATCH', `/api/admin/tenants/${ten.id}`, { body: { name: '' } })).status, 400);
  t.is((await call('PATCH', `/api/admin/tenants/${ten.id}`, { body: { lifecycle_state: 'active' } })).status, 400);

  const events = await services.ds.query<{ actor_id: string; summary: string }[]>(
    "SELECT actor_id, summary FROM audit_events WHERE tenant_id = ? AND action = 'tenant.update'",
    [ten.id],
  );
  t.is(events.length, 1);
  t.is(events[0].actor_id, s.platform.clientId);
  t.deepEqual(JSON.parse(events[0].summary).after, { name: 'Patched', allow_signup: true });
});

test('offboard: a wrong confirmation is 400 and changes nothing; offboarded, sign-in and tokens are refused; restore brings them back', async (t) => {
  const ten = await newTenant('Leaving Ltd');
  t.is(await tokenStatus(ten.worker), 200);
  t.not(await signInStatus(ten.app), 403);

  const wrong = await call('POST', `/api/admin/tenants/${ten.id}/offboard`, { body: { confirm: 'leaving ltd' } });
  t.is(wrong.status, 400);
  t.is(wrong.body.error, 'confirmation_mismatch');
  t.is((await call('GET', `/api/admin/tenants/${ten.id}`)).body.lifecycle_state, 'active');
  t.is(await tokenStatus(ten.worker), 200);
  const admin = await call('POST', `/api/admin/tenants/${ten.id}/offboard`, {
    token: tenantAdmin,
    body: { confirm: 'Leaving Ltd' },
  });
  t.is(admin.status, 403);

  const off = await call('POST', `/api/admin/tenants/${ten.id}/offboard`, {
    body: { confirm: 'Leaving Ltd', reason: 'contract ended' },
  });
  t.is(off.status, 200);
  t.is(off.body.lifecycle_state, 'pending_deletion');
  // The default grace: 7 days.
  t.true(Math.abs(off.body.purge_after - (Date.now() + 7 * 86_400_000)) < 60_000);
  t.is(await tokenStatus(ten.worker), 401);
  t.is(await signInStatus(ten.app), 403);
  t.is((await call('POST', `/api/admin/tenants/${ten.id}/offboard`, { body: { confirm: 'Leaving Ltd' } })).status, 409);
  t.is((await call('PATCH', `/api/admin/tenants/${ten.id}`, { body: { name: 'Still here' } })).status, 409);

  // The export is taken while it waits: no secret in it.
  const exp = await call('GET', `/api/admin/tenants/${ten.id}/export`);
  t.is(exp.status, 200);
  t.is(exp.body.format, 'iam.tenant-export.v1');
  t.is(exp.body.clients.length, 2);
  t.false(/secret_hash|client_secret_sealed/.test(exp.text));

  const back = await call('POST', `/api/admin/tenants/${ten.id}/restore`);
  t.is(back.status, 200);
  t.is(back.body.lifecycle_state, 'active');
  t.is(back.body.purge_after, null);
  t.is(await tokenStatus(ten.worker), 200);
  t.not(await signInStatus(ten.app), 403);
  const again = await call('POST', `/api/admin/tenants/${ten.id}/restore`);
  t.is(again.status, 409);
  t.is(again.body.error, 'lifecycle_move_not_allowed');
  const actions = await services.ds.query<{ action: string; actor_id: string }[]>(
    `SELECT action, actor_id FROM audit_events WHERE tenant_id = ?
      AND action IN ('tenant.offboard', 'tenant.restore', 'tenant.export') ORDER BY created_at`,
    [ten.id],
  );
  t.deepEqual(
    actions.map((a) => [a.action, a.actor_id]),
    [
      ['tenant.offboard', s.platform.clientId],
      ['tenant.export', s.platform.clientId],
      ['tenant.restore', s.platform.clientId],
    ],
  );
});

/** Every table with a tenant_id column, read from the schema itself. */
async function tenantTables(): Promise<string[]> {
  if (usingMysql()) {
    const rows = await services.ds.query<{ t: string }[]>(
      `SELECT TABLE_NAME AS t FROM information_schema.COLUMNS
        WHERE TABLE_SCHEMA = DATABASE() AND COLUMN_NAME = 'tenant_id'`,
    );
    return rows.map((r) => r.t).sort();
  }
  const tables = await services.ds.query<{ name: string }[]>(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
  );
  const out: string[] = [];
  for (const { name } of tables) {
    const cols = await services.ds.query<{ name: string }[]>(`PRAGMA table_info(${name})`);
    if (cols.some((c) => c.name === 'tenant_id')) out.push(name);
  }
  return out.sort();
}

interface Column {
  name: string;
  type: string;
  required: boolean;
  length: number | null;
}

async function columnsOf(qr: QueryRunner, table: string): Promise<Column[]> {
  if (usingMysql()) {
    const rows = await qr.query(
      `SELECT COLUMN_NAME AS name, DATA_TYPE AS type, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS dflt,
         CHARACTER_MAXIMUM_LENGTH AS len, EXTRA AS extra
       FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?`,
      [table],
    );
    return (rows as Record<string, unknown>[]).map((r) => ({
      name: String(r.name),
      type: String(r.type),
      required: r.nullable === 'NO' && r.dflt === null && !String(r.extra).includes('auto_increment'),
      length: r.len === null ? null : Number(r.len),
    }));
  }
  const rows = (await qr.query(`PRAGMA table_info(${table})`)) as Record<string, unknown>[];
  return rows.map((r) => {
    const type = String(r.type);
    const len = /\((\d+)\)/.exec(type);
    return {
      name: String(r.name),
      type,
      required: r.notnull === 1 && r.dflt_value === null,
      length: len ? Number(len[1]) : null,
    };
  });
}

/**
 * One synthetic row of `tenantId` in each table: its NOT NULL columns filled with fresh values
 * of their type. Foreign key checks are off while they are written (the values point nowhere);
 * the purge runs with them on.
 */
async function rowInEveryTable(tables: string[], tenantIds: string[]) {
  const qr = services.ds.createQueryRunner();
  await qr.connect();
  try {
    await qr.query(usingMysql() ? 'SET FOREIGN_KEY_CHECKS = 0' : 'PRAGMA foreign_keys = OFF');
    for (const table of tables) {
      const cols = await columnsOf(qr, table);
      for (const tenantId of tenantIds) {
        const chosen = cols.filter((c) => c.required || c.name === 'tenant_id');
        const values = chosen.map((c) => {
          if (c.name === 'tenant_id') return tenantId;
          if (/int|decimal|double|float|numeric/i.test(c.type)) return Math.floor(Math.random() * 1e9) + 1;
          if (/json/i.test(c.type)) return '{}';
          return randomBytes(16)
            .toString('hex')
            .slice(0, Math.min(c.length ?? 32, 32));
        });
        await qr.query(
          `INSERT INTO ${table} (${chosen.map((c) => c.name).join(', ')}) VALUES (${chosen.map(() => '?').join(', ')})`,
          values,
        );
      }
    }
  } finally {
    await qr.query(usingMysql() ? 'SET FOREIGN_KEY_CHECKS = 1' : 'PRAGMA foreign_keys = ON');
    await qr.release();
  }
}

async function countsByTable(tables: string[], tenantId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of tables) {
    const [r] = await services.ds.query<{ n: number }[]>(`SELECT COUNT(*) AS n FROM ${table} WHERE tenant_id = ?`, [
      tenantId,
    ]);
    out[table] = Number(r.n);
  }
  return out;
}

test("purge after the grace: no row of the tenant is left but its append-only records; another tenant's rows are untouched", async (t) => {
  const tables = await tenantTables();
  // The purge's list is the schema's: a new tenant-owned table must be listed (or kept, with its reason).
  t.deepEqual([...TENANT_PURGE_TABLES, ...TENANT_ROWS_KEPT].sort(), tables);

  const gone = await newTenant('Purged');
  const kept = await newTenant('Neighbour');
  for (const ten of [gone, kept]) {
    await services.directory.createUser(ten.id, { email: 'p@purge.example', name: 'P' }, actor);
  }
  await rowInEveryTable(tables, [gone.id, kept.id]);
  const keptBefore = await countsByTable(tables, kept.id);
  const stepsOf = async (id: string) =>
    Number(
      (
        await services.ds.query<{ n: number }[]>(
          `SELECT COUNT(*) AS n FROM provisioning_steps WHERE operation_id IN
            (SELECT id FROM provisioning_operations WHERE tenant_id = ?)`,
          [id],
        )
      )[0].n,
    );
  const keptSteps = await stepsOf(kept.id);
  t.true(keptSteps > 0);

  // The configuration's grace, tiny: IAM_TENANT_PURGE_GRACE_SECONDS=0.
  const service = new TenantDirectoryService(services.ds, TEST_SECRET_KEY, { purgeGraceSeconds: 0 });
  await service.offboard(gone.id, { confirm: 'Purged' }, actor);
  // A run cut short (3 statements of 2 rows) leaves it purging, past any restore; the next run resumes.
  const partial = await service.purgeDue({ maxBatches: 3, batchRows: 2 });
  t.deepEqual(partial.purged, []);
  t.true(partial.rows > 0 && partial.rows <= 6);
  t.is((await service.get(gone.id)).tenant.lifecycle_state, 'purging');
  await t.throwsAsync(service.restore(gone.id, actor), { message: /only from pending_deletion/ });

  let purged: { purged: string[] } | undefined;
  await tenantPurgeJob({ purgeDue: async (o) => (purged = await service.purgeDue(o)) }).run(
    new AbortController().signal,
  );
  // The job ran the purge to its end. The test daemon's own tenant-purge job (every ten minutes,
  // at second 47) may have finished it first on its own connection; then this run found it done.
  t.truthy(purged);
  t.true(
    purged!.purged.includes(gone.id) || (await service.get(gone.id)).tenant.lifecycle_state === 'deleted',
    'purged by this run, or by the daemon job that raced it',
  );

  const left = await countsByTable(tables, gone.id);
  for (const table of tables) {
    if (TENANT_ROWS_KEPT.includes(table)) t.true(left[table] > 0, `${table} is kept`);
    else t.is(left[table], 0, `${table} has no row of the purged tenant`);
  }
  t.is(await stepsOf(gone.id), 0);
  t.deepEqual(await countsByTable(tables, kept.id), keptBefore);
  t.is(await stepsOf(kept.id), keptSteps);
  const tomb = await call('GET', `/api/admin/tenants/${gone.id}`);
  t.is(tomb.body.lifecycle_state, 'deleted');
  t.deepEqual(tomb.body.counts, { users: 0, clients: 0, active_sessions: 0 });
  t.is((await call('GET', `/api/admin/tenants/${gone.id}/export`)).status, 409);
  t.is(await tokenStatus(kept.worker), 200);
});
