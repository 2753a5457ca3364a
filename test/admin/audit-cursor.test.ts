/**
 * Signed cursors (shared/cursor.ts): GET /api/admin/audit and GET /api/account/devices accept
 * only a cursor they returned. A made-up one, a tampered one, or one from the other endpoint is
 * 400 invalid_request (with error_code and error_id on the user-facing devices endpoint); a real
 * cursor still pages.
 */
import test from 'ava';
import type { TestDb } from '../helpers/db.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { clientCredentialsToken } from '../helpers/seed.js';
import { loginKit } from '../helpers/login.js';
import { type App, type CookieJar } from '../helpers/oauth.js';
import { assertUserError } from '../helpers/user-errors.js';
import { startLoginEnv, stopLoginEnv } from '../helpers/env.js';
import { api } from '../helpers/api.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let token: string;
let jar: CookieJar;
const kit = loginKit(
  () => d.url,
  () => sink,
);

test.before(async () => {
  ({ db, d, app, sink } = await startLoginEnv());
  token = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);
  // Three sessions of one user: three devices, so a page of one has a next cursor.
  for (let i = 0; i < 3; i++) jar = await kit.signIn(app.web.clientId, app.user.email);
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

const audit = (q: Record<string, string>) =>
  api<{ events: { id: string }[]; next_cursor?: string; error?: string; error_description?: string }>(
    d.url,
    'GET',
    `/api/admin/audit?${new URLSearchParams(q)}`,
    { token },
  );

const devices = (q: Record<string, string>) =>
  fetch(`${d.url}/api/account/devices?${new URLSearchParams(q)}`, { headers: { cookie: jar.header() } });

/** The unsigned cursor the audit endpoint used to accept: base64url JSON of (created_at, id). */
const unsigned = (createdAt: number, id: string) => Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');

test('a forged or tampered audit cursor is 400 invalid_request; a real one pages', async (t) => {
  const first = await audit({ limit: '1' });
  t.is(first.status, 200);
  const cursor = first.body.next_cursor!;
  t.truthy(cursor);
  const [payload, mac] = cursor.split('.');
  const forgedPayload = unsigned(Date.now() + 86_400_000, 'zzzz');
  const devicesCursor = (await (await devices({ limit: '1' })).json()) as { next_cursor: string };
  t.truthy(devicesCursor.next_cursor);
  for (const bad of [
    unsigned(Date.now(), 'x'), // the old unsigned form, made up
    forgedPayload,
    `${forgedPayload}.${mac}`, // another position under a real MAC
    `${payload}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
    `${payload}.`,
    devicesCursor.next_cursor, // signed, but by the devices endpoint
  ]) {
    const r = await audit({ limit: '1', cursor: bad });
    t.is(r.status, 400, bad);
    t.is(r.body.error, 'invalid_request');
    t.regex(r.body.error_description!, /^query\.cursor: /);
  }
  const second = await audit({ limit: '1', cursor });
  t.is(second.status, 200);
  t.is(second.body.events.length, 1);
  t.not(second.body.events[0].id, first.body.events[0].id);
});

test('a forged devices cursor is 400 with error_code and error_id; a real one pages', async (t) => {
  const first = (await (await devices({ limit: '1' })).json()) as { devices: { id: string }[]; next_cursor: string };
  const auditCursor = (await audit({ limit: '1' })).body.next_cursor!;
  const [, mac] = first.next_cursor.split('.');
  for (const bad of [
    unsigned(Date.now(), 'x'),
    `${unsigned(Date.now() + 86_400_000, 'zzzz')}.${mac}`,
    auditCursor, // signed, but by the audit endpoint
  ]) {
    await assertUserError(t, await devices({ limit: '1', cursor: bad }), 400);
  }
  const r = await devices({ limit: '1', cursor: first.next_cursor });
  t.is(r.status, 200);
  const next = (await r.json()) as { devices: { id: string }[] };
  t.is(next.devices.length, 1);
  t.not(next.devices[0].id, first.devices[0].id);
});
