/**
 * POST /api/admin/tenants/{tenantId}/users/{userId}/disable|enable|sign-out and DELETE
 * …/users/{userId} over HTTP against one daemon (docs/directory.md, "Users: disable, sign out
 * everywhere, delete (erasure)"): a disabled user's email-code sign-in and refresh are refused
 * (403 user_disabled, recorded in auth_history); sign-out everywhere ends the sessions and
 * refresh tokens; concurrent disables write one audit event; after an erasure no row of any
 * table holds the user's address, name, IP address or user agent, the audit log keeps the id
 * and the documented pseudonym, and the address can be registered again; another tenant's
 * user is 404.
 */
import test from 'ava';
import { createHmac, randomBytes } from 'node:crypto';
import { deriveKey } from '../../shared/crypto.js';
import { SESSION_COOKIE } from '../../shared/services/auth/policy.js';
import { KeyService } from '../../shared/services/keys.js';
import { TokenService } from '../../shared/services/tokens.js';
import { activeTenant, clientCredentialsToken, openServices } from '../helpers/seed.js';
import { createUserIn, introspectAs, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { loginKit } from '../helpers/login.js';
import {
  authorizeUrl,
  challengeFrom,
  codeFrom,
  CookieJar,
  csrfFrom,
  get,
  pkce,
  REDIRECT,
  sql,
} from '../helpers/oauth.js';
import { postFrom } from '../helpers/from-ip.js';
import { api } from '../helpers/api.js';
import { TEST_SECRET_KEY, usingMysql } from '../helpers/db.js';

let e: LoginEnv;
let admin: string;
let otherTenantId: string;
let otherUserId: string;
const kit = loginKit(
  () => e.d.url,
  () => e.sink,
);
const actor = { type: 'system' as const, id: 'test' };

test.before(async () => {
  e = await startLoginEnv();
  const { ds, directory, provisioning } = await openServices(e.db.url, e.db.dir);
  const other = await activeTenant(provisioning, { name: 'Other' }, actor);
  otherTenantId = other.id;
  otherUserId = (await directory.createUser(other.id, { email: 'other@example.com', name: 'Other' }, actor)).id;
  await ds.destroy();
  admin = await clientCredentialsToken(e.d.url, e.app.admin.clientId, e.app.admin.secret);
});
test.after.always(async () => {
  await stopLoginEnv(e);
});

const userPath = (userId: string, tenantId = e.app.tenantId) => `/api/admin/tenants/${tenantId}/users/${userId}`;
const move = (userId: string, m: 'disable' | 'enable' | 'sign-out', tenantId?: string) =>
  api(e.d.url, 'POST', `${userPath(userId, tenantId)}/${m}`, { token: admin });
const rows = async (query: string, params: unknown[]) =>
  (await sql(e.db.url, e.db.dir, query, params)) as Record<string, unknown>[];
const web = () => e.app.web;

/** An access token of the user without a token family, as a token exchange with an ID token subject issues. */
async function tokenWithoutFamily(userId: string): Promise<string> {
  const { ds, config } = await openServices(e.db.url, e.db.dir);
  try {
    const tokens = new TokenService(e.d.url, new KeyService(ds, TEST_SECRET_KEY, config.keyRetireAfterSeconds));
    const issued = await tokens.issueAccessToken({
      sub: userId,
      clientId: web().clientId,
      tenantId: e.app.tenantId,
      scope: ['openid'],
      audience: [],
      ttlSeconds: 300,
    });
    return issued.token;
  } finally {
    await ds.destroy();
  }
}

test('disable refuses the email-code sign-in and the refresh; a second disable changes nothing; enable restores sign-in', async (t) => {
  const user = await createUserIn(e, 'dis');
  const tokens = await kit.tokensFor(web(), user.email);
  t.true((await introspectAs(e, tokens.access_token)).active);
  const familyless = await tokenWithoutFamily(user.id);
  t.true((await introspectAs(e, familyless)).active);
  // A code sent while the user was active, used after the disable: the right code, refused.
  const code = await kit.sendAndReadCode(web().clientId, user.email);

  const r = await move(user.id, 'disable');
  t.is(r.status, 200);
  t.like(r.body, { id: user.id, status: 'disabled', changed: true });
  t.true(r.body.families_revoked >= 1);
  t.true(r.body.sessions_ended >= 1);

  t.false((await introspectAs(e, tokens.access_token)).active);
  t.false((await introspectAs(e, familyless)).active, 'a token without a family (an exchanged one) too');
  const refreshed = await kit.refresh(tokens.refresh_token, web());
  t.is(refreshed.status, 400);
  t.is(refreshed.body.error, 'invalid_grant');
  const verify = await api(e.d.url, 'POST', '/api/v1/auth/direct/email-code/verify', {
    body: { client_id: web().clientId, email: user.email, code },
  });
  t.is(verify.status, 403);
  t.is(verify.body.error, 'user_disabled');
  const history = await rows('SELECT reason, outcome FROM auth_history WHERE user_id = ? AND reason = ?', [
    user.id,
    'user_disabled',
  ]);
  t.is(history.length, 1);
  t.is(history[0].outcome, 'failure');

  const again = await move(user.id, 'disable');
  t.is(again.status, 200);
  t.like(again.body, { status: 'disabled', changed: false, families_revoked: 0 });

  const enabled = await move(user.id, 'enable');
  t.like(enabled.body, { status: 'active', changed: true });
  await kit.signIn(web().clientId, user.email);
  t.deepEqual(
    (
      await rows("SELECT action FROM audit_events WHERE target_id = ? AND action LIKE 'user.%' ORDER BY created_at", [
        user.id,
      ])
    ).map((a) => a.action),
    ['user.create', 'user.disable', 'user.enable'],
  );
});

test('a disabled user signing in through the login page gets a clear 403 page, and no session', async (t) => {
  const user = await createUserIn(e, 'dispage');
  const jar = new CookieJar();
  const authorize = authorizeUrl(e.d.url, {
    response_type: 'code',
    client_id: web().clientId,
    redirect_uri: REDIRECT,
    scope: 'openid email',
    state: 's',
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
  });
  const html = await (await get(authorize, jar)).text();
  const form = { challenge: challengeFrom(html), csrf: csrfFrom(html) };
  const post = async (path: string, body: Record<string, string>) => {
    const res = await fetch(`${e.d.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
      body: new URLSearchParams(body),
    });
    jar.take(res);
    return res;
  };
  const earlier = new Set(e.sink.messages);
  t.is((await post('/login/email-code', { ...form, email: user.email })).status, 200);
  const mail = await e.sink.waitFor((m) => !earlier.has(m) && m.to.includes(user.email), 15_000);
  t.is((await move(user.id, 'disable')).status, 200);

  const verified = await post('/login/verify', { ...form, email: user.email, code: codeFrom(mail.text) });
  t.is(verified.status, 403);
  t.regex(verified.headers.get('content-type') ?? '', /^text\/html/);
  t.regex(await verified.text(), /This account is disabled\. Ask your administrator to enable it\./);
  t.false(jar.header().includes(SESSION_COOKIE), 'no session cookie');
});

test('sign-out everywhere ends the sessions and refresh tokens; the user stays active', async (t) => {
  const user = await createUserIn(e, 'out');
  const tokens = await kit.tokensFor(web(), user.email);
  const r = await move(user.id, 'sign-out');
  t.is(r.status, 200);
  t.like(r.body, { status: 'active', changed: true });
  t.true(r.body.sessions_ended >= 1);
  t.is((await kit.refresh(tokens.refresh_token, web())).status, 400);
  t.is((await kit.userinfo(tokens.access_token)).status, 401);
  const account = await fetch(`${e.d.url}/account`, { headers: { cookie: tokens.jar.header() }, redirect: 'manual' });
  t.not(account.status, 200, 'the browser session ended too');
  // Not disabled: the user signs in again.
  await kit.signIn(web().clientId, user.email);
});

test('concurrent disables: one wins, one audit event, one revocation', async (t) => {
  const user = await createUserIn(e, 'race');
  await kit.tokensFor(web(), user.email);
  const answers = await Promise.all(Array.from({ length: 5 }, () => move(user.id, 'disable')));
  t.true(answers.every((a) => a.status === 200 && a.body.status === 'disabled'));
  t.is(answers.filter((a) => a.body.changed).length, 1);
  t.is(
    answers.reduce((n, a) => n + (a.body.families_revoked as number), 0),
    1,
  );
  const events = await rows("SELECT id FROM audit_events WHERE target_id = ? AND action = 'user.disable'", [user.id]);
  t.is(events.length, 1);
});

/** Every row of every table of the database, as text: what an erasure must leave nothing of. */
async function everyRow(): Promise<Map<string, string>> {
  const { ds } = await openServices(e.db.url, e.db.dir);
  try {
    const names = await ds.query<{ name: string }[]>(
      usingMysql()
        ? 'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()'
        : "SELECT name FROM sqlite_master WHERE type = 'table'",
    );
    const tables = names.map((r) => r.name);
    const out = new Map<string, string>();
    for (const table of tables) {
      const all = await ds.query<Record<string, unknown>[]>(`SELECT * FROM ${table}`);
      // Text, JSON and string columns as they are; binary columns as their UTF-8 text.
      out.set(
        table,
        all
          .map((r) =>
            Object.values(r)
              .map((v) => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v)))
              .join('\u0001'),
          )
          .join('\n'),
      );
    }
    return out;
  } finally {
    await ds.destroy();
  }
}

test('erasure: no row of any table keeps the address, name, IP or user agent; the audit log keeps the pseudonym', async (t) => {
  const tag = randomBytes(5).toString('hex');
  const email = `erase-${tag}@example.com`;
  const name = `Erin Erasable ${tag}`;
  const ua = `EraseTestAgent/${tag}`;
  const ip = '127.0.0.9';
  // Created through the API with an Idempotency-Key: the stored response names the user too.
  const created = await api(e.d.url, 'POST', `/api/admin/tenants/${e.app.tenantId}/users`, {
    token: admin,
    body: { email, name },
    idempotencyKey: `create-${tag}`,
  });
  t.is(created.status, 201);
  const userId = created.body.id as string;
  // A sign-in from its own address and browser (a session and history rows with both).
  await postFrom(
    ip,
    `${e.d.url}/api/v1/auth/direct/email-code/send`,
    { client_id: web().clientId, email },
    {
      headers: { 'user-agent': ua },
    },
  );
  const mail = await e.sink.waitFor((m) => m.to.includes(email), 15_000);
  const code = codeFrom(mail.text);
  const verified = await postFrom(
    ip,
    `${e.d.url}/api/v1/auth/direct/email-code/verify`,
    { client_id: web().clientId, email, code },
    { headers: { 'user-agent': ua } },
  );
  t.is(verified.status, 200, verified.text);
  const tokens = await kit.tokensFor(web(), email);
  const familyless = await tokenWithoutFamily(userId);
  const before = await everyRow();
  t.true(
    [...before.values()].some((v) => v.includes(ua) && v.includes(ip)),
    'the user agent and IP were stored',
  );

  const del = await api(e.d.url, 'DELETE', userPath(userId), { token: admin });
  t.is(del.status, 200);
  // The documented pseudonym: psn_ + 16 bytes of HMAC-SHA256(HKDF(secret, "iam:user-pseudonym"), "<tenant>:<user>").
  const pseudonym =
    'psn_' +
    createHmac('sha256', deriveKey(TEST_SECRET_KEY, 'user-pseudonym'))
      .update(`${e.app.tenantId}:${userId}`)
      .digest()
      .toString('base64url', 0, 16);
  t.like(del.body, { id: userId, deleted: true, pseudonym });
  t.true(del.body.erased.users === 1 && del.body.erased.sessions >= 1 && del.body.erased.auth_history >= 1);

  for (const [table, text] of await everyRow()) {
    for (const needle of [email, name, ua, ip]) t.false(text.includes(needle), `${table} still holds ${needle}`);
    if (table !== 'audit_events') t.false(text.includes(userId), `${table} still names the user`);
  }
  const events = await rows("SELECT summary FROM audit_events WHERE target_id = ? AND action = 'user.delete'", [
    userId,
  ]);
  t.is(events.length, 1);
  const summary = events[0].summary;
  t.is((typeof summary === 'string' ? JSON.parse(summary) : summary).pseudonym, pseudonym);

  t.false((await introspectAs(e, tokens.access_token)).active);
  t.false((await introspectAs(e, familyless)).active);
  t.is((await kit.refresh(tokens.refresh_token, web())).status, 400);
  t.is((await api(e.d.url, 'DELETE', userPath(userId), { token: admin })).status, 404);
  const again = await api(e.d.url, 'POST', `/api/admin/tenants/${e.app.tenantId}/users`, {
    token: admin,
    body: { email, name: 'Erin again' },
  });
  t.is(again.status, 201, 'the address can be registered again');
});

test("unknown ids and another tenant's user are 404", async (t) => {
  t.is((await move('usr_nope', 'disable')).status, 404);
  // Another tenant's user named under this tenant's path.
  t.is((await move(otherUserId, 'disable')).status, 404);
  t.is((await move(otherUserId, 'sign-out')).status, 404);
  t.is((await api(e.d.url, 'DELETE', userPath(otherUserId), { token: admin })).status, 404);
  const other = await rows('SELECT status FROM users WHERE tenant_id = ? AND id = ?', [otherTenantId, otherUserId]);
  t.is(other[0].status, 'active');
});
