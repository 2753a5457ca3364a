/**
 * POST /api/user/data-export and its polling endpoint: the inline (completed) and background
 * (pending → completed) shapes, both formats, the sections filter, 404 for another user's
 * export, CSV formula neutralisation and the absence of secrets.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { openServices } from '../helpers/seed.js';
import { ACCOUNT_SCOPE, loginKit } from '../helpers/login.js';
import { seedApp, type App } from '../helpers/oauth.js';
import { INLINE_ROW_LIMIT, csvCell } from '../../shared/services/data-export.js';
import { api, type ApiAnswer } from '../helpers/api.js';
import { until } from '../helpers/poll.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let n = 0;
const kit = loginKit(
  () => d.url,
  () => sink,
);
const ERROR_CODE = /^[A-Z]{2}[0-9]{6}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

test.before(async () => {
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  sink = await startSmtpSink();
  d = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url, IAM_EMAIL_CODE_RESEND_SECONDS: '0' });
});
test.after.always(async () => {
  await d?.stop();
  await sink?.close();
  await db?.drop();
});

async function newUser(name?: string) {
  const email = `export${++n}-${Date.now()}@example.com`;
  const { ds, directory } = await openServices(db.url, db.dir);
  const user = await directory.createUser(
    app.tenantId,
    { email, name: name ?? `Export ${n}` },
    { type: 'system', id: 'test' },
  );
  await ds.destroy();
  return { user, email, ...(await kit.tokensFor(app.web, email, ACCOUNT_SCOPE)) };
}

const post = (token: string, body: unknown) => api(d.url, 'POST', '/api/user/data-export', { token, body });
const get = (token: string, id: string) =>
  api(d.url, 'GET', `/api/user/data-export/${encodeURIComponent(id)}`, { token });

async function addHistory(userId: string, count: number) {
  const { ds } = await openServices(db.url, db.dir);
  try {
    const base = Date.now() - count;
    for (let i = 0; i < count; i += 500) {
      const rows = Array.from({ length: Math.min(500, count - i) }, (_, j) => i + j);
      await ds.query(
        `INSERT INTO auth_history (id, tenant_id, user_id, event, outcome, reason, client_id, ip, user_agent, ` +
          `created_at) VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
        rows.flatMap((k) => [
          `ah_${randomBytes(9).toString('base64url')}`,
          app.tenantId,
          userId,
          'login',
          'success',
          null,
          app.web.clientId,
          '127.0.0.1',
          'bench-agent',
          base + k,
        ]),
      );
    }
  } finally {
    await ds.destroy();
  }
}

async function pollUntilDone(token: string, id: string) {
  let r: ApiAnswer | undefined;
  await until(
    async () => {
      r = await get(token, id);
      return r.status !== 200 || r.body.status !== 'pending';
    },
    { timeoutMs: 120_000, intervalMs: 250, what: () => `the export done (last: ${r?.text.slice(0, 200)})` },
  );
  return r!;
}

test('small export: completed inline, JSON, every section by default', async (t) => {
  const u = await newUser();
  const r = await post(u.access_token, {});
  t.is(r.status, 200);
  t.is(r.body.status, 'completed');
  t.is(r.body.format, 'json');
  t.is(typeof r.body.requestId, 'string');
  t.true(Number.isInteger(r.body.exportedAt) && r.body.exportedAt > 1e12, 'epoch ms');
  t.deepEqual(Object.keys(r.body.data).sort(), [
    'auth_history',
    'consents',
    'custom_claims',
    'passkeys',
    'profile',
    'sessions',
  ]);
  t.deepEqual(r.body.data.profile, {
    id: u.user.id,
    email: u.email,
    name: u.user.name,
    status: 'active',
    created_at: r.body.data.profile.created_at,
  });
  t.deepEqual(r.body.data.custom_claims, []);
  t.true(r.body.data.sessions.length >= 1, 'the login made a session');
  t.true(r.body.data.consents.length >= 0);
  t.true(r.body.data.auth_history.length >= 1, 'the login is in the history');
  for (const s of r.body.data.sessions) t.false('id' in s);
});

test('no secrets, hashes or session ids in the export', async (t) => {
  const u = await newUser();
  const { ds } = await openServices(db.url, db.dir);
  const sessions = await ds.query<{ id: string }[]>('SELECT id FROM sessions WHERE user_id = ?', [u.user.id]);
  await ds.destroy();
  t.true(sessions.length >= 1);
  for (const format of ['json', 'csv']) {
    const r = await post(u.access_token, { format });
    t.is(r.status, 200);
    for (const bad of [
      'secret_hash',
      'code_hash',
      'secret',
      'hash',
      app.web.secret,
      u.access_token,
      ...sessions.map((s) => s.id),
    ]) {
      t.false(r.text.includes(bad), `${format} export contains ${bad.slice(0, 20)}`);
    }
  }
});

test('sections filter: only the asked sections', async (t) => {
  const u = await newUser();
  const r = await post(u.access_token, { sections: ['profile', 'custom_claims'] });
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.body.data).sort(), ['custom_claims', 'profile']);
  const c = await post(u.access_token, { sections: ['sessions'], format: 'csv' });
  t.is(c.body.data.contentType, 'text/csv');
  t.true(c.body.data.csv.startsWith('# sessions\r\n'));
  t.false(c.body.data.csv.includes('# profile'));
});

test('unknown body fields and unknown sections: 400 with error_code and error_id', async (t) => {
  const u = await newUser();
  for (const body of [{ nope: 1 }, { sections: ['passwords'] }, { format: 'xml' }]) {
    const r = await post(u.access_token, body);
    t.is(r.status, 400, JSON.stringify(body));
    t.regex(r.body.error_code, ERROR_CODE);
    t.regex(r.body.error_id, UUID);
  }
});

test('CSV: one table per section, formula cells neutralised', async (t) => {
  const u = await newUser('=cmd()');
  const r = await post(u.access_token, { format: 'csv' });
  t.is(r.status, 200);
  t.is(r.body.status, 'completed');
  t.is(r.body.format, 'csv');
  const csv: string = r.body.data.csv;
  t.is(r.body.data.contentType, 'text/csv');
  const lines = csv.split('\r\n');
  t.is(lines[0], '# profile');
  t.is(lines[1], 'id,email,name,status,created_at');
  t.true(lines[2].includes(`,'=cmd(),`), lines[2]);
  t.false(/(^|,)=cmd/.test(csv));
  for (const s of ['# consents', '# sessions', '# auth_history', '# custom_claims', '# passkeys'])
    t.true(lines.includes(s), s);
  t.is(csvCell('+1'), "'+1");
  t.is(csvCell('-1'), "'-1");
  t.is(csvCell('@x'), "'@x");
  t.is(csvCell('\tx'), "'\tx");
  t.is(csvCell('a,"b"'), '"a,""b"""');
  t.is(csvCell('plain'), 'plain');
});

test('large export: pending (202), then completed by the job; JSON and CSV', async (t) => {
  const u = await newUser();
  await addHistory(u.user.id, INLINE_ROW_LIMIT + 1_500);
  const p = await post(u.access_token, {});
  t.is(p.status, 202);
  t.is(p.body.status, 'pending');
  t.is(typeof p.body.requestId, 'string');
  t.true(p.body.message.includes(`/api/user/data-export/${p.body.requestId}`));
  t.true(Number.isInteger(p.body.estimatedWaitSeconds));
  const done = await pollUntilDone(u.access_token, p.body.requestId);
  t.is(done.status, 200);
  t.is(done.body.status, 'completed', done.text.slice(0, 300));
  t.is(done.body.requestId, p.body.requestId);
  t.is(done.body.format, 'json');
  t.true(Number.isInteger(done.body.exportedAt));
  t.true(done.body.data.auth_history.length >= INLINE_ROW_LIMIT + 1_500);
  const times = (done.body.data.auth_history as { created_at: number }[]).map((h) => h.created_at);
  t.deepEqual(
    times,
    [...times].sort((a, b) => a - b),
    'in time order across pages',
  );

  const c = await post(u.access_token, { format: 'csv', sections: ['auth_history'] });
  t.is(c.status, 202);
  const cd = await pollUntilDone(u.access_token, c.body.requestId);
  t.is(cd.body.status, 'completed');
  t.is(cd.body.format, 'csv');
  const lines = (cd.body.data.csv as string).split('\r\n').filter(Boolean);
  t.is(lines[0], '# auth_history');
  t.is(lines[1], 'event,outcome,reason,client_id,ip,user_agent,created_at');
  t.true(lines.length - 2 >= INLINE_ROW_LIMIT + 1_500);
});

test("another user's export id, or an unknown one: 404 with error_code and error_id", async (t) => {
  const owner = await newUser();
  await addHistory(owner.user.id, INLINE_ROW_LIMIT + 10);
  const p = await post(owner.access_token, { sections: ['auth_history'] });
  t.is(p.status, 202);
  const other = await newUser();
  for (const id of [p.body.requestId, 'dex_doesnotexist']) {
    const r = await get(other.access_token, id);
    t.is(r.status, 404);
    t.is(r.body.error, 'not_found');
    t.regex(r.body.error_code, ERROR_CODE);
    t.regex(r.body.error_id, UUID);
  }
  t.is((await get(owner.access_token, p.body.requestId)).status, 200);
  const noAuth = await fetch(`${d.url}/api/user/data-export/${p.body.requestId}`);
  t.is(noAuth.status, 401);
});
