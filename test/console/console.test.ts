/**
 * The operator console over HTTP against one daemon (docs/console.md): the sign-in starts the
 * code flow with the platform tenant's console client; an operator's session (an email-code
 * sign-in with that client, as the login page makes) sees the pages its role allows, a tenant
 * administrator's other tenant answers 404, a signed-in non-operator gets 403; pages refuse
 * framing and carry a nonce CSP without 'unsafe-inline'; suspend/resume (the first dangerous
 * move): an auditor's post 403, another tenant's 404, a bad CSRF token 403, a sign-in older than
 * five minutes 403 asking for a fresh one, and a done move audited under the operator's user id;
 * IAM_CONSOLE=off answers 404.
 */
import test from 'ava';
import { startConsole, type ConsoleHarness } from '../helpers/console.js';
import { startDaemon } from '../helpers/daemon.js';
import { CookieJar, get } from '../helpers/oauth.js';

let h: ConsoleHarness;
let d: ConsoleHarness['d'];
let acme = '';
let other = '';
const signIn = (email: string) => h.signIn(email);
const page = (path: string, jar?: CookieJar) => h.page(path, jar);

test.before(async () => {
  h = await startConsole();
  ({ d, acme, other } = h);
});

test.after.always(async () => {
  await h?.close();
});

test('signed out: /console sends to the sign-in, which starts the code flow with PKCE', async (t) => {
  const r = await page('/console');
  t.is(r.status, 303);
  t.is(r.headers.get('location'), '/console/sign-in');
  const s = await get(`${d.url}/console/sign-in`);
  t.is(s.status, 303);
  const to = new URL(s.headers.get('location') ?? '');
  t.is(to.pathname, '/authorize');
  t.is(to.searchParams.get('client_id'), h.consoleClient);
  t.is(to.searchParams.get('code_challenge_method'), 'S256');
  t.is(
    to.searchParams.get('redirect_uri'),
    `${new URL(d.url).origin.replace('127.0.0.1', 'localhost')}/console/callback`,
  );
  t.regex(s.headers.getSetCookie().join('\n'), /console_signin=.*HttpOnly/i);
  // A callback without this browser's state is refused.
  t.is((await page('/console/callback?state=x&code=y')).status, 400);
});

test("the callback redeems the code of this browser's session and lands on /console", async (t) => {
  const flow = new CookieJar();
  const start = await get(`${d.url}/console/sign-in`, flow);
  // The browser signs in on the login page meanwhile (here: the same session, made by the API).
  const jar = await signIn('ada@example.com');
  for (const [k, v] of flow.cookies) jar.cookies.set(k, v);
  const authorized = await get(start.headers.get('location') ?? '', jar);
  t.is(authorized.status, 302); // RFC 6749 §4.1.2
  const back = new URL(authorized.headers.get('location') ?? '');
  t.is(back.pathname, '/console/callback');
  const cb = await get(`${d.url}${back.pathname}${back.search}`, jar);
  t.is(cb.status, 303, await cb.text());
  t.is(cb.headers.get('location'), '/console');
  // The same code twice: refused (the flow cookie is spent, and so is the code).
  t.is((await get(`${d.url}${back.pathname}${back.search}`, jar)).status, 400);
});

test('a platform administrator sees every tenant; pages refuse framing under a nonce CSP', async (t) => {
  const jar = await signIn('ada@example.com');
  const r = await page('/console', jar);
  t.is(r.status, 200, r.text);
  t.is(r.headers.get('x-frame-options'), 'DENY');
  const csp = r.headers.get('content-security-policy') ?? '';
  t.regex(csp, /frame-ancestors 'none'/);
  t.regex(csp, /style-src 'nonce-/);
  t.notRegex(csp, /unsafe-inline/);
  t.notRegex(r.text, /<script/);
  t.regex(r.text, /platform administrator/);
  t.regex(r.text, /<h2>Provisioning blocked<\/h2>\n<p class="empty">None\./);
  t.regex(r.text, /<h2>Open notification states<\/h2>/);
  t.regex(r.text, /<h2>Outbox backlog<\/h2>/);
  const list = await page('/console/tenants?sort=-name', jar);
  t.is(list.status, 200);
  t.true(list.text.indexOf('>Other<') < list.text.indexOf('>Acme<'), 'sorted by name, descending');
  t.is((await page(`/console/tenants/${other}`, jar)).status, 200);
});

test("a tenant administrator sees only their tenant: another tenant's page is 404", async (t) => {
  const jar = await signIn('bob@example.com');
  const overview = await page('/console', jar);
  t.regex(overview.text, /<td>active<\/td><td>1<\/td>|<td>suspended<\/td><td>1<\/td>/, 'their one tenant');
  t.notRegex(overview.text, /Outbox backlog/, "the platform's figure is not a tenant administrator's");
  const list = await page('/console/tenants', jar);
  t.is(list.status, 200);
  t.regex(list.text, new RegExp(acme));
  t.notRegex(list.text, new RegExp(other));
  t.is((await page(`/console/tenants/${acme}`, jar)).status, 200);
  t.is((await page(`/console/tenants/${other}`, jar)).status, 404);
});

test('a signed-in person who is no operator gets the 403 page', async (t) => {
  const jar = await signIn('dave@example.com');
  const r = await page('/console', jar);
  t.is(r.status, 403);
  t.regex(r.text, /holds no operator role/);
});

/** The confirmation form of `move`, posted back as a browser would (`change` edits it first). */
const submit = (jar: CookieJar, tenantId: string, move: string, change: Record<string, string> = {}) =>
  h.submit(jar, `/console/tenants/${tenantId}/${move}`, { reason: 'test', ...change });

test('suspend and resume: roles, CSRF, step-up, and the audit names the operator', async (t) => {
  const carol = await signIn('carol@example.com');
  t.is((await page(`/console/tenants/${acme}`, carol)).status, 200, 'an auditor reads');
  const ro = await submit(carol, acme, 'suspend');
  t.is(ro.status, 403);
  t.regex(ro.text, /changes nothing/);

  const bob = await signIn('bob@example.com');
  t.is((await submit(bob, other, 'suspend')).status, 404);
  t.is((await submit(bob, acme, 'suspend', { csrf: 'forged' })).status, 403);
  // A sign-in older than five minutes: asked for a fresh one, nothing moved.
  // (Every session of Bob's: the tests of this file run at once, and another signs him in too.)
  await h.ageSignIn('bob@example.com');
  const stale = await submit(bob, acme, 'suspend');
  t.is(stale.status, 403);
  t.regex(stale.text, /\/console\/sign-in\?fresh=1/);
  const [still] = await h.ds.query<{ lifecycle_state: string }[]>('SELECT lifecycle_state FROM tenants WHERE id = ?', [
    acme,
  ]);
  t.is(still.lifecycle_state, 'active');

  const ada = await signIn('ada@example.com');
  t.is((await submit(ada, acme, 'suspend')).status, 303);
  t.is((await submit(ada, acme, 'resume')).status, 303);
  const [adaUser] = await h.ds.query<{ id: string }[]>("SELECT id FROM users WHERE email = 'ada@example.com'");
  const events = await h.ds.query<{ action: string; actor_type: string; actor_id: string }[]>(
    'SELECT action, actor_type, actor_id FROM audit_events WHERE target_id = ? AND actor_type = ? ORDER BY created_at',
    [acme, 'user'],
  );
  t.true(events.length >= 2, JSON.stringify(events));
  t.true(events.every((e) => e.actor_id === adaUser.id));
});

test("the audit log: filters and detail; a tenant administrator reads only their tenants' events", async (t) => {
  const ada = await signIn('ada@example.com');
  const all = await page('/console/audit?action=operator.add', ada);
  t.is(all.status, 200, all.text);
  t.regex(all.text, /<code>operator\.add<\/code>/);
  t.regex(all.text, /<details><summary>Detail<\/summary>/);
  t.notRegex(all.text, /<code>role\.assign<\/code>/, 'the action filter applies');
  const none = await page('/console/audit?action=no.such.action', ada);
  t.regex(none.text, /No events match these filters/);
  t.is((await page('/console/audit?cursor=forged', ada)).status, 400);

  const bob = await signIn('bob@example.com');
  const own = await page('/console/audit', bob);
  t.is(own.status, 200);
  t.notRegex(own.text, /operator\.add/, "the platform tenant's events are not a tenant administrator's");
  t.is((await page(`/console/audit?tenant=${other}`, bob)).status, 404);
});

test('IAM_CONSOLE=off: /console is 404', async (t) => {
  const off = await startDaemon(h.db.url, h.db.dir, { IAM_CONSOLE: 'off' });
  t.teardown(() => off.stop());
  t.is((await get(`${off.url}/console`)).status, 404);
  t.is((await get(`${off.url}/console/sign-in`)).status, 404);
});
