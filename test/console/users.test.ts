/**
 * The console's Users section over HTTP against one daemon (docs/console.md, "Users"): create
 * through the form (the row exists, audited under the operator; refusals shown next to their
 * field), search; a user's page with their session, device and sign-in; disable (the user's
 * access token then introspects active:false), enable, sign out everywhere, each audited with
 * the operator's user id; delete with the typed address (a wrong one is 400 and deletes
 * nothing); a tenant administrator's other tenant and another tenant's user are 404, an
 * auditor's posts 403, a stale sign-in 403 asking for a fresh one.
 */
import test from 'ava';
import { startConsole, type ConsoleHarness } from '../helpers/console.js';
import { loginKit } from '../helpers/login.js';
import { REDIRECT, type CookieJar } from '../helpers/oauth.js';
import { credentialsClient, introspectAs, TEST_API } from '../helpers/seed.js';

let h: ConsoleHarness;
let acme = '';
let other = '';
let otherUser = '';
let web: { clientId: string; secret: string };
let rs: { clientId: string; secret: string };
const actor = { type: 'system' as const, id: 'test' };
const kit = loginKit(
  () => h.d.url,
  () => h.sink,
);

test.before(async () => {
  h = await startConsole();
  ({ acme, other } = h);
  const { directory } = h.services;
  const c = await directory.createClient(
    acme,
    { name: 'Web', redirect_uris: [REDIRECT], first_party: true, scopes: ['openid', 'email'] },
    actor,
  );
  web = { clientId: c.client.client_id, secret: c.client_secret! };
  rs = await credentialsClient(directory, acme, TEST_API);
  otherUser = (await directory.createUser(other, { email: 'ona@example.com', name: 'Ona' }, actor)).id;
});

test.after.always(async () => {
  await h?.close();
});

const users = (tenantId: string) => `/console/tenants/${tenantId}/users`;
const userIdOf = async (tenantId: string, email: string): Promise<string | undefined> =>
  (await h.ds.query<{ id: string }[]>('SELECT id FROM users WHERE tenant_id = ? AND email = ?', [tenantId, email]))[0]
    ?.id;
const statusOf = async (userId: string): Promise<string | undefined> =>
  (await h.ds.query<{ status: string }[]>('SELECT status FROM users WHERE id = ?', [userId]))[0]?.status;
const adaId = () => userIdOf(h.platform, 'ada@example.com');
const newUser = async (email: string) =>
  (await h.services.directory.createUser(acme, { email, name: email.split('@')[0] }, actor)).id;
const events = (userId: string) =>
  h.ds.query<{ action: string; actor_type: string; actor_id: string }[]>(
    'SELECT action, actor_type, actor_id FROM audit_events WHERE target_id = ? ORDER BY created_at',
    [userId],
  );
const move = (jar: CookieJar, userId: string, m: string, change: Record<string, string> = {}, tenantId = acme) =>
  h.submit(jar, `${users(tenantId)}/${userId}/${m}`, change);

test('create through the console: the user exists, audited under the operator; refusals by their field; search', async (t) => {
  const ada = await h.signIn('ada@example.com');
  const form = await h.page(`${users(acme)}/new`, ada);
  t.is(form.status, 200, form.text);
  t.regex(form.text, /<label for="email">Email<\/label>/);
  t.regex(form.text, /<label for="name">Name<\/label>/);
  t.regex(form.text, /<button type="submit">Create user<\/button>/);

  const made = await h.submit(ada, `${users(acme)}/new`, { email: 'Cleo@Example.com', name: 'Cleo Lane' });
  t.is(made.status, 303, made.text);
  const id = await userIdOf(acme, 'cleo@example.com');
  t.truthy(id);
  t.is(made.location, `${users(acme)}/${id}`);
  t.deepEqual(
    (await events(id!)).map((e) => [e.action, e.actor_type, e.actor_id]),
    [['user.create', 'user', await adaId()]],
  );

  const taken = await h.submit(ada, `${users(acme)}/new`, { email: 'cleo@example.com', name: 'Again' });
  t.is(taken.status, 409);
  t.regex(taken.text, /aria-invalid="true" aria-describedby="email-error"/);
  t.regex(taken.text, /<p id="email-error" class="error">A user with email cleo@example.com already exists/);
  t.regex(taken.text, /value="Again"/, 'what was typed is kept');
  const bad = await h.submit(ada, `${users(acme)}/new`, { email: 'not-an-address', name: 'X' });
  t.is(bad.status, 400);
  t.regex(bad.text, /<p id="email-error" class="error">must be an email address/);

  const list = await h.page(users(acme), ada);
  t.is(list.status, 200);
  t.regex(list.text, new RegExp(`<a class="button" href="${users(acme)}/new">Create user</a>`));
  t.regex(list.text, />cleo@example\.com</);
  const byName = await h.page(`${users(acme)}?q=cleo%20l`, ada);
  t.regex(byName.text, />cleo@example\.com</, 'by the start of the name');
  t.regex(byName.text, /href="[^"]+\/users\?q=cleo\+l&amp;sort=email"/, 'sorting keeps the search');
  t.regex((await h.page(`${users(acme)}?q=CLEO%40`, ada)).text, />cleo@example\.com</, 'by the start of the address');
  const none = await h.page(`${users(acme)}?q=zz-nobody`, ada);
  t.regex(none.text, /<p class="empty">No user's address or name starts with/);
});

test("disable ends the user's tokens (introspection active:false); enable and sign out everywhere; all audited", async (t) => {
  const email = 'dora@example.com';
  const id = await newUser(email);
  const tokens = await kit.tokensFor(web, email);
  t.true((await introspectAs(h.d.url, rs, tokens.access_token)).body.active);
  const ada = await h.signIn('ada@example.com');

  const page = await h.page(`${users(acme)}/${id}`, ada);
  t.is(page.status, 200, page.text);
  t.regex(page.text, /<h2>Sessions and devices<\/h2>\n<table class="stack">/, 'the session is listed');
  t.regex(page.text, new RegExp(`<td data-label="Application">Web <code>${web.clientId}</code>`));
  t.regex(page.text, /<td data-label="Method">email_code<\/td>\n?<td data-label="Result">success/);
  t.regex(page.text, /<h2>Passkeys<\/h2>\n<p class="empty">No passkey/);
  t.regex(page.text, /href="[^"]+\/disable">Disable user…<\/a>/);

  const form = await h.page(`${users(acme)}/${id}/disable`, ada);
  t.regex(form.text, /<button type="submit">Disable user<\/button>/);
  t.regex(form.text, /<a href="[^"]+">Cancel<\/a>/);
  const disabled = await move(ada, id, 'disable');
  t.is(disabled.status, 303, disabled.text);
  t.is(disabled.location, `${users(acme)}/${id}`);
  t.is(await statusOf(id), 'disabled');
  t.false((await introspectAs(h.d.url, rs, tokens.access_token)).body.active);
  const after = await h.page(`${users(acme)}/${id}`, ada);
  t.regex(after.text, /<p class="empty">No live session/);
  t.regex(after.text, /href="[^"]+\/enable">Enable user…<\/a>/);

  t.is((await move(ada, id, 'enable')).status, 303);
  t.is(await statusOf(id), 'active');
  t.is((await move(ada, id, 'sign-out')).status, 303);
  const adaUser = await adaId();
  const mine = (await events(id)).filter((e) => e.actor_type === 'user');
  t.deepEqual(mine.map((e) => [e.action, e.actor_id]).sort(), [
    ['user.disable', adaUser],
    ['user.enable', adaUser],
    ['user.sign_out', adaUser],
  ]);
});

test('delete needs the address typed: a wrong one is 400 and deletes nothing', async (t) => {
  const email = 'eve@example.com';
  const id = await newUser(email);
  const ada = await h.signIn('ada@example.com');
  const form = await h.page(`${users(acme)}/${id}/delete`, ada);
  t.regex(form.text, /<label for="confirm">Type the user&#39;s email address <code>eve@example\.com<\/code>/);
  const wrong = await move(ada, id, 'delete', { confirm: 'someone@example.com' });
  t.is(wrong.status, 400);
  t.regex(wrong.text, /nothing was done/);
  t.is(await statusOf(id), 'active');
  const done = await move(ada, id, 'delete', { confirm: 'EVE@example.com ' });
  t.is(done.status, 303, done.text);
  t.is(done.location, users(acme));
  t.is(await statusOf(id), undefined);
  const adaUser = await adaId();
  t.true((await events(id)).some((e) => e.action === 'user.delete' && e.actor_id === adaUser));
  t.is((await h.page(`${users(acme)}/${id}`, ada)).status, 404);
});

test("a tenant administrator: another tenant's users, user and forms are 404; a stale sign-in is 403", async (t) => {
  const bob = await h.signIn('bob@example.com');
  t.is((await h.page(users(acme), bob)).status, 200);
  for (const path of [
    users(other),
    `${users(other)}/new`,
    `${users(other)}/${otherUser}`,
    `${users(other)}/${otherUser}/disable`,
    `${users(acme)}/${otherUser}`,
    `${users(acme)}/${otherUser}/delete`,
    `${users(acme)}/no-such-user`,
  ])
    t.is((await h.page(path, bob)).status, 404, path);
  const csrf = await h.csrf(bob, `${users(acme)}/new`);
  t.is((await h.post(bob, `${users(other)}/${otherUser}/disable`, { csrf })).status, 404);
  t.is((await h.post(bob, `${users(other)}/new`, { csrf, email: 'x@example.com', name: 'X' })).status, 404);
  t.is((await h.post(bob, `${users(acme)}/${otherUser}/disable`, { csrf })).status, 404, "another tenant's user");
  t.is(await statusOf(otherUser), 'active');

  // A sign-in older than five minutes: asked for a fresh one, nothing moved.
  const id = await newUser('fay@example.com');
  await h.ageSignIn('bob@example.com');
  const stale = await move(bob, id, 'disable');
  t.is(stale.status, 403);
  t.regex(stale.text, /\/console\/sign-in\?fresh=1/);
  t.is(await statusOf(id), 'active');
});

test('an auditor reads the users but every post is 403', async (t) => {
  const carol = await h.signIn('carol@example.com');
  const id = await newUser('gil@example.com');
  t.is((await h.page(users(acme), carol)).status, 200);
  const page = await h.page(`${users(acme)}/${id}`, carol);
  t.is(page.status, 200);
  t.notRegex(page.text, /Disable user…/, 'no move is offered to a reader');
  const csrf = await h.csrf(carol, `${users(acme)}/new`);
  for (const [path, fields] of [
    [`${users(acme)}/new`, { email: 'hal@example.com', name: 'Hal' }],
    [`${users(acme)}/${id}/disable`, {}],
    [`${users(acme)}/${id}/delete`, { confirm: 'gil@example.com' }],
    [`${users(acme)}/no-such-user/sign-out`, {}],
  ] as const) {
    const r = await h.post(carol, path, { csrf, ...fields });
    t.is(r.status, 403, path);
    t.regex(r.text, /changes nothing/);
  }
  t.is(await statusOf(id), 'active');
  t.is(await userIdOf(acme, 'hal@example.com'), undefined);
});
