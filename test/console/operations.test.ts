/**
 * The console's operational sections against one daemon (docs/console.md, "Operations"): each
 * page 200 for a platform administrator and 404 for a tenant administrator on another tenant (page
 * and post), an auditor's posts 403; a notification state resolved through the admin API's
 * service, audited under the operator's user id; an approval step decided; a trust source polled
 * now; an agent grant narrowed and revoked; the overview's federation and job lag figures, linking to their pages.
 */
import test from 'ava';
import { buildServices, type Services } from '../../shared/container.js';
import {
  OPERATORS,
  seedAgentGrant,
  seedApproval,
  seedTrustSource,
  startConsole,
  type ConsoleHarness,
} from '../helpers/console.js';

let h: ConsoleHarness;
/** The services the daemon's routes call, on the test's own connection: to seed what they read. */
let svc: Services<undefined>;

test.before(async () => {
  h = await startConsole();
  svc = buildServices(h.ds, h.services.config, undefined, { role: 'cli' });
});

test.after.always(async () => {
  await h?.close();
});

const adaId = async () =>
  (
    await h.ds.query<{ id: string }[]>('SELECT id FROM users WHERE email = ? AND tenant_id = ?', [
      OPERATORS.ada,
      h.platform,
    ])
  )[0].id;

/** Bob's posts to `other` are 404 (page and post) whatever the path names. */
async function otherTenant404(path: (tenant: string) => string) {
  const bob = await h.signIn(OPERATORS.bob);
  const page = await h.page(path(h.other), bob);
  const csrf = await h.csrf(bob, `/console/tenants/${h.acme}/suspend`);
  const post = await h.post(bob, path(h.other), { csrf });
  return [page.status, post.status];
}

test('notifications: listed open, resolved by the operator and audited under their id', async (t) => {
  const subject = { type: 'federation_trust_source', id: 'fts_console' };
  const raised = await svc.fieldMapping.notifications.raise(h.acme, 'metadata_expiring', subject, { days: 3 });
  const otherState = await svc.fieldMapping.notifications.raise(h.other, 'metadata_expired', subject);
  const id = raised.id!;
  const list = `/console/tenants/${h.acme}/notifications`;
  const resolve = `${list}/${id}/resolve`;

  const ada = await h.signIn(OPERATORS.ada);
  const page = await h.page(list, ada);
  t.is(page.status, 200);
  t.regex(page.text, new RegExp(`<a href="${resolve}">Resolve…</a>`));
  t.deepEqual(await otherTenant404((x) => `/console/tenants/${x}/notifications/${otherState.id!}/resolve`), [404, 404]);
  t.is((await h.page(`/console/tenants/${h.other}/notifications`, await h.signIn(OPERATORS.bob))).status, 404);
  // Another tenant's state id under Bob's own tenant: the 404 page, nothing resolved.
  const bob = await h.signIn(OPERATORS.bob);
  t.is((await h.page(`${list}/${otherState.id!}/resolve`, bob)).status, 404);
  const csrf = await h.csrf(bob, resolve);
  t.is((await h.post(bob, `${list}/${otherState.id!}/resolve`, { csrf })).status, 404);
  t.is((await svc.fieldMapping.notifications.get(h.other, otherState.id!)).state, 'open');

  const carol = await h.signIn(OPERATORS.carol);
  t.is((await h.page(resolve, carol)).status, 200, 'an auditor reads');
  t.is((await h.submit(carol, resolve)).status, 403);

  const done = await h.submit(ada, resolve);
  t.is(done.status, 303, done.text);
  t.is(done.location, list);
  t.is((await svc.fieldMapping.notifications.get(h.acme, id)).state, 'resolved');
  const [ev] = await h.ds.query<{ actor_type: string; actor_id: string }[]>(
    "SELECT actor_type, actor_id FROM audit_events WHERE action = 'notification_state.resolve' AND target_id = ?",
    [id],
  );
  t.deepEqual({ ...ev }, { actor_type: 'user', actor_id: await adaId() });
  t.notRegex((await h.page(list, ada)).text, new RegExp(id), 'no longer open');
  t.regex((await h.page(`${list}?state=resolved`, ada)).text, new RegExp(`${id}|metadata_expiring`));
});

test('approvals: a pending step decided by the operator for its approver', async (t) => {
  const r = await seedApproval(svc, h.acme, 'acme.test');
  const list = `/console/tenants/${h.acme}/approvals`;
  const decide = `${list}/${r.id}/steps/manager/decision`;
  const ada = await h.signIn(OPERATORS.ada);
  const page = await h.page(list, ada);
  t.is(page.status, 200);
  t.regex(page.text, new RegExp(`<a href="${decide}">Decide…</a>`));
  t.deepEqual(
    await otherTenant404((x) => `/console/tenants/${x}/approvals/${r.id}/steps/manager/decision`),
    [404, 404],
  );
  t.is((await h.submit(await h.signIn(OPERATORS.carol), decide, { decision: 'approve' })).status, 403);
  t.is((await h.submit(ada, decide, { decision: 'maybe' })).status, 400);
  t.is((await h.page(`${list}/${r.id}/steps/nope/decision`, ada)).status, 404);

  const done = await h.submit(ada, decide, { decision: 'approve', reason_note: 'checked' });
  t.is(done.status, 303, done.text);
  const after = await svc.approvals.get(h.acme, r.id);
  t.is(after.status, 'approved');
  t.is(after.grants.length, 1);
  const [ev] = await h.ds.query<{ actor_id: string }[]>(
    "SELECT actor_id FROM audit_events WHERE action = 'approval.step.approve' AND target_id = ?",
    [r.id],
  );
  t.is(ev?.actor_id, await adaId());
  // Decided: the service's 409 in its own words.
  t.is((await h.submit(ada, decide, { decision: 'deny' })).status, 409);
});

test('federation: sources with their polling state, "Poll now", and the overview figures', async (t) => {
  const src = await seedTrustSource(svc, h.acme, 'console-fed', 'Console Federation');
  const list = `/console/tenants/${h.acme}/federation`;
  const poll = `${list}/${src.id}/poll`;
  const ada = await h.signIn(OPERATORS.ada);
  const page = await h.page(list, ada);
  t.is(page.status, 200);
  t.regex(page.text, /Console Federation/);
  t.regex(page.text, /<td data-label="Source state">missing<\/td>/);
  t.regex(page.text, /Last poll \(UTC\)">-<br>/, 'never polled');
  t.deepEqual(await otherTenant404((x) => `/console/tenants/${x}/federation/${src.id}/poll`), [404, 404]);
  t.is((await h.page(`/console/tenants/${h.acme}/federation/fts_nothere/poll`, ada)).status, 404);
  t.is((await h.submit(await h.signIn(OPERATORS.carol), poll)).status, 403);

  const done = await h.submit(ada, poll);
  t.is(done.status, 303, done.text);
  t.is(done.location, list);
  const after = await h.page(list, ada);
  t.notRegex(after.text, /Last poll \(UTC\)">-<br>/, 'the poll is recorded on the source');
  t.regex(after.text, /<td data-label="Errors"><code>[a-z_]+<\/code> \(1 in a row\)/, 'with its error');

  const overview = await h.page('/console', ada);
  t.regex(
    overview.text,
    new RegExp(`<h2>Federation sources not healthy</h2>\\n<ul><li><a href="${list}">Acme</a>: 1</li>`),
  );
  t.regex(overview.text, /<h2>Job lag<\/h2>\n<p>Federation polls overdue by \d+ s/);
  t.regex(overview.text, new RegExp(`href="/console/tenants/${h.acme}/notifications"|<h2>Open notification states`));
});

test('agent grants: listed, narrowed through the PATCH (generation up, consent needed again), then revoked', async (t) => {
  const g = await seedAgentGrant(svc, h.acme, 'acme.test');
  const list = `/console/tenants/${h.acme}/agent-grants`;
  const narrow = `${list}/${g.grant_id}/narrow`;
  const ada = await h.signIn(OPERATORS.ada);
  const page = await h.page(list, ada);
  t.is(page.status, 200);
  t.regex(page.text, /<code>docs<\/code>: read, write/);
  t.regex(page.text, new RegExp(`<a href="${narrow}">Narrow…</a>`));
  t.deepEqual(await otherTenant404((x) => `/console/tenants/${x}/agent-grants/${g.grant_id}/narrow`), [404, 404]);
  t.is((await h.submit(await h.signIn(OPERATORS.carol), narrow, { keep: '0:read' })).status, 403);
  t.is((await h.submit(ada, narrow, { keep: '1:admin' })).status, 400, 'nothing the grant holds is kept');

  const done = await h.submit(ada, narrow, { keep: '0:read' });
  t.is(done.status, 303, done.text);
  const after = await svc.agentGrants.get(h.acme, g.grant_id);
  t.deepEqual(after.authorization_details, [{ type: 'docs', actions: ['read'] }]);
  t.is(after.generation, 2);
  t.true(after.consent_required);
  const [ev] = await h.ds.query<{ actor_id: string }[]>(
    "SELECT actor_id FROM audit_events WHERE action = 'agent_grant.update' AND target_id = ?",
    [g.grant_id],
  );
  t.is(ev?.actor_id, await adaId());
  t.regex((await h.page(list, ada)).text, /waits for the grantor’s consent/);

  // Revoke: a dangerous move (a sign-in within five minutes) with the grant id typed.
  const revoke = `${list}/${g.grant_id}/revoke`;
  t.regex((await h.page(list, ada)).text, new RegExp(`<a href="${revoke}">Revoke…</a>`));
  const aged = await h.signIn(OPERATORS.bob);
  await h.ageSignIn(OPERATORS.bob);
  t.is((await h.submit(aged, revoke, { confirm: g.grant_id })).status, 403, 'a sign-in over five minutes old');
  const bob = await h.signIn(OPERATORS.bob);
  const form = await h.page(revoke, bob);
  t.regex(form.text, /Every token of the grant stops at once/);
  t.is((await h.submit(bob, revoke, { confirm: 'aag_other' })).status, 400, 'the typed id must match');
  t.is((await svc.agentGrants.get(h.acme, g.grant_id)).status, 'active');
  const revoked = await h.submit(bob, revoke, { confirm: g.grant_id });
  t.is(revoked.status, 303, revoked.text);
  t.is(revoked.location, list);
  t.is((await svc.agentGrants.get(h.acme, g.grant_id)).status, 'revoked');
  const [rev] = await h.ds.query<{ actor_type: string; actor_id: string }[]>(
    "SELECT actor_type, actor_id FROM audit_events WHERE action = 'agent_grant.revoke' AND target_id = ?",
    [g.grant_id],
  );
  const [bobUser] = await h.ds.query<{ id: string }[]>('SELECT id FROM users WHERE email = ? AND tenant_id = ?', [
    OPERATORS.bob,
    h.platform,
  ]);
  t.deepEqual({ ...rev }, { actor_type: 'user', actor_id: bobUser.id });
  t.notRegex((await h.page(list, ada)).text, /Revoke…/, 'nothing left to revoke or narrow');
  t.is((await h.submit(bob, revoke, { confirm: g.grant_id })).status, 409, 'revoked already');
});
