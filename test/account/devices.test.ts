/**
 * GET/DELETE /api/account/devices: the user's live sessions, paged by an opaque signed
 * cursor (no duplicates, no gaps, stable under inserts), `current` only on the requesting
 * session, and signing a device out revokes its session and tokens.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import type { TestDb } from '../helpers/db.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { openServices } from '../helpers/seed.js';
import { loginKit } from '../helpers/login.js';
import { createUserIn, introspectAs, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import type { App, CookieJar } from '../helpers/oauth.js';
import { tokenHash } from '../../shared/services/auth/pkce.js';
import { describeUserAgent, deviceIdOf } from '../../shared/services/auth/account.js';
import { assertUserError } from '../helpers/user-errors.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
const kit = loginKit(
  () => d.url,
  () => sink,
);

const AGENTS = [
  'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) ' +
    'Version/17.5 Mobile/15E148 Safari/604.1',
  'curl/8.5.0',
  '',
];

let env: LoginEnv;
test.before(async () => {
  env = await startLoginEnv();
  ({ db, d, app, sink } = env);
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

const newUser = () => createUserIn(env, 'device');

interface Row {
  id: string;
  createdAt: number;
  ua: string | null;
  revoked?: boolean;
  expired?: boolean;
  userId?: string;
}

/** Inserts session rows directly: many sessions without signing in through the API. */
async function insertSessions(userId: string, rows: Row[]) {
  const { ds } = await openServices(db.url, db.dir);
  try {
    const now = Date.now();
    for (const r of rows) {
      await ds.query(
        'INSERT INTO sessions (id, tenant_id, user_id, created_at, expires_at, auth_time, acr, amr, user_agent, ip, ' +
          'last_seen_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [
          r.id,
          app.tenantId,
          r.userId ?? userId,
          r.createdAt,
          r.expired ? now - 1000 : now + 3_600_000,
          r.createdAt,
          '1',
          '["otp"]',
          r.ua,
          '127.0.0.1',
          r.createdAt,
          r.revoked ? now : null,
        ],
      );
    }
  } finally {
    await ds.destroy();
  }
}

const sid = () => randomBytes(24).toString('base64url');

/** A device record as GET /api/account/devices answers it. */
interface Device {
  id: string;
  display_name: string;
  fallback_display_name?: string;
  platform: string;
  current: boolean;
  last_seen_at?: string;
  last_seen_at_unix?: number;
  client_id?: string;
  app_display_name?: string;
}

async function page(jar: CookieJar, q: Record<string, string>) {
  const res = await fetch(`${d.url}/api/account/devices?${new URLSearchParams(q)}`, {
    headers: { cookie: jar.header() },
  });
  return { res, body: await res.clone().json() };
}

async function pageAll(jar: CookieJar, limit: number, between?: () => Promise<void>) {
  const seen: Device[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const { res, body } = await page(jar, { limit: String(limit), ...(cursor ? { cursor } : {}) });
    if (res.status !== 200) throw new Error(`page ${res.status} ${JSON.stringify(body)}`);
    if (body.devices.length > limit) throw new Error('page larger than the limit');
    seen.push(...body.devices);
    cursor = body.next_cursor;
    if (++pages === 1 && between) await between();
  } while (cursor);
  return { seen, pages };
}

const introspect = (token: string) => introspectAs(env, token);

test('paging 131 devices with limit 7 and 100: no duplicates, no gaps, current only on the requesting session', async (t) => {
  const user = await newUser();
  const other = await newUser();
  const base = Date.now() - 86_400_000;
  // Groups of three share a created_at, so the id breaks the ties.
  const rows: Row[] = Array.from({ length: 130 }, (_, i) => ({
    id: sid(),
    createdAt: base + Math.floor(i / 3) * 1000,
    ua: AGENTS[i % AGENTS.length] || null,
  }));
  const hidden: Row[] = [
    { id: sid(), createdAt: base + 5, ua: AGENTS[0], revoked: true },
    { id: sid(), createdAt: base + 6, ua: AGENTS[0], expired: true },
    { id: sid(), createdAt: base + 7, ua: AGENTS[0], userId: other.id },
  ];
  await insertSessions(user.id, [...rows, ...hidden]);
  const { jar } = await kit.tokensFor(app.web, user.email);
  const currentId = deviceIdOf(tokenHash(jar.cookies.get('service_session')!));
  const expected = new Set([...rows.map((r) => deviceIdOf(r.id)), currentId]);

  for (const limit of [7, 100]) {
    const { seen, pages } = await pageAll(jar, limit);
    t.is(pages, Math.ceil(131 / limit), `limit ${limit}`);
    const ids = seen.map((x) => x.id);
    t.is(new Set(ids).size, ids.length, 'no duplicates');
    t.deepEqual([...ids].sort(), [...expected].sort(), 'no gaps and nothing else');
    t.deepEqual(
      seen.filter((x) => x.current).map((x) => x.id),
      [currentId],
    );
    t.is(seen[0].id, currentId, 'newest first');
  }

  const { seen: everything } = await pageAll(jar, 100);
  const body = { devices: everything };
  const cur = body.devices[0];
  t.is(cur.current, true);
  t.is(cur.client_id, app.web.clientId);
  t.is(cur.app_display_name, 'Web');
  const firefox = body.devices.find((x) => x.id === deviceIdOf(rows[0].id))!;
  t.is(firefox.display_name, 'Firefox on Linux');
  t.is(firefox.platform, 'Linux');
  t.is(typeof firefox.fallback_display_name, 'string');
  t.is(firefox.last_seen_at, new Date(rows[0].createdAt).toISOString());
  t.is(firefox.last_seen_at_unix, Math.floor(rows[0].createdAt / 1000));
  t.false('client_id' in firefox);
  const unknown = body.devices.find((x) => x.id === deviceIdOf(rows[5].id))!;
  t.is(unknown.platform, 'unknown');
  for (const dev of body.devices) {
    t.is(typeof dev.display_name, 'string');
    t.is(typeof dev.platform, 'string');
    t.false(JSON.stringify(dev).includes(tokenHash(jar.cookies.get('service_session')!)));
  }
});

test('every test agent is named as users have seen it (the parser is MIT-licensed ua-parser-js 1.x)', (t) => {
  t.deepEqual(
    AGENTS.map((a) => describeUserAgent(a).display_name),
    [
      'Firefox on Linux',
      'Chrome on Windows',
      'Safari on macOS',
      'Mobile Safari on iOS',
      'Unknown device',
      'Unknown device',
    ],
  );
  t.deepEqual(
    AGENTS.map((a) => describeUserAgent(a).platform),
    ['Linux', 'Windows', 'macOS', 'iOS', 'unknown', 'unknown'],
  );
  t.deepEqual(
    describeUserAgent('Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15').fallback_display_name,
    'Device on macOS',
  );
  t.deepEqual(describeUserAgent(null), {
    display_name: 'Unknown device',
    fallback_display_name: 'Unknown device',
    platform: 'unknown',
  });
});

test('the cursor is stable under inserts', async (t) => {
  const user = await newUser();
  const base = Date.now() - 86_400_000;
  const rows: Row[] = Array.from({ length: 30 }, (_, i) => ({
    id: sid(),
    createdAt: base + i * 10,
    ua: AGENTS[i % 4],
  }));
  await insertSessions(user.id, rows);
  const { jar } = await kit.tokensFor(app.web, user.email);
  const { seen } = await pageAll(jar, 7, () =>
    insertSessions(user.id, [
      { id: sid(), createdAt: Date.now(), ua: AGENTS[1] },
      { id: sid(), createdAt: base + 5, ua: AGENTS[2] }, // older than every listed row: appears at the end
    ]),
  );
  const ids = seen.map((x) => x.id);
  t.is(new Set(ids).size, ids.length, 'no duplicates');
  for (const r of rows) t.true(ids.includes(deviceIdOf(r.id)), 'no gaps');
  t.is(ids.length, 32);
});

test('bad cursors and limits: 400 with error_code and error_id; no session: 401', async (t) => {
  const user = await newUser();
  await insertSessions(
    user.id,
    Array.from({ length: 5 }, (_, i) => ({ id: sid(), createdAt: Date.now() - 10_000 - i, ua: AGENTS[0] })),
  );
  const { jar } = await kit.tokensFor(app.web, user.email);
  const first = await page(jar, { limit: '2' });
  const cursor = String(first.body.next_cursor);
  t.truthy(first.body.next_cursor);
  const [payload, sig] = cursor.split('.') as [string, string];
  const forged = Buffer.from(JSON.stringify([Date.now() + 1e9, 'x'])).toString('base64url');
  const flip = (s: string) => s.slice(0, -1) + (s.endsWith('A') ? 'B' : 'A');
  for (const bad of [flip(cursor), `${forged}.${sig}`, `${flip(payload)}.${sig}`, 'garbage', `${payload}.`]) {
    await assertUserError(t, (await page(jar, { limit: '2', cursor: bad })).res, 400);
  }
  for (const limit of ['0', '101', '-1', 'abc', '1.5']) await assertUserError(t, (await page(jar, { limit })).res, 400);
  t.is((await page(jar, { limit: '2', cursor })).res.status, 200, 'the untampered cursor works');
  await assertUserError(t, await fetch(`${d.url}/api/account/devices`), 401);
  await assertUserError(
    t,
    await fetch(`${d.url}/api/account/devices`, { headers: { cookie: 'service_session=nope' } }),
    401,
  );
});

test('signing a device out revokes it: it disappears and its tokens are inactive', async (t) => {
  const user = await newUser();
  const mine = await kit.tokensFor(app.web, user.email);
  const other = await kit.tokensFor(app.web, user.email);
  const otherId = deviceIdOf(tokenHash(other.jar.cookies.get('service_session')!));
  t.is((await introspect(other.access_token)).active, true);
  const del = (id: string, headers: Record<string, string> = {}) =>
    fetch(`${d.url}/api/account/devices/${encodeURIComponent(id)}`, {
      method: 'DELETE',
      headers: { cookie: mine.jar.header(), ...headers },
    });

  await assertUserError(t, await del(otherId, { origin: 'https://evil.example' }), 403);
  t.is((await introspect(other.access_token)).active, true, 'the cross-origin request changed nothing');

  const res = await del(otherId, { origin: new URL(d.url).origin });
  t.is(res.status, 204);
  t.is((await introspect(other.access_token)).active, false);
  t.is((await kit.refresh(other.refresh_token, app.web)).body.error, 'invalid_grant');
  const { seen } = await pageAll(mine.jar, 100);
  t.false(seen.some((x) => x.id === otherId));
  t.true(seen.some((x) => x.current));
  t.is((await introspect(mine.access_token)).active, true);
  await assertUserError(
    t,
    await fetch(`${d.url}/api/account/devices`, { headers: { cookie: other.jar.header() } }),
    401,
  );

  await assertUserError(t, await del(otherId), 404);
  await assertUserError(t, await del('unknown-device'), 404);
  // Another user's device id: 404, and it stays signed in.
  const stranger = await newUser();
  const theirs = await kit.tokensFor(app.web, stranger.email);
  await assertUserError(t, await del(deviceIdOf(tokenHash(theirs.jar.cookies.get('service_session')!))), 404);
  t.is((await introspect(theirs.access_token)).active, true);
  await assertUserError(t, await fetch(`${d.url}/api/account/devices/x`, { method: 'DELETE' }), 401);
});
