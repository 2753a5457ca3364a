/**
 * Inviting a user (docs/directory.md, "Users: invite"; docs/console.md, "Users") against one
 * console daemon: create with "Send a sign-in link by email" mails the user a link that, followed,
 * opens the tenant's login page with the address filled in, and holds no secret; the audit names
 * the operator; the user page's "Send a sign-in link…" and the admin API's POST …/invite (202)
 * send it again, in the user's language; an auditor's post is 403; a disabled user is refused
 * (409 user_disabled) and nothing is mailed or audited.
 */
import test from 'ava';
import { SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';
import { api } from '../helpers/api.js';
import { startConsole, type ConsoleHarness } from '../helpers/console.js';
import { CookieJar, get } from '../helpers/oauth.js';
import { clientCredentialsToken, credentialsClient } from '../helpers/seed.js';

let h: ConsoleHarness;
let acme = '';
const actor = { type: 'system' as const, id: 'test' };

test.before(async () => {
  h = await startConsole();
  ({ acme } = h);
});

test.after.always(async () => {
  await h?.close();
});

const usersOf = () => `/console/tenants/${acme}/users`;
const userIdOf = async (email: string): Promise<string | undefined> =>
  (await h.ds.query<{ id: string }[]>('SELECT id FROM users WHERE tenant_id = ? AND email = ?', [acme, email]))[0]?.id;
const events = (userId: string) =>
  h.ds.query<{ action: string; actor_type: string; actor_id: string }[]>(
    'SELECT action, actor_type, actor_id FROM audit_events WHERE target_id = ? ORDER BY created_at',
    [userId],
  );
const adaId = async () =>
  (await h.ds.query<{ id: string }[]>('SELECT id FROM users WHERE email = ?', ['ada@example.com']))[0].id;
/** The sign-in link of a mail's text part. */
const linkOf = (text: string) => /(https?:\/\/\S+\/account\/sign-in\?\S+)/.exec(text)?.[1] ?? '';

test('create with "Send a sign-in link by email": the link opens the tenant\'s login page with the address filled in', async (t) => {
  const ada = await h.signIn('ada@example.com');
  const form = await h.page(`${usersOf()}/new`, ada);
  const box = /<label class="check" for="invite"><input type="checkbox" id="invite" name="invite" value="1"[^>]*>/;
  t.regex(form.text, new RegExp(`${box.source} Send a sign-in link by email</label>`));

  const email = 'ivy@example.com';
  const made = await h.submit(ada, `${usersOf()}/new`, { email, name: 'Ivy', invite: '1' });
  t.is(made.status, 303, made.text);
  const id = await userIdOf(email);
  t.truthy(id);
  t.is(made.location, `${usersOf()}/${id}?invited=1`);
  t.regex((await h.page(made.location!, ada)).text, /<p role="status">A sign-in link to ivy@example\.com is queued/);

  // Created, then invited, both under the operator.
  const adaUser = await adaId();
  t.deepEqual((await events(id!)).map((e) => [e.action, e.actor_type, e.actor_id]).sort(), [
    ['user.create', 'user', adaUser],
    ['user.invite', 'user', adaUser],
  ]);

  const mail = await h.sink.waitFor((m) => m.to.includes(email), 15_000);
  t.is(mail.subject, 'You are invited to sign in to Acme');
  const link = linkOf(mail.text);
  t.true(link.startsWith(`http://localhost:${h.d.port}/account/sign-in?`), link); // the issuer's
  // No secret in the link: the tenant and the address, nothing else.
  t.deepEqual([...new URL(link).searchParams.entries()].sort(), [
    ['login_hint', email],
    ['tenant', acme],
  ]);
  t.regex(mail.html ?? '', new RegExp(`<a href="${link.replace(/[?.]/g, '\\$&').replace(/&/g, '&amp;')}"`));

  // Followed in a fresh browser: the account page's sign-in, then the tenant's login page.
  const browser = new CookieJar();
  const start = await get(link, browser);
  t.is(start.status, 303);
  const authorize = new URL(start.headers.get('location') ?? '');
  t.is(authorize.pathname, '/authorize');
  t.is(authorize.searchParams.get('client_id'), `account-console.${acme}`);
  t.is(authorize.searchParams.get('login_hint'), email);
  const login = await get(authorize.toString(), browser);
  t.is(login.status, 200);
  t.regex(await login.text(), /<input id="email" name="email" type="email"[^>]* value="ivy@example\.com"/);
});

test('the user page\'s "Send a sign-in link…" and the admin API\'s POST …/invite; a disabled user is refused', async (t) => {
  const { directory } = h.services;
  const id = (await directory.createUser(acme, { email: 'jon@example.com', name: 'Jon', locale: 'de' }, actor)).id;
  const ada = await h.signIn('ada@example.com');
  const page = await h.page(`${usersOf()}/${id}`, ada);
  t.regex(page.text, new RegExp(`href="${usersOf()}/${id}/invite">Send a sign-in link…</a>`));
  const confirm = await h.page(`${usersOf()}/${id}/invite`, ada);
  t.regex(confirm.text, /<button type="submit">Send a sign-in link<\/button>/);
  t.regex(confirm.text, /<a href="[^"]+">Cancel<\/a>/);
  const sent = await h.submit(ada, `${usersOf()}/${id}/invite`);
  t.is(sent.status, 303, sent.text);
  t.is(sent.location, `${usersOf()}/${id}?invited=1`);
  // In the language of the user's locale claim, and the login page's too.
  const mail = await h.sink.waitFor((m) => m.to.includes('jon@example.com'), 15_000);
  t.is(mail.subject, 'Einladung zur Anmeldung bei Acme');
  t.is(new URL(linkOf(mail.text)).searchParams.get('ui_locales'), 'de');

  // The admin API: the same service, 202.
  const admin = await credentialsClient(directory, acme, {
    name: 'admin',
    scopes: [SCOPE_TENANT_ADMIN],
  });
  const token = await clientCredentialsToken(h.d.url, admin.clientId, admin.secret);
  const path = `/api/admin/tenants/${acme}/users/${id}/invite`;
  const r = await api(h.d.url, 'POST', path, { token });
  t.is(r.status, 202, r.text);
  t.like(r.body, { user_id: id, tenant_id: acme });
  t.true(String(r.body.sign_in_url).includes('login_hint=jon%40example.com'));
  t.deepEqual(
    (await events(id))
      .filter((e) => e.action === 'user.invite')
      .map((e) => [e.actor_type, e.actor_id])
      .sort(),
    [
      ['client', admin.clientId],
      ['user', await adaId()],
    ],
  );

  // Disabled: 409 on the API and in the console, nothing audited.
  t.is((await h.submit(ada, `${usersOf()}/${id}/disable`)).status, 303);
  const refused = await api(h.d.url, 'POST', path, { token });
  t.is(refused.status, 409);
  t.is(refused.body.error, 'user_disabled');
  const again = await h.submit(ada, `${usersOf()}/${id}/invite`);
  t.is(again.status, 409);
  t.regex(again.text, /is disabled/);
  t.is((await events(id)).filter((e) => e.action === 'user.invite').length, 2);
  t.notRegex((await h.page(`${usersOf()}/${id}`, ada)).text, /Send a sign-in link…/, 'not offered for a disabled user');
});

test('an auditor reads the confirmation but the post is 403 and sends nothing', async (t) => {
  const id = (await h.services.directory.createUser(acme, { email: 'kim@example.com', name: 'Kim' }, actor)).id;
  const carol = await h.signIn('carol@example.com');
  t.notRegex((await h.page(`${usersOf()}/${id}`, carol)).text, /Send a sign-in link…/);
  const r = await h.submit(carol, `${usersOf()}/${id}/invite`);
  t.is(r.status, 403);
  t.regex(r.text, /changes nothing/);
  const create = await h.submit(carol, `${usersOf()}/new`, { email: 'lea@example.com', name: 'Lea', invite: '1' });
  t.is(create.status, 403);
  t.deepEqual(
    (await events(id)).map((e) => e.action),
    ['user.create'],
  );
  t.is(await userIdOf('lea@example.com'), undefined);
});
