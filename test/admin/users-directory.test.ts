/**
 * /api/admin/tenants/{tenantId}/users…: one user with its strong ETag, the list's filters and
 * its signed keyset paging, PATCH under If-Match (412 when stale, even after another writer's
 * status change), 409 for a taken address naming the field, 404 for another tenant's user, the
 * old address told of an operator's email change, and 400s naming the field. One daemon.
 */
import { createHash } from 'node:crypto';
import test from 'ava';
import { TenantScope } from '../../shared/repositories/index.js';
import { CustomClaimsService } from '../../shared/services/custom-claims.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { activeTenant, clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';
import { api } from '../helpers/api.js';

let db: TestDb;
let d: Daemon;
let sink: SmtpSink;
let s: Seeded;
let admin: string;
let otherTenant: string;
let otherUser: string;
/** The users made here, in creation order: [id, email, name, created_at]. */
const made: { id: string; email: string; name: string; created_at: number }[] = [];
const actor = { type: 'system' as const, id: 'test' };
const T_SIGNIN = 1_900_000_000_000;
const T_CREATED = 1_800_000_000_000;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  try {
    otherTenant = (await activeTenant(provisioning, { name: 'Other' }, actor)).id;
    otherUser = (await directory.createUser(otherTenant, { email: 'x@example.com', name: 'X' }, actor)).id;
    await new CustomClaimsService(ds).createSchema(
      s.tenantId,
      { field_key: 'department', display_label: 'Department', field_type: 'string' },
      actor,
    );
    const people = ['ada', 'alan', 'grace', 'edsger', 'barbara', 'donald', 'ken'];
    for (const p of people) {
      const u = await directory.createUser(
        s.tenantId,
        { email: `${p}@example.com`, name: `${p[0].toUpperCase()}${p.slice(1)} Test` },
        actor,
      );
      made.push({ id: u.id, email: u.email, name: u.name, created_at: u.created_at });
    }
    // Known creation times, two users sharing one millisecond, so paging must break the tie by id.
    for (const [i, u] of made.entries()) {
      u.created_at = T_CREATED + (i === 3 ? 2 : i) * 1000;
      await ds.query('UPDATE users SET created_at = ? WHERE id = ?', [u.created_at, u.id]);
    }
    await ds.query("UPDATE users SET status = 'disabled' WHERE id = ?", [made[6].id]);
    const scope = new TenantScope(ds, s.tenantId);
    const history = (id: string, user: string, at: number, outcome: 'success' | 'failure') =>
      scope.authHistory.append({
        id,
        user_id: user,
        event: 'session_created',
        outcome,
        reason: null,
        client_id: 'app',
        ip: null,
        user_agent: null,
        created_at: at,
      });
    await history('ah1', made[0].id, T_SIGNIN - 5000, 'success');
    await history('ah2', made[0].id, T_SIGNIN, 'success');
    await history('ah3', made[1].id, T_SIGNIN - 100_000, 'success');
    await history('ah4', made[2].id, T_SIGNIN, 'failure');
    const now = Date.now();
    await scope.passkeys.insert({
      id: 'pk_1',
      userId: made[0].id,
      credentialId: 'Y3JlZA',
      credentialHash: createHash('sha256').update('Y3JlZA').digest('hex'),
      userHandle: 'aGFuZGxl',
      publicKey: 'cHVibGlj',
      counter: 0,
      transports: ['internal'],
      deviceType: 'singleDevice',
      backedUp: false,
      aaguid: '00000000-0000-0000-0000-000000000000',
      name: 'key',
      createdAt: now,
      lastUsedAt: null,
    });
  } finally {
    await ds.destroy();
  }
  sink = await startSmtpSink();
  d = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url });
  admin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
});
test.after.always(async () => {
  await d?.stop();
  await sink?.close();
  await db?.drop();
});

const base = (tenant = s.tenantId) => `/api/admin/tenants/${tenant}/users`;
const list = (q: Record<string, string | number>) =>
  api(d.url, 'GET', `${base()}?${new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)]))}`, {
    token: admin,
  });
const get = (id: string, tenant?: string) => api(d.url, 'GET', `${base(tenant)}/${id}`, { token: admin });
const patch = (id: string, body: unknown, ifMatch?: string, tenant?: string) =>
  api(d.url, 'PATCH', `${base(tenant)}/${id}`, { token: admin, body, headers: ifMatch ? { 'if-match': ifMatch } : {} });
const ids = (r: { body: Record<string, any> }) => (r.body.users as { id: string }[]).map((u) => u.id);

test.serial(
  'GET one user: status, times, last sign-in, passkeys, claims, email_verified and a strong ETag',
  async (t) => {
    const r = await get(made[0].id);
    t.is(r.status, 200, r.text);
    const etag = r.headers.get('etag');
    t.regex(etag ?? '', /^"[A-Za-z0-9_-]{32}"$/, 'a strong ETag (no W/)');
    t.like(r.body, {
      id: made[0].id,
      tenant_id: s.tenantId,
      email: 'ada@example.com',
      status: 'active',
      email_verified: true,
      passkey_count: 1,
      last_sign_in: { at: T_SIGNIN, method: null, client_id: 'app' },
      upstream_identities: [],
      claims: {},
    });
    t.is(typeof r.body.created_at, 'number');
    t.is(typeof r.body.updated_at, 'number');
    // A user who never signed in successfully (only a failure) has none.
    t.is((await get(made[2].id)).body.last_sign_in, null);
    t.is((await get(made[0].id)).headers.get('etag'), etag, 'stable while nothing changes');
    // Unknown, and another tenant's user named under this tenant: 404 alike.
    t.is((await get('usr_nope')).status, 404);
    t.is((await get(otherUser)).status, 404);
    t.is((await patch(otherUser, { name: 'Mine' })).status, 404);
  },
);

test.serial('list filters: email exact and prefix, name prefix, status, created and last sign-in ranges', async (t) => {
  t.deepEqual(ids(await list({ email: 'ADA@example.com' })), [made[0].id]);
  t.deepEqual(ids(await list({ email_prefix: 'a' })), [made[0].id, made[1].id]);
  t.deepEqual(ids(await list({ email_prefix: '_' })), [], 'a LIKE wildcard is matched literally');
  t.deepEqual(ids(await list({ name_prefix: 'gra' })), [made[2].id]);
  t.deepEqual(ids(await list({ status: 'disabled' })), [made[6].id]);
  t.false(ids(await list({ status: 'active' })).includes(made[6].id));
  const range = await list({ created_since: made[4].created_at, created_until: made[6].created_at });
  t.deepEqual(ids(range), [made[4].id, made[5].id], 'since inclusive, until exclusive');
  t.deepEqual(ids(await list({ signed_in_since: T_SIGNIN })), [made[0].id], 'the latest successful sign-in');
  t.deepEqual(ids(await list({ signed_in_until: T_SIGNIN })), [made[1].id], 'never-signed-in users left out');
  const item = (await list({ email: 'ada@example.com' })).body.users[0];
  t.is(item.email_verified, true);
});

test.serial(
  'paging: signed cursors over (created_at, id), stable, no duplicates or misses; a forged cursor is 400',
  async (t) => {
    const all = await list({ limit: 1000 });
    t.is(all.status, 200);
    t.is(all.body.next_cursor, undefined);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 20; i++) {
      const page = await list({ limit: 2, ...(cursor ? { cursor } : {}) });
      t.is(page.status, 200, page.text);
      seen.push(...ids(page));
      cursor = page.body.next_cursor;
      if (!cursor) break;
    }
    t.deepEqual(seen, ids(all));
    t.is(new Set(seen).size, seen.length);
    for (const u of made) t.true(seen.includes(u.id));
    const forged = await list({ cursor: `${Buffer.from('[0,"a"]').toString('base64url')}.${'A'.repeat(43)}` });
    t.is(forged.status, 400);
    t.is(forged.body.details[0].field, 'query.cursor');
  },
);

test.serial('bad query values are 400 naming the parameter', async (t) => {
  const cases: [Record<string, string | number>, string][] = [
    [{ limit: 0 }, 'query.limit'],
    [{ limit: 1001 }, 'query.limit'],
    [{ status: 'gone' }, 'query.status'],
    [{ created_since: 'yesterday' }, 'query.created_since'],
    [{ email: 'not-an-address' }, 'query.email'],
    [{ name_prefix: 'x'.repeat(201) }, 'query.name_prefix'],
    [{ offset: 1, cursor: 'abc' }, 'query.offset'],
  ];
  for (const [q, field] of cases) {
    const r = await list(q);
    t.is(r.status, 400, JSON.stringify(q));
    t.is(r.body.error, 'invalid_request');
    t.is(r.body.details[0].field, field, JSON.stringify(q));
  }
  t.is((await list({ colour: 'red' })).status, 400);
});

test.serial(
  'PATCH: name and claims under If-Match, new ETag, audited with old and new values; 412 when stale',
  async (t) => {
    const u = made[1];
    const before = await get(u.id);
    const etag = before.headers.get('etag')!;
    const r = await patch(u.id, { name: 'Alan T', claims: { department: 'maths' } }, etag);
    t.is(r.status, 200, r.text);
    t.is(r.body.name, 'Alan T');
    t.deepEqual(r.body.claims, { department: 'maths' });
    const fresh = r.headers.get('etag')!;
    t.not(fresh, etag);
    t.is((await get(u.id)).headers.get('etag'), fresh, 'the answer carries the current ETag');
    // The old ETag is stale now: nothing is written.
    const stale = await patch(u.id, { name: 'Lost' }, etag);
    t.is(stale.status, 412);
    t.is(stale.body.error, 'precondition_failed');
    t.is((await get(u.id)).body.name, 'Alan T');
    // A weak tag never matches (RFC 9110 §13.1.1 strong comparison); * matches any.
    t.is((await patch(u.id, { name: 'Weak' }, `W/${fresh}`)).status, 412);
    t.is((await patch(u.id, { name: 'Alan Turing' }, '*')).status, 200);
    // Another writer's status change (not through this endpoint) changes the ETag too.
    const current = (await get(u.id)).headers.get('etag')!;
    const { ds } = await openServices(db.url, db.dir);
    await ds.query("UPDATE users SET status = 'disabled' WHERE id = ?", [u.id]);
    await ds.query("UPDATE users SET status = 'active' WHERE id = ?", [u.id]);
    await ds.query("UPDATE users SET status = 'disabled' WHERE id = ?", [u.id]);
    await ds.destroy();
    t.is((await patch(u.id, { name: 'Late' }, current)).status, 412);
    // A claim value refused by the custom claims service's validation names the key.
    const bad = await patch(u.id, { claims: { nope: 'x' } });
    t.is(bad.status, 400);
    t.is(bad.body.error, 'unknown_claim');

    const audit = await api(d.url, 'GET', `/api/admin/audit?target_id=${u.id}&action=user.update`, { token: admin });
    const first = audit.body.events.at(-1);
    t.is(first.actor_id, s.tenantAdmin.clientId);
    t.deepEqual(first.summary.changes, { name: { old: u.name, new: 'Alan T' } });
    t.deepEqual(first.summary.claims, { set: ['department'], cleared: [] });
  },
);

test.serial(
  'PATCH email: unverified and the old address told, unless email_verified: true; a taken address is 409',
  async (t) => {
    const u = made[4];
    const r = await patch(u.id, { email: 'Barbara.L@example.org' });
    t.is(r.status, 200, r.text);
    t.is(r.body.email, 'barbara.l@example.org');
    t.is(r.body.email_verified, false);
    const mail = await sink.waitFor((m) => m.to.includes(u.email));
    t.regex(mail.text, /changed the email address/);
    t.regex(mail.text, /b\*\*\*@example\.org/);
    t.notRegex(mail.text, /barbara\.l@/, 'the new address is not given away in full');
    const audit = await api(d.url, 'GET', `/api/admin/audit?target_id=${u.id}&action=user.update`, { token: admin });
    t.deepEqual(audit.body.events[0].summary.changes.email, { old: u.email, new: 'barbara.l@example.org' });

    const vouched = await patch(made[5].id, { email: 'donald.k@example.org', email_verified: true });
    t.is(vouched.body.email_verified, true);

    const taken = await patch(u.id, { email: 'ada@example.com' });
    t.is(taken.status, 409);
    t.is(taken.body.error, 'conflict');
    t.is(taken.body.field, 'email');
    t.is((await get(u.id)).body.email, 'barbara.l@example.org');
  },
);

test.serial('PATCH bad bodies are 400 naming the field', async (t) => {
  const u = made[0].id;
  const cases: [unknown, string][] = [
    [{}, 'body'],
    [{ email: 'nope' }, 'body.email'],
    [{ name: '' }, 'body.name'],
    [{ email_verified: 'yes' }, 'body.email_verified'],
    [{ status: 'disabled' }, 'body'],
  ];
  for (const [body, field] of cases) {
    const r = await patch(u, body);
    t.is(r.status, 400, JSON.stringify(body));
    t.true(r.body.details[0].field.startsWith(field), `${JSON.stringify(body)}: ${r.body.details[0].field}`);
  }
});
