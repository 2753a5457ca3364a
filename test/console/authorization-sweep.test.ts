/**
 * The console's authorization, swept over EVERY console route of the application (docs/console.md,
 * "Authorization"): the list comes from the route table (`buildApp(…).api.routes`), so a page
 * added later is covered without touching this file. Against one daemon:
 *
 * (a) a route under /console/tenants/:tenantId, with Bob (tenant administrator of acme) naming
 *     the other tenant and made-up ids for the rest: 404, GET and POST alike (another tenant
 *     answers like an unknown one, never 403), even with a valid CSRF token of his session;
 * (b) every form post by Carol (auditor) naming acme, with a valid CSRF token of her session:
 *     403 "Read only", whatever sub-resource ids it names (the guard comes before any lookup);
 * (c) a platform-level route (no :tenantId) other than the overview, the tenants list and the
 *     audit log (which scope themselves to the tenant administrator's tenants): Bob's GET 404,
 *     his POST 403 or 404.
 *
 * The sign-in and callback are the routes a signed-out browser uses: left out.
 */
import test from 'ava';
import { buildApp } from '../../daemon/app.js';
import { standIns } from '../helpers/stand-ins.js';
import { OPERATORS, startConsole, type ConsoleHarness } from '../helpers/console.js';
import type { CookieJar } from '../helpers/oauth.js';

/** Routes of a browser not signed in yet. */
const SIGN_IN = new Set(['/console/sign-in', '/console/callback']);
/** Platform-level pages a tenant administrator reads too, scoped to their tenants. */
const SCOPED_FOR_TENANT_ADMIN = new Set(['GET /console', 'GET /console/tenants', 'GET /console/audit']);
const MADE_UP = 'nosuch_sweep';

interface ConsoleRoute {
  method: string;
  path: string;
}

const routes: ConsoleRoute[] = buildApp(standIns())
  .api.routes.filter((r) => (r.path === '/console' || r.path.startsWith('/console/')) && !SIGN_IN.has(r.path))
  .map((r) => ({ method: r.method.toUpperCase(), path: r.path }));

/** The route's path with `tenantId` for :tenantId and a made-up id for every other parameter. */
const fill = (path: string, tenantId: string) =>
  path.replace(/:(\w+)/g, (_, name: string) => (name === 'tenantId' ? tenantId : MADE_UP));

const underTenant = (r: ConsoleRoute) => r.path.includes(':tenantId');

let h: ConsoleHarness;
let bob: CookieJar;
let carol: CookieJar;
let bobCsrf = '';
let carolCsrf = '';

test.before(async () => {
  // Every route is posted to: more form posts than one address's default budget a minute.
  h = await startConsole({ IAM_THROTTLE_IP_FORM_POSTS: '1000000' });
  bob = await h.signIn(OPERATORS.bob);
  carol = await h.signIn(OPERATORS.carol);
  bobCsrf = await h.csrf(bob, `/console/tenants/${h.acme}/suspend`);
  carolCsrf = await h.csrf(carol, `/console/tenants/${h.acme}/suspend`);
});

test.after.always(async () => {
  await h?.close();
});

/** One request as the route's method: a GET, or a form post carrying `csrf`. */
async function call(jar: CookieJar, method: string, path: string, csrf: string) {
  if (method === 'GET') return h.page(path, jar);
  return h.post(jar, path, { csrf, confirm: MADE_UP, reason: 'sweep' });
}

/** `METHOD path: status` for each route whose answer is not what `ok` accepts. */
async function sweep(
  list: ConsoleRoute[],
  ask: (r: ConsoleRoute) => Promise<{ status: number; text: string }>,
  ok: (r: ConsoleRoute, a: { status: number; text: string }) => boolean,
) {
  const wrong: string[] = [];
  for (const r of list) {
    const a = await ask(r);
    if (!ok(r, a)) wrong.push(`${r.method} ${r.path}: ${a.status}`);
  }
  return wrong;
}

/** A console page (not the router's bare 404 for a path it does not serve). */
const consolePage = (text: string) => /<title>[^<]* · Console<\/title>/.test(text);

test('the sweep sees the console routes of the route table, the suspend route among them', (t) => {
  t.true(routes.length > 5, JSON.stringify(routes));
  t.true(routes.some((r) => r.method === 'POST' && r.path === '/console/tenants/:tenantId/suspend'));
  t.true(
    routes.some((r) => r.method === 'POST' && !underTenant(r)),
    'a platform-level form is swept too',
  );
  t.deepEqual(
    routes.filter((r) => fill(r.path, 'x').includes(':')),
    [],
    'every parameter is filled',
  );
});

test('(a) a tenant administrator naming another tenant gets 404 on every tenant route, GET and POST', async (t) => {
  const list = routes.filter(underTenant);
  t.true(list.length > 2);
  const wrong = await sweep(
    list,
    (r) => call(bob, r.method, fill(r.path, h.other), bobCsrf),
    (_r, a) => a.status === 404 && consolePage(a.text),
  );
  t.deepEqual(wrong, []);
});

test('(b) every form post of an auditor is 403, whatever ids it names', async (t) => {
  const list = routes.filter((r) => r.method !== 'GET');
  t.true(list.length > 1);
  const wrong = await sweep(
    list,
    (r) => call(carol, r.method, fill(r.path, h.acme), carolCsrf),
    (_r, a) => a.status === 403 && /changes nothing/.test(a.text),
  );
  t.deepEqual(wrong, []);
});

test("(c) the platform's own pages are 404 to a tenant administrator, and their forms 403 or 404", async (t) => {
  const list = routes.filter((r) => !underTenant(r) && !SCOPED_FOR_TENANT_ADMIN.has(`${r.method} ${r.path}`));
  t.true(list.some((r) => r.path === '/console/operators'));
  const wrong = await sweep(
    list,
    (r) => call(bob, r.method, fill(r.path, h.acme), bobCsrf),
    (r, a) => (r.method === 'GET' ? a.status === 404 : a.status === 403 || a.status === 404) && consolePage(a.text),
  );
  t.deepEqual(wrong, []);
});
