/**
 * The console's tenant moves against one daemon (docs/console.md, "Tenants"): "Create tenant" is a
 * platform administrator's (404 for a tenant administrator, 403 for an auditor's post) and ends
 * with an active tenant, audited under the operator's user id; a blank name is shown beside the
 * field; the list filters by state and name; the summary shows the provisioning steps; retry on a
 * tenant not blocked is the service's 409; offboard needs the tenant id typed (400 otherwise, and
 * nothing moves) and is refused to a tenant administrator of the tenant.
 */
import test from 'ava';
import { OPERATORS, startConsole, type ConsoleHarness } from '../helpers/console.js';
import { until } from '../helpers/poll.js';
import { activeTenant } from '../helpers/seed.js';

let h: ConsoleHarness;

test.before(async () => {
  h = await startConsole();
});

test.after.always(async () => {
  await h?.close();
});

const stateOf = async (id: string) =>
  (await h.ds.query<{ lifecycle_state: string }[]>('SELECT lifecycle_state FROM tenants WHERE id = ?', [id]))[0]
    ?.lifecycle_state;
const userId = async (email: string) =>
  (await h.ds.query<{ id: string }[]>('SELECT id FROM users WHERE email = ? AND tenant_id = ?', [email, h.platform]))[0]
    .id;

test("create tenant: a platform administrator's move, ending in an active tenant audited under their id", async (t) => {
  const bob = await h.signIn(OPERATORS.bob);
  t.is((await h.page('/console/tenants/new', bob)).status, 404, "a tenant administrator: not the platform's page");
  t.notRegex((await h.page('/console/tenants', bob)).text, /Create tenant/);
  const carol = await h.signIn(OPERATORS.carol);
  t.is((await h.submit(carol, '/console/tenants/new', { name: 'Carol Co' })).status, 403);

  const ada = await h.signIn(OPERATORS.ada);
  const list = await h.page('/console/tenants', ada);
  t.regex(list.text, /<a class="button" href="\/console\/tenants\/new">Create tenant<\/a>/);
  const blank = await h.submit(ada, '/console/tenants/new', { name: '' });
  t.is(blank.status, 400);
  t.regex(blank.text, /id="name-error"/);

  const made = await h.submit(ada, '/console/tenants/new', { name: 'Zeta Corp' });
  t.is(made.status, 303, made.text);
  const id = /^\/console\/tenants\/([^/]+)$/.exec(made.location ?? '')?.[1] ?? '';
  t.truthy(id, made.location ?? '');
  await until(async () => (await stateOf(id)) === 'active', { what: 'the new tenant active' });
  const summary = await h.page(`/console/tenants/${id}`, ada);
  t.is(summary.status, 200);
  t.regex(summary.text, /<h2>Provisioning<\/h2>/);
  t.regex(summary.text, /<dt>Status<\/dt><dd>completed<\/dd>/);
  const [ev] = await h.ds.query<{ actor_type: string; actor_id: string }[]>(
    "SELECT actor_type, actor_id FROM audit_events WHERE action = 'tenant.create' AND target_id = ?",
    [id],
  );
  t.deepEqual({ ...ev }, { actor_type: 'user', actor_id: await userId(OPERATORS.ada) });
});

test('the tenant list filters by state and name; the summary lists the provisioning steps', async (t) => {
  const ada = await h.signIn(OPERATORS.ada);
  const acme = await h.page('/console/tenants?state=active&q=acm', ada);
  t.is(acme.status, 200);
  t.regex(acme.text, />Acme</);
  t.notRegex(acme.text, />Other</);
  t.regex((await h.page('/console/tenants?q=nothing-like-this', ada)).text, /No tenant matches these filters/);
  const summary = await h.page(`/console/tenants/${h.acme}`, ada);
  t.regex(summary.text, /<caption class="sr-only">Provisioning steps<\/caption>/);
  t.regex(summary.text, /<h2>Recovery operations<\/h2>\n<p class="empty">/);
  t.regex(summary.text, /Offboard tenant…/);
  t.notRegex(summary.text, /Retry provisioning…/, 'only a blocked operation is retried');
});

test("retry provisioning: 404 for another tenant, the service's 409 when nothing is blocked", async (t) => {
  const bob = await h.signIn(OPERATORS.bob);
  t.is((await h.page(`/console/tenants/${h.other}/provisioning/retry`, bob)).status, 404);
  const csrf = await h.csrf(bob, `/console/tenants/${h.acme}/provisioning/retry`);
  t.is((await h.post(bob, `/console/tenants/${h.other}/provisioning/retry`, { csrf })).status, 404);
  const ada = await h.signIn(OPERATORS.ada);
  const r = await h.submit(ada, `/console/tenants/${h.acme}/provisioning/retry`);
  t.is(r.status, 409);
  t.regex(r.text, /not blocked|blocked/i);
});

test('offboard: typed tenant id, platform administrators only, audited', async (t) => {
  const doomed = (await activeTenant(h.services.provisioning, { name: 'Doomed' }, { type: 'system', id: 'test' })).id;
  const path = `/console/tenants/${doomed}/offboard`;

  const bob = await h.signIn(OPERATORS.bob);
  t.is((await h.page(`/console/tenants/${h.other}/offboard`, bob)).status, 404);
  const csrf = await h.csrf(bob, `/console/tenants/${h.acme}/offboard`);
  t.is((await h.post(bob, `/console/tenants/${h.other}/offboard`, { csrf, confirm: h.other })).status, 404);
  t.is(
    (await h.post(bob, `/console/tenants/${h.acme}/offboard`, { csrf, confirm: h.acme })).status,
    403,
    "the admin API's offboard is iam.platform: a tenant administrator does not offboard",
  );
  const carol = await h.signIn(OPERATORS.carol);
  t.is((await h.submit(carol, path, { confirm: doomed })).status, 403);

  const ada = await h.signIn(OPERATORS.ada);
  const form = await h.page(path, ada);
  t.regex(form.text, new RegExp(`Type the tenant id <code>${doomed}</code> to confirm`));
  const wrong = await h.submit(ada, path, { confirm: 'Doomed' });
  t.is(wrong.status, 400);
  t.is(await stateOf(doomed), 'active');
  const done = await h.submit(ada, path, { confirm: doomed, reason: 'contract ended' });
  t.is(done.status, 303, done.text);
  t.is(done.location, `/console/tenants/${doomed}`);
  t.is(await stateOf(doomed), 'pending_deletion');
  const [ev] = await h.ds.query<{ actor_id: string }[]>(
    "SELECT actor_id FROM audit_events WHERE action = 'tenant.offboard' AND target_id = ?",
    [doomed],
  );
  t.is(ev?.actor_id, await userId(OPERATORS.ada));
  t.regex((await h.page(`/console/tenants/${doomed}`, ada)).text, /<dt>Purged after \(UTC\)<\/dt>/);
});
