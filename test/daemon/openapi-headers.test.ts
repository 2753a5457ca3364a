/**
 * Header parameters in /openapi.json: a route declares the headers it reads in its route spec
 * (RouteSpec.headers), with the middleware that reads them, so every route that accepts
 * `Idempotency-Key` lists it as a parameter `in: header` (interface specification,
 * "Endpoints": source profile create, operational notification state resolve, tenant
 * suspend, tenant-recovery reactivate, federation trust source update).
 */
import test from 'ava';
import Router from '@koa/router';
import Koa from 'koa';
import { z } from 'zod';
import type { AppState } from '../../daemon/context.js';
import { ApiRegistry } from '../../daemon/openapi.js';
import { openApiDocumentOf } from '../../daemon/openapi-file.js';
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

interface Parameter {
  name: string;
  in: string;
  required: boolean;
  schema: { type?: string; maxLength?: number };
}
type Doc = { paths: Record<string, Record<string, { parameters?: Parameter[] }>> };

/** The spec's list, plus the routes of ours that accept the key too (resume, provisioning retry). */
const IDEMPOTENT: [string, string][] = [
  ['post', '/api/admin/field-mapping/source-profiles'],
  ['post', '/api/admin/field-mapping/operational-notification-states/{stateId}/resolve'],
  ['post', '/api/admin/tenants/{id}/lifecycle/suspend'],
  ['post', '/api/admin/platform/control-plane/tenant-recovery/{operationId}/reactivate'],
  ['put', '/api/admin/field-mapping/federation-trust-sources/{id}'],
  ['post', '/api/admin/tenants/{id}/lifecycle/resume'],
  ['post', '/api/admin/tenants/{id}/provisioning/retry'],
  // Offboarding (docs/directory.md, "Tenants").
  ['post', '/api/admin/tenants/{tenantId}/offboard'],
  ['post', '/api/admin/tenants/{tenantId}/restore'],
];

test('Idempotency-Key is declared as an optional header parameter on every operation that accepts it', async (t) => {
  const doc = (await (await fetch(`${d.url}/openapi.json`)).json()) as Doc;
  for (const [method, path] of IDEMPOTENT) {
    const params = doc.paths[path]?.[method]?.parameters ?? [];
    const key = params.find((p) => p.name === 'Idempotency-Key');
    t.truthy(key, `${method.toUpperCase()} ${path} declares Idempotency-Key`);
    t.is(key?.in, 'header', `${path}: in header`);
    t.is(key?.required, false, `${path}: optional`);
    t.is(key?.schema.type, 'string', `${path}: a string`);
    t.is(key?.schema.maxLength, 255, `${path}: at most 255 characters`);
  }
  // Nowhere else: a route that does not take the key does not claim to.
  const declaring = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => (op.parameters ?? []).some((p) => p.name === 'Idempotency-Key'))
      .map(([method]) => `${method} ${path}`),
  );
  t.deepEqual(declaring.sort(), IDEMPOTENT.map(([m, p]) => `${m} ${p}`).sort());
});

test('the document `npm run lint:openapi` writes without a server is the one the daemon serves', async (t) => {
  const served = (await (await fetch(`${d.url}/openapi.json`)).json()) as unknown;
  t.deepEqual(served, openApiDocumentOf({ IAM_ISSUER: d.url }));
});

test('ETag is declared on the answers that carry it', async (t) => {
  const doc = (await (await fetch(`${d.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
  };
  const user = doc.paths['/api/admin/tenants/{tenantId}/users/{userId}'];
  t.truthy(user.get.responses['200'].headers?.ETag);
  t.truthy(user.patch.responses['200'].headers?.ETag);
  t.truthy(doc.paths['/api/admin/agent-grants/{id}'].get.responses['200'].headers?.ETag);
});

test('If-Match is declared as an optional header parameter on the agent grant update, which answers 412 for it', async (t) => {
  const doc = (await (await fetch(`${d.url}/openapi.json`)).json()) as Doc & {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  const op = doc.paths['/api/admin/agent-grants/{id}'].patch;
  const ifMatch = op.parameters?.find((p) => p.name === 'If-Match');
  t.is(ifMatch?.in, 'header');
  t.is(ifMatch?.required, false);
  t.truthy(op.responses['412']);
});

test('a declared header runs its middleware on the route and appears in the document', async (t) => {
  const api = new ApiRegistry();
  const router = new Router<AppState>();
  const seen: string[] = [];
  api.add(
    router,
    {
      method: 'post',
      path: '/things/:id',
      summary: 'a thing',
      tags: ['test'],
      security: 'none',
      params: z.object({ id: z.string() }),
      headers: [
        {
          name: 'X-Trace',
          description: 'a trace id',
          required: true,
          schema: z.string().max(10),
          middleware: async (ctx, next) => {
            seen.push(ctx.get('X-Trace'));
            await next();
          },
        },
      ],
      responses: { 204: { description: 'done' } },
    },
    (ctx) => {
      ctx.status = 204;
    },
  );
  const app = new Koa();
  app.use(router.routes());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const { port } = server.address() as { port: number };
    const r = await fetch(`http://127.0.0.1:${port}/things/a`, { method: 'POST', headers: { 'x-trace': 'abc' } });
    t.is(r.status, 204);
    t.deepEqual(seen, ['abc']);
  } finally {
    server.close();
  }
  const op = (api.document('http://x', '0') as Doc).paths['/things/{id}'].post;
  t.deepEqual(
    op.parameters?.map((p) => [p.name, p.in, p.required]),
    [
      ['id', 'path', true],
      ['X-Trace', 'header', true],
    ],
  );
});
