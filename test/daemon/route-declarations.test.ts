/**
 * The route declarations of daemon/route-declarations.ts, checked on the registry itself:
 * every bearer route of the built application declares its tenant binding, and a route that
 * declares none (or one its schemas cannot satisfy) is refused when the application is built,
 * so the daemon does not start (docs/architecture.md, "Route declarations").
 */
import test from 'ava';
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { buildApp } from '../../daemon/app.js';
import { standIns } from '../helpers/stand-ins.js';
import { ApiRegistry, type RouteSpec } from '../../daemon/openapi.js';
import { TenantQuery } from '../../daemon/route-declarations.js';

const handler: Middleware = (ctx) => {
  ctx.body = {};
};
const authenticate: Middleware = async (_ctx, next) => {
  await next();
};
const bearerSpec = (extra: Partial<RouteSpec>): RouteSpec => ({
  method: 'get',
  path: '/api/admin/things/:tenantId',
  summary: 'x',
  tags: [],
  security: 'bearer',
  authenticate,
  responses: {},
  ...extra,
});

test('every bearer route of the application declares its tenant binding', (t) => {
  const { api } = buildApp(standIns());
  const bearer = api.routes.filter((r) => r.security === 'bearer');
  t.true(bearer.length > 40, 'the bearer routes were found');
  t.deepEqual(
    bearer.filter((r) => r.tenant === undefined).map((r) => `${r.method} ${r.path}`),
    [],
  );
});

test('a bearer route without a tenant binding is refused when the application is built', (t) => {
  const api = new ApiRegistry();
  t.throws(() => api.add(new Router(), bearerSpec({}), handler), { message: /declares its tenant binding/ });
  t.notThrows(() =>
    api.add(
      new Router(),
      bearerSpec({ tenant: { path: 'tenantId' }, params: z.strictObject({ tenantId: z.string() }) }),
      handler,
    ),
  );
});

test('a binding its schemas cannot satisfy is refused too', (t) => {
  const api = new ApiRegistry();
  const add = (extra: Partial<RouteSpec>) => () => api.add(new Router(), bearerSpec(extra), handler);
  t.throws(add({ tenant: { path: 'tenantId' }, params: z.strictObject({ id: z.string() }) }), {
    message: /path parameter tenantId/,
  });
  t.throws(add({ tenant: 'query', query: z.strictObject({ limit: z.string().optional() }) }), {
    message: /needs tenant_id in spec\.query/,
  });
  t.throws(add({ tenant: 'token', security: 'none', authenticate: undefined }), { message: /needs bearer security/ });
  t.notThrows(add({ path: '/api/admin/others', tenant: 'query', query: TenantQuery }));
});

test('a route under an area of another error style is refused', (t) => {
  const api = new ApiRegistry();
  api.area('/api/user', 'user');
  const spec = (errors?: 'user') => ({
    ...bearerSpec({ tenant: 'token' }),
    path: '/api/user/x',
    ...(errors ? { errors } : {}),
  });
  t.throws(() => api.add(new Router(), spec(), handler), { message: /error style is 'user'/ });
  t.notThrows(() => api.add(new Router(), spec('user'), handler));
});

test('direct dispatch: an exact route runs its chain without the router, unless an earlier route matches its path too', async (t) => {
  const api = new ApiRegistry();
  const served: string[] = [];
  const page =
    (name: string): Middleware =>
    (ctx) => {
      served.push(name);
      ctx.body = name;
    };
  const spec = (path: string): RouteSpec => ({
    method: 'get',
    path,
    summary: 'x',
    tags: [],
    security: 'none',
    responses: {},
    document: false,
  });
  const first = new Router();
  api.add(first, spec('/things/:id'), page('param'));
  const second = new Router();
  api.add(second, spec('/exact'), page('exact'));
  api.add(second, spec('/things/new'), page('shadowed'));
  const root = new Router();
  for (const r of [first, second]) root.use(r.routes());
  const routed = new Set<string>();
  // The router's own dispatch, observed: it marks what it matched in ctx.matched.
  const run = async (path: string) => {
    const ctx = {
      method: 'GET',
      path,
      body: undefined as unknown,
      state: {},
      request: {},
    } as unknown as Parameters<Middleware>[0];
    await api.direct(root, [first, second])(ctx, () => Promise.resolve());
    if ((ctx as { matched?: unknown[] }).matched) routed.add(path);
    return ctx.body;
  };
  t.is(await run('/exact'), 'exact');
  t.false(routed.has('/exact'), 'served without the router');
  // /things/:id is registered first and matches /things/new: the router decides, as it always did.
  t.is(await run('/things/new'), 'param');
  t.true(routed.has('/things/new'));
  t.deepEqual(served, ['exact', 'param']);
});
