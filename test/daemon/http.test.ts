/**
 * The daemon's HTTP surface as a client sees it: health, request ids, security headers,
 * OpenAPI, and a clear error object for every kind of bad input.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { assertUserError } from '../helpers/user-errors.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { clientCredentialsToken, seed, type Seeded } from '../helpers/seed.js';
import { until } from '../helpers/poll.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let token: string;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  d = await startDaemon(db.url, db.dir, { IAM_BODY_LIMIT_BYTES: '4096' });
  token = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

const json = (body: unknown, extra: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...extra },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

test('healthz and readyz answer 200 and echo a request id', async (t) => {
  const h = await fetch(`${d.url}/healthz`);
  t.is(h.status, 200);
  t.regex(h.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  const r = await fetch(`${d.url}/readyz`, { headers: { 'X-Request-Id': 'probe-123' } });
  t.is(r.status, 200);
  t.is(r.headers.get('x-request-id'), 'probe-123');
  t.deepEqual(await r.json(), { status: 'ready', checks: { database: 'ok', migrations: 'ok' } });
});

test('the request id of a request appears in its log line', async (t) => {
  await fetch(`${d.url}/healthz`, { headers: { 'X-Request-Id': 'trace-me-42' } });
  t.true(
    await until(() => d.logs.some((l) => l.reqId === 'trace-me-42' && l.path === '/healthz' && l.status === 200), {
      timeoutMs: 5_000,
    }),
  );
});

test('a forged request id with unsafe characters is replaced', async (t) => {
  const r = await fetch(`${d.url}/healthz`, { headers: { 'X-Request-Id': 'a b<script>' } });
  t.not(r.headers.get('x-request-id'), 'a b<script>');
});

test('security headers are on every response, errors included', async (t) => {
  for (const path of ['/healthz', '/no/such/route']) {
    const r = await fetch(`${d.url}${path}`);
    t.is(r.headers.get('x-content-type-options'), 'nosniff');
    t.is(r.headers.get('x-frame-options'), 'DENY');
    t.is(r.headers.get('referrer-policy'), 'no-referrer');
    t.regex(r.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    t.is(r.headers.get('cache-control'), 'no-store');
  }
});

test('unknown route: 404 with the error object', async (t) => {
  const r = await fetch(`${d.url}/api/admin/nothing-here`);
  t.is(r.status, 404);
  const b = (await r.json()) as Record<string, string>;
  t.is(b.error, 'not_found');
  t.truthy(b.error_description);
});

test('wrong method on a known path: 405 with Allow', async (t) => {
  // Three times: a repeated request must answer the same: status, Allow and the error object.
  const allows: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await fetch(`${d.url}/healthz`, { method: 'DELETE' });
    t.is(r.status, 405);
    allows.push(r.headers.get('allow') ?? '');
    t.is(((await r.json()) as { error: string }).error, 'method_not_allowed');
  }
  t.regex(allows[0], /GET/);
  t.deepEqual(allows, [allows[0], allows[0], allows[0]]);
  t.is((await fetch(`${d.url}/healthz`)).status, 200, 'the same path with its own method still routes');
});

test('malformed JSON: 400 invalid_request, and nothing is created', async (t) => {
  const r = await fetch(`${d.url}/api/admin/tenants`, json('{"name": "x",'));
  t.is(r.status, 400);
  const b = (await r.json()) as Record<string, string>;
  t.is(b.error, 'invalid_request');
  t.regex(b.error_description, /not valid JSON/);
  const list = (await (
    await fetch(`${d.url}/api/admin/tenants`, { headers: { authorization: `Bearer ${token}` } })
  ).json()) as { tenants: { name: string }[] };
  t.false(list.tenants.some((x) => x.name === 'x'));
});

test('wrong types: 400 naming the field', async (t) => {
  const r = await fetch(`${d.url}/api/admin/tenants`, json({ name: 42 }));
  t.is(r.status, 400);
  const b = (await r.json()) as { error: string; error_description: string; details: { field: string }[] };
  t.is(b.error, 'invalid_request');
  t.regex(b.error_description, /^body\.name:/);
  t.deepEqual(
    b.details.map((x) => x.field),
    ['body.name'],
  );

  const c = await fetch(
    `${d.url}/api/admin/tenants/${s.tenantId}/clients`,
    json({ name: 'c', redirect_uris: 'https://x.example/cb' }),
  );
  t.is(c.status, 400);
  t.regex(((await c.json()) as { error_description: string }).error_description, /body\.redirect_uris/);
});

test('unknown fields and a JSON array body are refused', async (t) => {
  const r = await fetch(`${d.url}/api/admin/tenants`, json({ name: 'ok', admin: true }));
  t.is(r.status, 400);
  t.regex(((await r.json()) as { error_description: string }).error_description, /unknown field.*admin/);
  const a = await fetch(`${d.url}/api/admin/tenants`, json([1, 2]));
  t.is(a.status, 400);
});

test('a body over the limit: 413 request_too_large', async (t) => {
  const r = await fetch(`${d.url}/api/admin/tenants`, json({ name: 'x'.repeat(10_000) }));
  t.is(r.status, 413);
  t.is(((await r.json()) as { error: string }).error, 'request_too_large');
});

test('the body parser refusing a user endpoint: error_code and error_id, and the id is in the log', async (t) => {
  // The body parser runs before any route is matched: the renderer decides by the path.
  const bad = await fetch(`${d.url}/api/user/data-export`, json('{"sections": ['));
  const b = await assertUserError(t, bad, 400);
  t.is(b.error, 'invalid_request');
  t.regex(String(b.error_description), /not valid JSON/);
  const big = await fetch(`${d.url}/api/user/data-export`, json({ sections: ['x'.repeat(10_000)] }));
  const g = await assertUserError(t, big, 413);
  t.is(g.error, 'request_too_large');
  for (const id of [b.error_id, g.error_id])
    t.true(
      await until(() => d.logs.some((l) => l.error_id === id && l.msg === 'request' && l.reqId), {
        timeoutMs: 5_000,
        what: () => `error_id ${String(id)} in the request's log line`,
      }),
    );
  const none = await fetch(`${d.url}/api/account/nothing-here`);
  t.is(((await assertUserError(t, none, 404)) as { error: string }).error, 'not_found');
});

test('errors elsewhere carry no error_code, nor an error_id below 500', async (t) => {
  const r = await fetch(`${d.url}/api/admin/tenants`, json('{"name": "x",'));
  t.is(r.status, 400);
  const b = (await r.json()) as Record<string, unknown>;
  t.is(b.error_code, undefined);
  t.is(b.error_id, undefined);
});

/** The 413 body of an endpoint behind the general body parser, to compare /introspect's with. */
async function tooLargeBody(): Promise<unknown> {
  const r = await fetch(`${d.url}/api/admin/tenants`, json({ name: 'x'.repeat(10_000) }));
  return r.json();
}

const form = { 'content-type': 'application/x-www-form-urlencoded' };

test('/introspect: a declared length over the limit is a 413 with the same body as elsewhere', async (t) => {
  const r = await fetch(`${d.url}/introspect`, { method: 'POST', headers: form, body: `token=${'a'.repeat(10_000)}` });
  t.is(r.status, 413);
  t.deepEqual(await r.json(), await tooLargeBody());
  t.is(r.headers.get('x-content-type-options'), 'nosniff', 'the headers every response has');
  t.truthy(r.headers.get('x-request-id'));
});

test('/introspect: a streamed body that grows over the limit is a 413 with the same body', async (t) => {
  // Chunked, with no declared length: the limit is found while reading. The chunks are paced
  // and stop at the answer, so the daemon has read all that was sent when it closes.
  const u = new URL(d.url);
  const answer = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: '/introspect', method: 'POST', headers: form });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', (e) => {
      if (!answered) reject(e);
    });
    req.write('token=');
    let sent = 0;
    const tick = setInterval(() => {
      if (answered || sent > 20) {
        clearInterval(tick);
        return;
      }
      sent++;
      req.write('a'.repeat(1000));
    }, 30);
  });
  t.is(answer.status, 413);
  t.deepEqual(JSON.parse(answer.body), await tooLargeBody());
});

test('/introspect: the limit counts the inflated bytes of a compressed body', async (t) => {
  const small = gzipSync(`token=${'a'.repeat(10_000)}`);
  t.true(small.length < 4096, 'it is under the limit as sent');
  const r = await fetch(`${d.url}/introspect`, {
    method: 'POST',
    headers: { ...form, 'content-encoding': 'gzip' },
    body: small,
  });
  t.is(r.status, 413);
  t.deepEqual(await r.json(), await tooLargeBody());
});

test('/introspect: an unknown Content-Encoding is a 415', async (t) => {
  const r = await fetch(`${d.url}/introspect`, {
    method: 'POST',
    headers: { ...form, 'content-encoding': 'compress' },
    body: 'token=x',
  });
  t.is(r.status, 415);
  t.is(((await r.json()) as { error: string }).error, 'unsupported_media_type');
});

test('/introspect: another method is a 405 naming POST', async (t) => {
  const r = await fetch(`${d.url}/introspect`);
  t.is(r.status, 405);
  t.regex(r.headers.get('allow') ?? '', /POST/);
  t.is(((await r.json()) as { error: string }).error, 'method_not_allowed');
});

test('/introspect/ (through the one-route router) answers as /introspect (the direct path) does', async (t) => {
  const basic = 'Basic ' + Buffer.from(`${s.platform.clientId}:${s.platform.secret}`).toString('base64');
  const answers = [];
  for (const path of ['/introspect', '/introspect/']) {
    const r = await fetch(`${d.url}${path}`, {
      method: 'POST',
      headers: { ...form, authorization: basic },
      body: new URLSearchParams({ token }),
    });
    t.is(r.status, 200, path);
    t.is(r.headers.get('x-frame-options'), 'DENY', `${path}: the frame's headers`);
    const body = (await r.json()) as Record<string, unknown>;
    t.is(body.active, true, path);
    answers.push(body);
  }
  t.deepEqual(answers[1], answers[0]);
});

test('/token: its form, read ahead of koa-body, keeps the limit, the errors and a charset parameter', async (t) => {
  const basic = 'Basic ' + Buffer.from(`${s.platform.clientId}:${s.platform.secret}`).toString('base64');
  const post = (headers: Record<string, string>, body: string | Uint8Array<ArrayBuffer>) =>
    fetch(`${d.url}/token`, { method: 'POST', headers: { authorization: basic, ...headers }, body });
  const big = await post(form, `grant_type=client_credentials&pad=${'a'.repeat(10_000)}`);
  t.is(big.status, 413);
  t.deepEqual(await big.json(), await tooLargeBody());
  const zipped = await post(
    { ...form, 'content-encoding': 'gzip' },
    new Uint8Array(gzipSync('grant_type=client_credentials')),
  );
  t.is(zipped.status, 200);
  const charset = await post(
    { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    'grant_type=client_credentials',
  );
  t.is(charset.status, 200, 'through koa-body, as before');
  const twice = await post(form, 'grant_type=client_credentials&grant_type=client_credentials');
  t.is(twice.status, 400);
  t.is(((await twice.json()) as { error: string }).error, 'invalid_request');
  const bad = await post({ ...form, 'content-encoding': 'compress' }, 'grant_type=client_credentials');
  t.is(bad.status, 415);
});

test('a body of the wrong media type: 415', async (t) => {
  const r = await fetch(`${d.url}/api/admin/tenants`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain', authorization: `Bearer ${token}` },
    body: 'name=x',
  });
  t.is(r.status, 415);
  t.is(((await r.json()) as { error: string }).error, 'unsupported_media_type');
});

test('invalid path parameter: 400 naming it', async (t) => {
  const r = await fetch(`${d.url}/api/admin/tenants/bad%20id!/users`, {
    headers: { authorization: `Bearer ${token}` },
  });
  t.is(r.status, 400);
  t.regex(((await r.json()) as { error_description: string }).error_description, /^path\.tenantId/);
});

test('invalid query parameter: 400 naming it', async (t) => {
  const r = await fetch(`${d.url}/api/admin/tenants?limit=0`, { headers: { authorization: `Bearer ${token}` } });
  t.is(r.status, 400);
  t.regex(((await r.json()) as { error_description: string }).error_description, /^query\.limit/);
});

/**
 * Waits until the log lines of the requests answered so far have been read: the daemon writes
 * them to stdout in order, so once a marker request's own line is in, the earlier ones are too.
 */
async function logsCaughtUp(): Promise<void> {
  const marker = `flush-${randomUUID()}`;
  await fetch(`${d.url}/healthz`, { headers: { 'X-Request-Id': marker } });
  await until(() => d.logs.some((l) => l.reqId === marker), {
    timeoutMs: 5_000,
    what: 'the marker request in the log',
  });
}

test('no server error leaks internals: the daemon never answered 500 in this file', async (t) => {
  await logsCaughtUp();
  t.false(d.logs.some((l) => typeof l.status === 'number' && l.status >= 500));
  t.false(/unhandled error/.test(d.output()));
});

test('/openapi.json is OpenAPI 3.1 generated from the validating schemas', async (t) => {
  const r = await fetch(`${d.url}/openapi.json`);
  t.is(r.status, 200);
  interface Operation {
    requestBody: {
      content: Record<
        string,
        {
          schema: {
            required?: string[];
            properties: Record<string, { maxLength?: number }>;
            additionalProperties?: boolean;
          };
        }
      >;
    };
  }
  const doc = (await r.json()) as { openapi: string; paths: Record<string, Record<string, Operation>> };
  t.is(doc.openapi, '3.1.0');
  const create = doc.paths['/api/admin/tenants'].post;
  const schema = create.requestBody.content['application/json'].schema;
  t.deepEqual(schema.required, ['name']);
  t.is(schema.properties.name.maxLength, 200);
  t.is(schema.additionalProperties, false);
  t.truthy(doc.paths['/api/admin/tenants/{tenantId}/clients'].post);
  t.truthy(doc.paths['/readyz'].get);
  t.truthy(doc.paths['/introspect'].post, 'the introspection route is documented like the others');
});

test('secrets and tokens never reach the log', async (t) => {
  await logsCaughtUp();
  const out = d.output();
  t.false(out.includes(s.platform.secret));
  t.false(out.includes(token));
});
