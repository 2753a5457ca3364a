/**
 * The body parser's depth limit (daemon/middleware/koa-body-depth.ts, docs/errors.md): a JSON
 * body nesting objects or arrays more than 64 levels deep is a 400 `invalid_request` naming
 * the limit on every endpoint, never a 500 and never the engine's stack-overflow message; a
 * body exactly 64 levels deep still reaches the route. A member named `__proto__` is refused by
 * the parser, with a message that says so.
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { clientCredentialsToken, seed, type Seeded } from '../helpers/seed.js';
import { api } from '../helpers/api.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let platform: string;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  d = await startDaemon(db.url, db.dir);
  platform = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

/** `levels` nested objects: `{"a":{"a":…{}}}`, as text (JSON.stringify would overflow first). */
const nestedObject = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
const nestedArray = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

// The body is sent as written (deep or malformed JSON); `raw` is the answer's text.
const post = (path: string, text: string, token: string | null = platform) =>
  api(d.url, 'POST', path, { raw: text, token }).then((r) => ({ ...r, raw: r.text }));

function refusedForDepth(t: import('ava').ExecutionContext, r: Awaited<ReturnType<typeof post>>) {
  t.is(r.status, 400, r.raw.slice(0, 300));
  t.is(r.body.error, 'invalid_request');
  t.regex(String(r.body.message), /more than 64 levels deep/);
  t.notRegex(r.raw, /call stack/i);
}

test('POST source-profiles with a schema nested 5,000 deep: 400 naming the limit, not a 500', async (t) => {
  const body = `{"sourceType":"csv","profileKey":"deep","displayName":"Deep","schema":${nestedObject(5000)}}`;
  refusedForDepth(t, await post(`/api/admin/field-mapping/source-profiles?tenant_id=${s.tenantId}`, body));
});

test('POST approvals with scope_json nested 5,000 deep: 400 naming the limit, no stack-overflow message', async (t) => {
  const body =
    `{"requester_subject_id":"usr_a","target_subject_id":"usr_b","requested_action":"read",` +
    `"resource_class":"mailbox","audience":"https://api.example.test","scope_json":{"x":${nestedArray(5000)}}}`;
  refusedForDepth(t, await post(`/api/admin/approvals?tenant_id=${s.tenantId}`, body));
});

test('any JSON endpoint: 50,000 nested arrays or 5,000 nested objects are a 400 before authentication, even anonymous', async (t) => {
  for (const text of [nestedArray(50_000), nestedObject(5000), `{"a":${nestedArray(65)}}`]) {
    refusedForDepth(t, await post('/api/admin/tenants', text, null));
    refusedForDepth(t, await post('/token', text, null));
  }
  t.false(
    d.logs.some((l) => l.msg === 'unhandled error'),
    'no unhandled error logged',
  );
});

test('exactly 64 levels pass the limit and reach the route (refused there for what the body is, not its depth)', async (t) => {
  const r = await post('/api/admin/tenants', nestedArray(64), null);
  t.is(r.status, 401, r.raw);
  const schema = `{"sourceType":"csv","profileKey":"deep64","displayName":"Deep","schema":${nestedObject(63)}}`;
  const ok = await post(`/api/admin/field-mapping/source-profiles?tenant_id=${s.tenantId}`, schema);
  t.is(ok.status, 201, ok.raw.slice(0, 300));
});

test('a JSON body with a __proto__ member anywhere: 400 invalid_request that says so', async (t) => {
  for (const text of ['{"__proto__":{"admin":true}}', '{"a":[{"b":{"__proto__":{}}}]}']) {
    const r = await post('/api/admin/tenants', text, null);
    t.is(r.status, 400, r.raw);
    t.is(r.body.error, 'invalid_request');
    t.regex(String(r.body.message), /member named "__proto__"/);
  }
});
