/**
 * The sign-in history over HTTP against one real daemon (docs/directory.md, "Sign-in history"):
 * email-code and passkey sign-ins, right and wrong, are listed per user and per tenant with
 * their reasons and never the code; each filter; keyset pages that neither skip nor repeat rows
 * while rows are appended; another tenant's user 404; bad parameters 400 naming the field; the
 * account page and GET /api/account/sign-ins show the user's own; and `iam sign-ins list`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { writeCredentials } from '../../cli/http/config.js';
import type { Database } from '../../shared/db/index.js';
import { PasskeyService } from '../../shared/services/auth/passkeys.js';
import { AUTH_HISTORY_RETENTION_MS } from '../../shared/services/auth/policy.js';
import { purgeExpiredAuth } from '../../shared/services/auth/purge.js';
import { api } from '../helpers/api.js';
import { seedAuthHistory } from '../helpers/auth-history.js';
import { iam } from '../helpers/cli.js';
import { createTestDatabase, TEST_SECRET_KEY, type TestDb } from '../helpers/db.js';
import { startLocalhostDaemon, type Daemon } from '../helpers/daemon.js';
import { codeFrom, CookieJar, pkce, postJson, seedApp, type App } from '../helpers/oauth.js';
import { activeTenant, clientCredentialsToken, openServices } from '../helpers/seed.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { registerPasskey, SoftAuthenticator } from '../helpers/soft-authenticator.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let ds: Database;
let issuer: string;
let admin: string;
let otherTenantId: string;
let otherUserId: string;
let n = 0;
const actor = { type: 'system' as const, id: 'test' };

/** The email-code user: one wrong code, then the right one (its session in `jar`). */
const alice = { id: '', email: '', codes: [] as string[], jar: new CookieJar() };
/** The passkey user: one passkey sign-in. */
let pat = { id: '' };

interface SignIn {
  id: string;
  user_id: string | null;
  method: string;
  result: string;
  reason: string | null;
  client_id: string | null;
  ip: string | null;
  device: string;
  created_at: number;
}

async function newUser(tenantId = app.tenantId) {
  const { ds: conn, directory } = await openServices(db.url, db.dir);
  try {
    return await directory.createUser(
      tenantId,
      { email: `signins${++n}-${Date.now()}@example.com`, name: `Sign-ins ${n}` },
      actor,
    );
  } finally {
    await conn.destroy();
  }
}

const post = (path: string, body: unknown, jar?: CookieJar) => postJson(`${d.url}${path}`, body, jar);
const get = (path: string, token = admin) =>
  api<{ sign_ins: SignIn[]; next_cursor?: string }>(d.url, 'GET', path, { token });
const userPath = (userId: string, q = '', tenantId = app.tenantId) =>
  `/api/admin/tenants/${tenantId}/users/${userId}/sign-ins${q ? `?${q}` : ''}`;
const tenantPath = (q = '') => `/api/admin/tenants/${app.tenantId}/sign-ins${q ? `?${q}` : ''}`;

/** A passkey sign-in through the direct API: options -> assertion -> verify. */
async function passkeySignIn(auth: SoftAuthenticator) {
  const o = await api(d.url, 'POST', '/api/v1/auth/direct/passkey/options', { body: { client_id: app.web.clientId } });
  return api(d.url, 'POST', '/api/v1/auth/direct/passkey/verify', {
    body: {
      client_id: app.web.clientId,
      challenge_id: o.body.challenge_id,
      credential: auth.assert(o.body.public_key as never),
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    },
  });
}

test.before(async () => {
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  sink = await startSmtpSink();
  ({ d, issuer } = await startLocalhostDaemon(db.url, db.dir, {
    IAM_SMTP_URL: sink.url,
    IAM_EMAIL_CODE_RESEND_SECONDS: '0',
  }));
  const services = await openServices(db.url, db.dir);
  ds = services.ds;
  const other = await activeTenant(services.provisioning, { name: 'Other' }, actor);
  otherTenantId = other.id;
  admin = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);
  otherUserId = (await newUser(otherTenantId)).id;

  // Alice: a wrong code, then the right one.
  const a = await newUser();
  Object.assign(alice, { id: a.id, email: a.email });
  const earlier = new Set(sink.messages);
  if (
    (await post('/api/v1/auth/direct/email-code/send', { client_id: app.web.clientId, email: a.email })).status !== 200
  )
    throw new Error('send');
  const code = codeFrom((await sink.waitFor((m) => !earlier.has(m) && m.to.includes(a.email), 15_000)).text);
  const wrong = code === '000000' ? '111111' : '000000';
  alice.codes.push(code, wrong);
  const verify = (c: string) =>
    post('/api/v1/auth/direct/email-code/verify', { client_id: app.web.clientId, email: a.email, code: c }, alice.jar);
  if ((await verify(wrong)).status !== 400) throw new Error('the wrong code was taken');
  if ((await verify(code)).status !== 200) throw new Error('the right code was refused');
  // No account and no code asked for: recorded without a user.
  await post('/api/v1/auth/direct/email-code/verify', {
    client_id: app.web.clientId,
    email: `nobody-${Date.now()}@example.com`,
    code: '123456',
  });

  // Pat: a registered passkey signs in; an unregistered one is refused.
  const p = await newUser();
  pat = { id: p.id };
  const svc = new PasskeyService(ds, { issuer, secretKey: TEST_SECRET_KEY });
  const auth = new SoftAuthenticator(issuer);
  await registerPasskey(
    svc,
    { id: p.id, tenant_id: app.tenantId, email: p.email, name: p.name, status: 'active' },
    auth,
  );
  if ((await passkeySignIn(auth)).status !== 200) throw new Error('passkey sign-in');
  if ((await passkeySignIn(new SoftAuthenticator(issuer))).status !== 400) throw new Error('unknown passkey taken');
});
test.after.always(async () => {
  await d?.stop();
  await sink?.close();
  await ds?.destroy();
  await db?.drop();
});

test('a user’s sign-ins, newest first: the success and the wrong code with its reason, never the code', async (t) => {
  const r = await get(userPath(alice.id));
  t.is(r.status, 200, r.text);
  t.is(r.headers.get('cache-control'), 'no-store');
  t.deepEqual(
    r.body.sign_ins.map((s) => [s.user_id, s.method, s.result, s.reason, s.client_id, s.ip]),
    [
      [alice.id, 'email_code', 'success', null, app.web.clientId, '127.0.0.1'],
      [alice.id, 'email_code', 'failure', 'wrong_code', app.web.clientId, '127.0.0.1'],
    ],
  );
  t.is(r.body.next_cursor, undefined);
  // Neither code appears anywhere (the time, a number, aside).
  const text = JSON.stringify(r.body.sign_ins.map(({ created_at: _c, ...rest }) => rest));
  for (const c of alice.codes) t.false(text.includes(c));
});

test('the tenant’s sign-ins: an unknown address and an unknown passkey without a user; a passkey success', async (t) => {
  const failures = await get(tenantPath('result=failure&limit=200'));
  t.is(failures.status, 200, failures.text);
  const reasons = failures.body.sign_ins.map((s) => [s.user_id, s.method, s.reason]);
  t.true(reasons.some(([u, m, why]) => u === null && m === 'email_code' && why === 'no_code'));
  t.true(reasons.some(([u, m, why]) => u === null && m === 'passkey' && why === 'unknown_credential'));
  const mine = await get(userPath(pat.id));
  t.deepEqual(
    mine.body.sign_ins.map((s) => [s.method, s.result, s.client_id]),
    [['passkey', 'success', app.web.clientId]],
  );
});

test('each filter narrows the list', async (t) => {
  const ids = async (q: string) => {
    const r = await get(userPath(alice.id, q));
    t.is(r.status, 200, `${q}: ${r.text}`);
    return r.body.sign_ins.map((s) => s.reason ?? 'ok');
  };
  const all = (await get(userPath(alice.id))).body.sign_ins;
  const [ok, failed] = all;
  t.deepEqual(await ids('result=failure'), ['wrong_code']);
  t.deepEqual(await ids('result=success'), ['ok']);
  t.deepEqual(await ids('method=email_code'), ['ok', 'wrong_code']);
  t.deepEqual(await ids('method=passkey'), []);
  t.deepEqual(await ids(`client_id=${app.web.clientId}`), ['ok', 'wrong_code']);
  t.deepEqual(await ids(`client_id=${app.native.clientId}`), []);
  t.deepEqual(await ids('ip_prefix=127.0.'), ['ok', 'wrong_code']);
  t.deepEqual(await ids('ip_prefix=10.'), []);
  t.deepEqual(await ids(`since=${failed.created_at}&until=${failed.created_at + 1}`), ['wrong_code']);
  t.deepEqual(await ids(`since=${ok.created_at}`), ok.created_at === failed.created_at ? ['ok', 'wrong_code'] : ['ok']);
  t.deepEqual(await ids(`until=${failed.created_at}`), []);
  // The tenant's list by method: the passkey rows only.
  const pk = await get(tenantPath('method=passkey'));
  t.true(pk.body.sign_ins.length >= 2);
  t.true(pk.body.sign_ins.every((s) => s.method === 'passkey'));
});

test('pages neither skip nor repeat rows, ties broken by id, while newer rows are appended', async (t) => {
  const u = await newUser();
  // An hour ago: well inside the retention, so the daemon's auth-purge job leaves them alone.
  const T0 = Date.now() - 3_600_000;
  const at = [T0, T0 + 1000, T0 + 5000, T0 + 5000, T0 + 5000, T0 + 9000, T0 + 9000];
  await seedAuthHistory(db.url, db.dir, {
    tenantId: app.tenantId,
    count: at.length + 1,
    row: (i) => ({
      id: `ah_page_${String(i).padStart(2, '0')}`,
      user_id: u.id,
      // One row that is not a sign-in attempt: never listed.
      event: i === at.length ? 'session_created' : 'email_code_verify',
      outcome: i % 2 ? 'failure' : 'success',
      reason: i % 2 ? 'wrong_code' : null,
      client_id: app.web.clientId,
      ip: '192.0.2.7',
      user_agent: null,
      created_at: at[i] ?? T0 + 3000,
    }),
  });
  const expected = at
    .map((c, i) => ({ c, id: `ah_page_${String(i).padStart(2, '0')}` }))
    .sort((a, b) => b.c - a.c || (a.id < b.id ? 1 : -1))
    .map((r) => r.id);
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const r = await get(userPath(u.id, `limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`));
    t.is(r.status, 200, r.text);
    seen.push(...r.body.sign_ins.map((s) => s.id));
    cursor = r.body.next_cursor;
    if (pages++ === 0)
      // A newer row after the first page sorts before the cursor: not on a later page.
      await seedAuthHistory(db.url, db.dir, {
        tenantId: app.tenantId,
        count: 1,
        row: () => ({
          id: 'ah_page_new',
          user_id: u.id,
          event: 'passkey_verify',
          outcome: 'success',
          reason: null,
          client_id: null,
          ip: null,
          user_agent: null,
          created_at: T0 + 20_000,
        }),
      });
  } while (cursor);
  t.deepEqual(seen, expected);
  t.is(pages, 4);
  // A cursor of the user's own list is not one of the operator's.
  const own = await api(d.url, 'GET', '/api/account/sign-ins?limit=1', { headers: { cookie: alice.jar.header() } });
  t.truthy(own.body.next_cursor);
  const r = await get(userPath(alice.id, `cursor=${encodeURIComponent(own.body.next_cursor as string)}`));
  t.is(r.status, 400);
  t.regex(r.text, /query\.cursor/);
});

test('the auth-purge job deletes history rows past the retention, and only those', async (t) => {
  const u = await newUser();
  const now = Date.now();
  const row = (id: string, created_at: number) => ({
    id,
    user_id: u.id,
    event: 'email_code_verify',
    outcome: 'success' as const,
    reason: null,
    client_id: null,
    ip: null,
    user_agent: null,
    created_at,
  });
  await seedAuthHistory(db.url, db.dir, {
    tenantId: app.tenantId,
    count: 2,
    row: (i) =>
      i
        ? row('ah_purge_kept', now - AUTH_HISTORY_RETENTION_MS + 60_000)
        : row('ah_purge_old', now - AUTH_HISTORY_RETENTION_MS - 1),
  });
  t.true((await purgeExpiredAuth(ds, undefined, now)).auth_history >= 1);
  t.deepEqual(
    (await get(userPath(u.id))).body.sign_ins.map((s) => s.id),
    ['ah_purge_kept'],
  );
});

test('another tenant’s user is 404, an unknown user 404, another tenant’s list 403', async (t) => {
  const r = await get(userPath(otherUserId));
  t.is(r.status, 404, r.text);
  t.is((await get(userPath('usr_nobody'))).status, 404);
  const other = await get(`/api/admin/tenants/${otherTenantId}/sign-ins`);
  t.is(other.status, 403);
  t.is((other.body as unknown as { error: string }).error, 'tenant_forbidden');
  t.is((await api(d.url, 'GET', tenantPath())).status, 401);
});

test('bad parameters are 400 naming the field', async (t) => {
  const cases: [string, string][] = [
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['result=maybe', 'result'],
    ['method=sms', 'method'],
    ['ip_prefix=10.%25', 'ip_prefix'],
    ['ip_prefix=' + '1'.repeat(46), 'ip_prefix'],
    ['since=-1', 'since'],
    ['since=5&until=5', 'until'],
    ['client_id=' + 'c'.repeat(129), 'client_id'],
    ['cursor=nope', 'cursor'],
    ['nope=1', 'nope'],
  ];
  for (const [q, field] of cases) {
    const r = await get(tenantPath(q));
    t.is(r.status, 400, q);
    t.true(r.text.includes(field), `${q}: ${r.text}`);
  }
});

test('the account page and GET /api/account/sign-ins show the user’s own recent sign-ins', async (t) => {
  const res = await fetch(`${d.url}/account`, { headers: { cookie: alice.jar.header() } });
  t.is(res.status, 200);
  const html = await res.text();
  const section = html.slice(html.indexOf('<h2 id="sign-ins">'));
  t.regex(section, /Recent sign-ins/);
  const rows = [...section.matchAll(/<tr class="sign-in-(success|failure)">([\s\S]*?)<\/tr>/g)].map((m) => [
    m[1],
    [...m[2].matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) => c[1].replace(/<[^>]+>/g, '')),
    m[2],
  ]);
  t.is(rows.length, 2);
  const [[ok, okCells, okHtml], [failed, failedCells]] = rows as [string, string[], string][];
  t.is(ok, 'success');
  t.deepEqual([okCells[2], okCells[3], okCells[4]], ['Email code', 'Signed in', '127.0.0.1']);
  t.is(failed, 'failure');
  t.deepEqual([failedCells[2], failedCells[3]], ['Email code', 'Failed (wrong code)']);
  // The time in the reader's language, and as ISO 8601 for machines (views/page-i18n.ts `when`).
  t.regex(okCells[1], /\b2\d{3}\b.* UTC$/);
  t.regex(okHtml, /<time datetime="\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z">/);
  for (const c of alice.codes) t.false(section.includes(c));

  const r = await api(d.url, 'GET', '/api/account/sign-ins', { headers: { cookie: alice.jar.header() } });
  t.is(r.status, 200, r.text);
  t.deepEqual(
    (r.body.sign_ins as SignIn[]).map((s) => [s.user_id, s.result, s.reason]),
    [
      [alice.id, 'success', null],
      [alice.id, 'failure', 'wrong_code'],
    ],
  );
  t.is((await api(d.url, 'GET', '/api/account/sign-ins')).status, 401);
});

test('iam sign-ins list: a user’s failures as JSON; an unknown user fails', async (t) => {
  const config = join(mkdtempSync(join(tmpdir(), 'iam-signins-')), 'config.json');
  writeCredentials(config, { url: d.url, client_id: app.admin.clientId, client_secret: app.admin.secret });
  const env = { IAM_CLI_CONFIG: config };
  const ok = await iam(
    db,
    ['sign-ins', 'list', '--tenant', app.tenantId, '--user', alice.id, '--result', 'failure', '--json'],
    env,
  );
  t.is(ok.code, 0, ok.stderr);
  const out = JSON.parse(ok.stdout) as { sign_ins: SignIn[] };
  t.deepEqual(
    out.sign_ins.map((s) => [s.user_id, s.method, s.reason]),
    [[alice.id, 'email_code', 'wrong_code']],
  );
  const bad = await iam(db, ['sign-ins', 'list', '--tenant', app.tenantId, '--user', 'usr_nobody', '--json'], env);
  t.is(bad.code, 1, bad.stdout + bad.stderr);
  t.regex(bad.stdout + bad.stderr, /not_found/);
});
