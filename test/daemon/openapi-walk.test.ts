/**
 * A walk over /openapi.json, so a route added later is covered without touching this file:
 * - every operation that requires a bearer token, client credentials or a session answers an
 *   anonymous request with an empty body 401, not the 400 of its input validation
 *   (authentication before validation: ApiRegistry.add runs `authenticate` before the guard);
 * - every route that takes a body, plus the server-rendered forms that are not in the
 *   document, answers a body that does not decode with its Content-Encoding (bad gzip, bad
 *   brotli) or an unknown Content-Encoding with a 4xx and the error object, never a 500.
 */
import test from 'ava';
import { gzipSync } from 'node:zlib';
import type { Middleware } from 'koa';
import Router from '@koa/router';
import { ApiRegistry } from '../../daemon/openapi.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { seed } from '../helpers/seed.js';

let db: TestDb;
let d: Daemon;

test.before(async () => {
  db = await createTestDatabase();
  await seed(db.url, db.dir);
  d = await startDaemon(db.url, db.dir);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

interface Operation {
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, unknown> };
}
type Doc = { paths: Record<string, Record<string, Operation>> };

const document = async (): Promise<Doc> => (await (await fetch(`${d.url}/openapi.json`)).json()) as Doc;

/** A plausible value for a path parameter: authentication comes first, so any will do. */
const dummy = (name: string) =>
  /tenant/i.test(name) ? 'ten_0000000000000000' : /operation/i.test(name) ? 'rop_0000000000000000' : 'dummy_1';
const fill = (path: string) => path.replace(/\{([A-Za-z_]+)\}/g, (_, n: string) => dummy(n));

const AUTHENTICATED = new Set(['bearer', 'basic', 'cookie']);
/**
 * Operations whose every alternative needs credentials (an empty alternative `{}` means
 * optional), and the client-authenticated ones (`basic`): their `{}` is the client's
 * credentials in the form instead (client_secret_post, private_key_jwt), which an empty body
 * lacks as well.
 */
function authenticatedOps(doc: Doc): { method: string; path: string; scheme: string }[] {
  const out: { method: string; path: string; scheme: string }[] = [];
  for (const [path, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops)) {
      const alts = op.security ?? [];
      const basic = alts.some((a) => 'basic' in a);
      if (alts.length === 0 || (!basic && alts.some((a) => Object.keys(a).length === 0))) continue;
      const scheme = Object.keys(alts[0])[0];
      if (AUTHENTICATED.has(scheme)) out.push({ method, path, scheme });
    }
  return out;
}

/**
 * The `error` of an answer. The SCIM routes answer RFC 7644 §3.12's error object instead
 * (docs/scim.md), whose `status` stands for it: 400, 401 and 415 are the only ones walked here.
 */
const SCIM_CODES: Record<string, string> = {
  '400': 'invalid_request',
  '401': 'invalid_token',
  '415': 'unsupported_media_type',
};
function errorCode(body: { error?: string; schemas?: string[]; status?: string }): string | undefined {
  if (body.schemas?.includes('urn:ietf:params:scim:api:messages:2.0:Error')) return SCIM_CODES[body.status ?? ''];
  return body.error;
}

test('every authenticated operation in /openapi.json: no credentials and an empty body get 401', async (t) => {
  const ops = authenticatedOps(await document());
  // The walk must see the surfaces it is meant to cover, or it proves nothing.
  for (const scheme of ['bearer', 'basic', 'cookie'])
    t.true(
      ops.some((o) => o.scheme === scheme),
      `the document has ${scheme} routes`,
    );
  t.true(ops.filter((o) => o.path.startsWith('/api/admin/')).length >= 15, 'the admin API is in the walk');
  const wrong: string[] = [];
  for (const { method, path } of ops) {
    const withBody = method !== 'get' && method !== 'delete';
    for (const type of withBody ? ['application/json', 'application/x-www-form-urlencoded'] : [undefined]) {
      const r = await fetch(`${d.url}${fill(path)}`, {
        method: method.toUpperCase(),
        headers: type ? { 'content-type': type } : {},
        ...(withBody ? { body: type === 'application/json' ? '{}' : '' } : {}),
        redirect: 'manual',
      });
      // The error object, or for the server-rendered account page its signed-out page.
      const html = (r.headers.get('content-type') ?? '').startsWith('text/html');
      const body = (html ? { error: 'page' } : await r.json().catch(() => ({}))) as { error?: string };
      if (r.status !== 401 || !errorCode(body)) wrong.push(`${method.toUpperCase()} ${path} (${type}): ${r.status}`);
    }
  }
  t.deepEqual(wrong, []);
});

test('a route declaring bearer, basic or cookie security without an authenticate middleware is refused', (t) => {
  const api = new ApiRegistry();
  const router = new Router();
  const handler: Middleware = (ctx) => {
    ctx.body = {};
  };
  for (const security of ['bearer', 'basic', 'cookie'] as const)
    t.throws(
      () => api.add(router, { method: 'get', path: '/x', summary: 'x', tags: [], security, responses: {} }, handler),
      { message: /needs spec\.authenticate/ },
    );
  t.notThrows(() =>
    api.add(router, { method: 'get', path: '/y', summary: 'y', tags: [], security: 'none', responses: {} }, handler),
  );
});

/** The forms and routes that take a body but are not in /openapi.json (daemon/app.ts's routers). */
const FORM_ROUTES = [
  '/login/email-code',
  '/login/verify',
  '/authorize/consent',
  '/account/devices/dummy_1/sign-out',
  '/account/consents/dummy_1/withdraw',
  '/account/passkeys/dummy_1/rename',
  '/account/passkeys/dummy_1/delete',
  '/account/reauth/send',
  '/account/reauth/verify',
  '/account/profile/name',
  '/account/email/send',
  '/account/email/confirm',
  '/introspect',
];

const BAD_BODIES: { name: string; encoding: string; body: Buffer; status: number[] }[] = [
  { name: 'not gzip', encoding: 'gzip', body: Buffer.from('this is not gzip data at all'), status: [400] },
  {
    name: 'truncated gzip',
    encoding: 'gzip',
    body: gzipSync('token=abc&x=1'.repeat(20)).subarray(0, 20),
    status: [400],
  },
  { name: 'not deflate', encoding: 'deflate', body: Buffer.from('this is not deflate data'), status: [400] },
  { name: 'not brotli', encoding: 'br', body: Buffer.from([0xff, 0xff, 0xff, 0xff, 0x00, 0x12, 0x34]), status: [400] },
  { name: 'unknown encoding', encoding: 'compress', body: Buffer.from('token=abc'), status: [415] },
  { name: 'nonsense encoding', encoding: 'gzip, ;;', body: Buffer.from('token=abc'), status: [415] },
];

test('a body that does not decode, or an unknown Content-Encoding, gets 400 or 415 on every route', async (t) => {
  const doc = await document();
  const targets = new Set(FORM_ROUTES);
  for (const [path, ops] of Object.entries(doc.paths))
    for (const method of Object.keys(ops)) if (method === 'post') targets.add(fill(path));
  for (const [path, ops] of Object.entries(doc.paths))
    for (const method of Object.keys(ops))
      if (method === 'put' || method === 'patch') targets.add(`${method.toUpperCase()} ${fill(path)}`);
  t.true(targets.size > 20, 'the walk found the POST routes');
  t.true(targets.has('/token') && targets.has('/revoke') && targets.has('/api/user/data-export'));

  const wrong: string[] = [];
  for (const target of targets) {
    const [method, path] = target.includes(' ') ? target.split(' ') : ['POST', target];
    for (const type of ['application/json', 'application/x-www-form-urlencoded'])
      for (const bad of BAD_BODIES) {
        const r = await fetch(`${d.url}${path}`, {
          method,
          headers: { 'content-type': type, 'content-encoding': bad.encoding },
          body: new Uint8Array(bad.body),
          redirect: 'manual',
        });
        const raw = (await r.json().catch(() => ({}))) as { error?: string };
        const body = { error: errorCode(raw) };
        const expected = bad.status[0] === 415 ? 'unsupported_media_type' : 'invalid_request';
        // /introspect reads only a form (RFC 7662 §2.1) and leaves any other body unread, so its
        // encoding is never looked at: that request is refused for what it is, still a 4xx.
        const unread = path === '/introspect' && type !== 'application/x-www-form-urlencoded';
        const ok = unread
          ? r.status >= 400 && r.status < 500 && typeof body.error === 'string'
          : bad.status.includes(r.status) && body.error === expected;
        if (!ok) wrong.push(`${method} ${path} ${type} ${bad.name}: ${r.status} ${body.error}`);
      }
  }
  t.deepEqual(wrong, []);
  t.false(
    d.logs.some((l) => l.msg === 'unhandled error'),
    'the daemon logged no unhandled error',
  );
});

test('a valid gzip body still decodes (the refusals above are about the bytes, not the header)', async (t) => {
  const r = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip' },
    body: gzipSync('grant_type=client_credentials&client_id=nobody'),
  });
  t.is(r.status, 401, 'read, and refused for the unknown client');
  t.is(((await r.json()) as { error: string }).error, 'invalid_client');
});
