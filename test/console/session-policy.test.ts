/**
 * Per-tenant session timeouts (docs/security.md, "Session timeouts") against one console
 * harness daemon: SessionService.findSession ends a session past its tenant's idle or absolute
 * timeout (times written into the session row) and keeps one within them; the admin API's GET
 * and PUT with ETag and If-Match (412); the console's form edited by a platform administrator,
 * audited under her user id, and an auditor's post 403; `iam tenants sessions set|show`.
 * Serial: the tests change the timeouts of shared tenants.
 */
import test from 'ava';
import { buildServices, type Services } from '../../shared/container.js';
import { SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';
import { api } from '../helpers/api.js';
import { iam } from '../helpers/cli.js';
import { startConsole, type ConsoleHarness } from '../helpers/console.js';
import { clientCredentialsToken, credentialsClient } from '../helpers/seed.js';

let h: ConsoleHarness;
let svc: Services<undefined>;
const actor = { type: 'system' as const, id: 'test' };

test.before(async () => {
  h = await startConsole();
  svc = buildServices(h.ds, h.services.config, undefined, { role: 'cli' });
});

test.after.always(async () => {
  await h?.close();
});

/** A fresh session of a new user of `tenantId`, and its cookie value. */
async function sessionIn(tenantId: string, email: string) {
  const user = await svc.directory.createUser(tenantId, { email, name: 'S' }, actor);
  const u = { id: user.id, tenant_id: tenantId, email, name: 'S', status: 'active' };
  const made = await svc.sessions.createSession(h.ds, {
    user: u,
    authTime: Date.now(),
    acr: '0',
    amr: ['otp'],
    clientId: 'test',
    meta: {},
  });
  const age = (createdAgo: number, seenAgo: number) =>
    h.ds.query('UPDATE sessions SET created_at = ?, last_seen_at = ? WHERE id = ?', [
      Date.now() - createdAgo,
      Date.now() - seenAgo,
      made.session.id,
    ]);
  return { cookie: made.cookie, age };
}

test.serial('findSession: idle over or max over reads as no session; within both, found', async (t) => {
  const { acme } = h;
  const s = await sessionIn(acme, 'timeouts@acme.example');
  const found = () => svc.sessions.findSession(s.cookie);
  await svc.sessionPolicy.update(acme, { idleTimeoutSeconds: 1800, maxLifetimeSeconds: 43_200 }, actor);

  await s.age(3600_000, 29 * 60_000); // an hour old, seen 29 minutes ago
  t.truthy(await found(), 'within both timeouts');
  await s.age(3600_000, 30 * 60_000); // unused for the idle timeout exactly
  t.is(await found(), undefined, 'idle over');
  await s.age(12 * 3600_000, 0); // used just now, but as old as the absolute lifetime
  t.is(await found(), undefined, 'max over');

  // No idle timeout: a session unused for a day lives on; without a policy, the service's 7 days.
  await svc.sessionPolicy.update(acme, { maxLifetimeSeconds: 43_200 }, actor);
  await s.age(3600_000, 24 * 3600_000);
  t.truthy(await found(), 'no idle timeout set');
  await svc.sessionPolicy.update(acme, {}, actor);
  await s.age(2 * 86_400_000, 0);
  t.truthy(await found(), 'no policy: two days old is within the 7 days');

  // A malformed section reads as none (it cannot end every session of the tenant).
  await h.ds.query('UPDATE tenants SET settings = ? WHERE id = ?', [
    JSON.stringify({ sessions: { idleTimeoutSeconds: 'soon', maxLifetimeSeconds: 1 } }),
    acme,
  ]);
  t.truthy(await found(), 'malformed section: no timeout');
});

test.serial('admin API: GET and PUT with ETag, If-Match 412, bounds 400, audited', async (t) => {
  const { other } = h;
  const c = await credentialsClient(h.services.directory, other, { name: 'admin', scopes: [SCOPE_TENANT_ADMIN] });
  const token = await clientCredentialsToken(h.d.url, c.clientId, c.secret);
  const path = `/api/admin/tenants/${other}/session-policy`;
  const before = await api(h.d.url, 'GET', path, { token });
  t.is(before.status, 200);
  t.deepEqual(before.body.policy, {});
  t.deepEqual(before.body.effective, { idleTimeoutSeconds: null, maxLifetimeSeconds: 604_800 });
  const etag = before.headers.get('etag')!;

  const body = { idleTimeoutSeconds: 900, maxLifetimeSeconds: 28_800 };
  const put = await api(h.d.url, 'PUT', path, { token, body, headers: { 'if-match': etag } });
  t.is(put.status, 200);
  t.deepEqual(put.body.policy, body);
  t.not(put.headers.get('etag'), etag);
  t.deepEqual((await api(h.d.url, 'GET', path, { token })).body.policy, body);

  const stale = await api(h.d.url, 'PUT', path, { token, body: {}, headers: { 'if-match': etag } });
  t.is(stale.status, 412);
  t.is(stale.body.error, 'precondition_failed');
  const long = await api(h.d.url, 'PUT', path, { token, body: { maxLifetimeSeconds: 8 * 86_400 } });
  t.is(long.status, 400);
  t.regex(long.body.error_description ?? long.body.message ?? long.text, /maxLifetimeSeconds/);
  t.deepEqual((await api(h.d.url, 'GET', path, { token })).body.policy, body, 'refusals changed nothing');
  // Another tenant's id, for this tenant's admin client: the admin API's tenant_forbidden.
  t.is((await api(h.d.url, 'GET', `/api/admin/tenants/${h.acme}/session-policy`, { token })).status, 403);

  const [ev] = await h.ds.query<{ actor_type: string; actor_id: string }[]>(
    "SELECT actor_type, actor_id FROM audit_events WHERE action = 'tenant.session_policy.update' AND tenant_id = ?",
    [other],
  );
  t.is(ev?.actor_type, 'client');
});

test.serial('console: Ada edits the timeouts (audited as her), bad input 400, Carol 403', async (t) => {
  const { other } = h;
  const form = `/console/tenants/${other}/session-policy`;
  const [ada, carol] = [await h.signIn('ada@example.com'), await h.signIn('carol@example.com')];
  const summary = await h.page(`/console/tenants/${other}`, ada);
  t.regex(summary.text, /Session timeouts/);
  t.regex(summary.text, new RegExp(`href="${form}">Edit session timeouts…`));

  t.is((await h.submit(carol, form, { idle: '10m', max: '' })).status, 403);
  const bad = await h.submit(ada, form, { idle: 'soon', max: '' });
  t.is(bad.status, 400);
  t.regex(bad.text, /Idle timeout: not a duration/);
  const short = await h.submit(ada, form, { idle: '1m', max: '' });
  t.is(short.status, 400);
  t.regex(short.text, /at least 300 seconds/);

  const ok = await h.submit(ada, form, { idle: '10m', max: '' });
  t.is(ok.status, 303);
  t.is(ok.location, `/console/tenants/${other}`);
  t.deepEqual((await svc.sessionPolicy.view(other)).view.policy, { idleTimeoutSeconds: 600 });
  t.regex((await h.page(`/console/tenants/${other}`, ada)).text, /<dt>Idle timeout<\/dt><dd>10m<\/dd>/);

  const [adaUser] = await h.ds.query<{ id: string }[]>('SELECT id FROM users WHERE email = ? AND tenant_id = ?', [
    'ada@example.com',
    h.platform,
  ]);
  const events = await h.ds.query<{ actor_type: string; actor_id: string }[]>(
    "SELECT actor_type, actor_id FROM audit_events WHERE action = 'tenant.session_policy.update' AND tenant_id = ? " +
      "AND actor_type = 'user'",
    [other],
  );
  t.deepEqual(events, [{ actor_type: 'user', actor_id: adaUser.id }]);
});

test.serial('iam tenants sessions set and show; a duration that does not parse is a usage error', async (t) => {
  const set = await iam(h.db, [
    'tenants',
    'sessions',
    'set',
    '--tenant',
    h.acme,
    '--idle',
    '30m',
    '--max',
    '12h',
    '--json',
  ]);
  t.is(set.code, 0, set.stderr);
  const out = JSON.parse(set.stdout) as { policy: unknown; effective: unknown; etag: string };
  t.deepEqual(out.policy, { idleTimeoutSeconds: 1800, maxLifetimeSeconds: 43_200 });
  t.deepEqual((await svc.sessionPolicy.view(h.acme)).view.policy, out.policy);
  const [ev] = await h.ds.query<{ actor_type: string }[]>(
    "SELECT actor_type FROM audit_events WHERE action = 'tenant.session_policy.update' AND tenant_id = ? " +
      'ORDER BY created_at DESC LIMIT 1',
    [h.acme],
  );
  t.is(ev?.actor_type, 'cli');
  const show = await iam(h.db, ['tenants', 'sessions', 'show', '--tenant', h.acme]);
  t.is(show.code, 0, show.stderr);
  t.regex(show.stdout, /idle timeout:\s+30m/);
  const bad = await iam(h.db, ['tenants', 'sessions', 'set', '--tenant', h.acme, '--idle', 'soon']);
  t.is(bad.code, 2, bad.stderr);
  t.regex(bad.stderr, /--idle: not a duration: soon/);
});
