/**
 * RP-Initiated Logout 1.0 (§2, §3) against logout CSRF: only an id_token_hint naming the
 * browser's own session (its user, in its tenant) signs out at once. Any other request (no
 * hint; the attacker's own valid hint; a hint from another tenant; a cross-site POST without
 * the session's CSRF token) shows a confirmation page and ends nothing: the session still
 * signs in, its tokens still introspect active.
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { startSmtpSink } from '../helpers/smtp-sink.js';
import { activeTenant, introspectAs, openServices } from '../helpers/seed.js';
import { loginKit } from '../helpers/login.js';
import { authorizeUrl, CookieJar, csrfFrom, get, pkce, REDIRECT, seedApp, type App } from '../helpers/oauth.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
/** A first-party client and a user of a second tenant. */
let other: { client: { clientId: string; secret: string }; email: string };
let n = 0;

test.before(async () => {
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  try {
    const actor = { type: 'system' as const, id: 'test' };
    const b = await activeTenant(provisioning, { name: 'Tenant B' }, actor);
    const c = await directory.createClient(
      b.id,
      { name: 'B web', redirect_uris: [REDIRECT], first_party: true, scopes: ['openid', 'email', 'offline_access'] },
      actor,
    );
    await directory.createUser(b.id, { email: 'bob@b.example', name: 'Bob' }, actor);
    other = { client: { clientId: c.client.client_id, secret: c.client_secret! }, email: 'bob@b.example' };
    for (let i = 1; i <= 12; i++)
      await directory.createUser(app.tenantId, { email: `u${i}@example.com`, name: `U${i}` }, actor);
  } finally {
    await ds.destroy();
  }
  sink = await startSmtpSink();
  d = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url, IAM_EMAIL_CODE_RESEND_SECONDS: '0' });
});
test.after.always(async () => {
  await d?.stop();
  await sink?.close();
  await db?.drop();
});

const kit = loginKit(
  () => d.url,
  () => sink,
);

/** A user of the first tenant, signed in at the web client, with their tokens. */
const signedInUser = () => kit.tokensFor(app.web, `u${++n}@example.com`);

const logoutUrl = (p: Record<string, string>) => `${d.url}/logout?${new URLSearchParams(p)}`;

/** Posts the logout form as a browser would (or a cross-site page would, without the token). */
const postLogout = async (form: Record<string, string> | undefined, jar?: CookieJar) => {
  const res = await fetch(`${d.url}/logout`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...(jar ? { cookie: jar.header() } : {}),
    },
    ...(form ? { body: new URLSearchParams(form) } : {}),
  });
  jar?.take(res);
  return res;
};

/** Whether the browser session behind `cookie` still signs in without a prompt. */
async function sessionAlive(cookie: string): Promise<boolean> {
  const res = await fetch(authorizeUrl(d.url, kit.authParams(app.web.clientId, pkce().challenge, { prompt: 'none' })), {
    redirect: 'manual',
    headers: { cookie },
  });
  return new URL(res.headers.get('location')!).searchParams.has('code');
}

const active = async (token: string) => (await introspectAs(d.url, app.web, token)).body.active === true;

/** The confirmation page: a POST form to /logout with a CSRF token, and nothing ended. */
async function assertConfirmation(t: import('ava').ExecutionContext, res: Response) {
  t.is(res.status, 200);
  const html = await res.text();
  t.regex(html, /<form method="post" action="\/logout">/);
  t.regex(html, /Sign out\?/);
  t.truthy(csrfFrom(html));
  t.false(
    res.headers.getSetCookie().some((c) => /^service_session=/.test(c)),
    'the session cookie is left alone',
  );
  return html;
}

async function assertNothingEnded(
  t: import('ava').ExecutionContext,
  victim: { cookie: string; access_token: string; refresh_token: string },
) {
  t.true(await sessionAlive(victim.cookie), 'the session still works');
  t.true(await active(victim.access_token), 'the access token still introspects active');
  const r = await kit.refresh(victim.refresh_token, app.web);
  t.is(r.status, 200, 'the token family is not revoked');
  return r.body.refresh_token;
}

test("another user's valid id_token_hint (the attacker's own): confirmation page, nothing ends", async (t) => {
  const victim = await signedInUser();
  const attacker = await signedInUser();
  const cookie = victim.jar.header();
  const res = await get(logoutUrl({ id_token_hint: attacker.id_token }), victim.jar);
  await assertConfirmation(t, res);
  await assertNothingEnded(t, { cookie, ...victim });
  // Posted cross-site with the attacker's hint, without the victim's CSRF token: still nothing.
  const post = await postLogout({ id_token_hint: attacker.id_token }, victim.jar);
  await assertConfirmation(t, post);
  t.true(await sessionAlive(cookie));
  t.true(await active(victim.access_token));
  // Nor does the attacker's own CSRF token (bound to the attacker's session) work on the victim's.
  const own = csrfFrom(await (await get(logoutUrl({}), attacker.jar)).text());
  await assertConfirmation(t, await postLogout({ csrf: own }, victim.jar));
  t.true(await sessionAlive(cookie));
  t.true(await active(attacker.access_token), "the attacker's session is untouched too");
});

test("the same user's hint from another session (another sid): confirmation page, nothing ends", async (t) => {
  const email = `u${++n}@example.com`;
  const first = await kit.tokensFor(app.web, email);
  const second = await kit.tokensFor(app.web, email);
  const claims = (jwt: string) =>
    JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()) as { sid?: string };
  t.truthy(claims(first.id_token).sid, 'ID tokens carry a sid');
  t.not(claims(first.id_token).sid, claims(second.id_token).sid, 'one per session');
  const cookie = second.jar.header();
  await assertConfirmation(t, await get(logoutUrl({ id_token_hint: first.id_token }), second.jar));
  await assertNothingEnded(t, { cookie, ...second });
  t.true(await active(first.access_token), 'nor the first session');
});

test('an id_token_hint from another tenant: confirmation page, nothing ends', async (t) => {
  const victim = await signedInUser();
  const foreign = await kit.tokensFor(other.client, other.email);
  const cookie = victim.jar.header();
  await assertConfirmation(t, await get(logoutUrl({ id_token_hint: foreign.id_token }), victim.jar));
  await assertNothingEnded(t, { cookie, ...victim });
  // The other tenant's session is not ended either.
  const b = await introspectAs(d.url, other.client, foreign.access_token);
  t.true(b.body.active === true);
});

test('a cross-site GET without a hint, or an empty POST: confirmation page, nothing ends', async (t) => {
  const victim = await signedInUser();
  const cookie = victim.jar.header();
  await assertConfirmation(t, await get(`${d.url}/logout`, victim.jar));
  await assertConfirmation(
    t,
    await get(logoutUrl({ client_id: app.web.clientId, post_logout_redirect_uri: REDIRECT }), victim.jar),
  );
  // An auto-submitted cross-site form: no body, an empty form, a wrong token.
  await assertConfirmation(t, await postLogout(undefined, victim.jar));
  await assertConfirmation(t, await postLogout({}, victim.jar));
  await assertConfirmation(t, await postLogout({ csrf: 'x'.repeat(43) }, victim.jar));
  await assertNothingEnded(t, { cookie, ...victim });
});

test('an empty POST /logout without a session: the signed-out page, not a 500', async (t) => {
  for (const form of [undefined, {}]) {
    const r = await postLogout(form);
    t.is(r.status, 200);
    t.regex(await r.text(), /You are signed out/);
  }
  const json = await fetch(`${d.url}/logout`, { method: 'POST', headers: { 'content-type': 'application/json' } });
  t.true(json.status < 500, `${json.status}`);
});

test("the session's own id_token_hint signs out at once: session gone, token families revoked", async (t) => {
  const victim = await signedInUser();
  const cookie = victim.jar.header();
  const res = await get(
    logoutUrl({ id_token_hint: victim.id_token, post_logout_redirect_uri: REDIRECT, state: 'bye' }),
    victim.jar,
  );
  t.is(res.status, 302);
  const loc = new URL(res.headers.get('location')!);
  t.is(`${loc.origin}${loc.pathname}`, REDIRECT);
  t.is(loc.searchParams.get('state'), 'bye', 'state passes through (§3)');
  t.false(await sessionAlive(cookie), 'the session is gone');
  t.false(await active(victim.access_token), 'the access token is revoked');
  t.is((await kit.refresh(victim.refresh_token, app.web)).body.error, 'invalid_grant', 'the family is revoked');
});

test('the confirmation page signs out when its form is posted with the CSRF token', async (t) => {
  const victim = await signedInUser();
  const cookie = victim.jar.header();
  const page = await get(
    logoutUrl({ client_id: app.web.clientId, post_logout_redirect_uri: REDIRECT, state: 's2' }),
    victim.jar,
  );
  const html = await assertConfirmation(t, page);
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
  t.is(field('client_id'), app.web.clientId);
  t.is(field('post_logout_redirect_uri'), REDIRECT);
  t.is(field('state'), 's2');
  const res = await postLogout(
    { csrf: csrfFrom(html), client_id: field('client_id')!, post_logout_redirect_uri: REDIRECT, state: 's2' },
    victim.jar,
  );
  t.is(res.status, 302);
  t.is(new URL(res.headers.get('location')!).searchParams.get('state'), 's2');
  t.false(await sessionAlive(cookie));
  t.false(await active(victim.access_token));
});

test('post_logout_redirect_uri must be registered for the client, and client_id must match the hint', async (t) => {
  const victim = await signedInUser();
  const cookie = victim.jar.header();
  const cases: Record<string, string>[] = [
    { id_token_hint: victim.id_token, post_logout_redirect_uri: 'https://evil.example/' },
    { client_id: app.web.clientId, post_logout_redirect_uri: `${REDIRECT}/other` },
    { post_logout_redirect_uri: REDIRECT },
    { id_token_hint: victim.id_token, client_id: app.thirdParty.clientId },
    { id_token_hint: 'not.a.token' },
  ];
  for (const p of cases) {
    const r = await get(logoutUrl(p), victim.jar);
    t.is(r.status, 400, JSON.stringify(Object.keys(p)));
    t.is(r.headers.get('location'), null, 'no redirect');
  }
  t.true(await sessionAlive(cookie), 'a refused request ends nothing');
});
