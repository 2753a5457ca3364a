/**
 * The account page's profile over HTTP (docs/directory.md, "The account page"): the name form,
 * the address change with a code sent to the new address (confirmed after a daemon restart, so
 * the pending change is the database's), the notice to the old address, wrong codes and CSRF
 * refused, an address of another user not revealed, the step-up, and the audit rows.
 */
import test from 'ava';
import type { TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { loginKit } from '../helpers/login.js';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { codeFrom, csrfFrom, sql, type App, type CookieJar } from '../helpers/oauth.js';
import { STEP_UP_MAX_AGE_MS } from '../../shared/services/auth/passkeys.js';

let env: LoginEnv;
let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
const kit = loginKit(
  () => d.url,
  () => sink,
);

test.before(async () => {
  env = await startLoginEnv();
  ({ db, d, app, sink } = env);
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

async function signedIn() {
  const user = await createUserIn(env, 'profile');
  const jar = await kit.signIn(app.web.clientId, user.email);
  const csrf = csrfFrom((await page(jar)).html);
  return { user, jar, csrf };
}

async function page(jar: CookieJar) {
  const r = await fetch(`${d.url}/account`, { headers: { cookie: jar.header() } });
  return { status: r.status, html: await r.text() };
}

async function form(path: string, fields: Record<string, string>, jar: CookieJar) {
  const r = await fetch(`${d.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    body: new URLSearchParams(fields),
  });
  return { status: r.status, location: r.headers.get('location'), html: await r.text() };
}

/** The next mail to `to` (after the call), once it arrives. */
function nextMailTo(to: string) {
  const earlier = new Set(sink.messages);
  return () => sink.waitFor((m) => !earlier.has(m) && m.to.includes(to), 15_000);
}

const q = (query: string, params: unknown[]) => sql(db.url, db.dir, query, params) as Promise<Record<string, any>[]>;
const userRow = async (id: string) => (await q('SELECT email, name, email_verified FROM users WHERE id = ?', [id]))[0];
const audits = async (userId: string) =>
  (
    await q('SELECT action, actor_type, actor_id FROM audit_events WHERE target_id = ? AND actor_type = ? ORDER BY 1', [
      userId,
      'user',
    ])
  ).map((r) => `${r.action} ${r.actor_type}:${r.actor_id === userId ? 'self' : r.actor_id}`);

// Serial, so it runs before the others: it restarts the daemon.
test.serial(
  'address change: the code goes to the new address; confirmed after a restart; the old address is told; audited',
  async (t) => {
    const { user, jar, csrf } = await signedIn();
    const newEmail = `moved-${Date.now()}@example.org`;
    const codeMail = nextMailTo(newEmail);
    const sent = await form('/account/email/send', { csrf, email: ` ${newEmail.toUpperCase()} ` }, jar);
    t.is(sent.status, 200, sent.html);
    t.regex(sent.html, /action="\/account\/email\/confirm"/);
    t.true(sent.html.includes(newEmail), 'the code page names the new address, normalised');
    const mail = await codeMail();
    const code = codeFrom(mail.subject);
    t.is((await userRow(user.id)).email, user.email, 'nothing changes before the code');

    // The pending change is the code's row: another daemon process confirms it.
    await d.stop();
    d = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url, IAM_EMAIL_CODE_RESEND_SECONDS: '0' });
    env.d = d;

    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    const bad = await form('/account/email/confirm', { csrf, email: newEmail, code: wrong }, jar);
    t.is(bad.status, 400);
    t.regex(bad.html, /The code is incorrect; 4 attempts left\./);
    t.is((await form('/account/email/confirm', { email: newEmail, code }, jar)).status, 403, 'no CSRF token');
    t.is((await userRow(user.id)).email, user.email);

    const notice = nextMailTo(user.email);
    const ok = await form('/account/email/confirm', { csrf, email: newEmail, code }, jar);
    t.is(ok.status, 303, ok.html);
    t.is(ok.location, '/account?done=email#profile');
    const row = await userRow(user.id);
    t.is(row.email, newEmail);
    t.is(Number(row.email_verified), 1);
    const told = await notice();
    t.is(told.subject, 'Your address was changed');
    t.true(told.text.includes(newEmail));
    t.true((await page(jar)).html.includes(`<strong>${newEmail}</strong> (verified)`));
    // The code is spent: it does not confirm twice.
    t.is((await form('/account/email/confirm', { csrf, email: newEmail, code }, jar)).status, 400);
    t.deepEqual(await audits(user.id), ['user.email_change user:self', 'user.email_change_request user:self']);
  },
);

test('name: saved and shown, audited with the user as actor; an empty name and a missing CSRF token refused', async (t) => {
  const { user, jar, csrf } = await signedIn();
  t.is((await form('/account/profile/name', { name: 'Mallory' }, jar)).status, 403, 'no CSRF token');
  t.is((await form('/account/profile/name', { csrf: 'forged', name: 'Mallory' }, jar)).status, 403);
  const empty = await form('/account/profile/name', { csrf, name: '   ' }, jar);
  t.is(empty.status, 400);
  t.regex(empty.html, /Invalid name/);
  t.is((await userRow(user.id)).name, 'profile ' + user.email.replace(/^profile(\d+)-.*$/, '$1'));

  const ok = await form('/account/profile/name', { csrf, name: '  Ada <Lovelace>  ' }, jar);
  t.is(ok.status, 303);
  t.is(ok.location, '/account?done=name#profile');
  t.is((await userRow(user.id)).name, 'Ada <Lovelace>');
  const html = (await page(jar)).html;
  t.true(html.includes('value="Ada &lt;Lovelace&gt;"'), 'shown, escaped');
  t.deepEqual(await audits(user.id), ['user.rename user:self']);
});

test('an address of another user: the same answer, no code; that user is told; a code cannot move onto it', async (t) => {
  const { user, jar, csrf } = await signedIn();
  const other = await createUserIn(env, 'taken');
  const toOther = nextMailTo(other.email);
  const sent = await form('/account/email/send', { csrf, email: other.email }, jar);
  t.is(sent.status, 200, 'the same answer as for a free address');
  t.regex(sent.html, /Code sent\./);
  const mail = await toOther();
  t.is(mail.subject, 'Someone asked to use your address');
  t.false(/\b\d{6}\b/.test(mail.text), 'no code in it');
  t.is((await form('/account/email/confirm', { csrf, email: other.email, code: '000000' }, jar)).status, 400);

  // Taken between the code and its confirmation: the right code meets a clear 409.
  const free = `race-${Date.now()}@example.org`;
  const codeMail = nextMailTo(free);
  t.is((await form('/account/email/send', { csrf, email: free }, jar)).status, 200);
  const code = codeFrom((await codeMail()).subject);
  await q('UPDATE users SET email = ? WHERE id = ?', [free, other.id]);
  const refused = await form('/account/email/confirm', { csrf, email: free, code }, jar);
  t.is(refused.status, 409);
  t.regex(refused.html, /already belongs to another account/);
  t.is((await userRow(user.id)).email, user.email);
});

test('address change: a stale sign-in is sent to the step-up; the current address and a malformed one refused', async (t) => {
  const { user, jar, csrf } = await signedIn();
  t.is((await form('/account/email/send', { csrf, email: user.email }, jar)).status, 400, 'already yours');
  t.is((await form('/account/email/send', { csrf, email: 'not an address' }, jar)).status, 400);
  await q('UPDATE sessions SET auth_time = ? WHERE user_id = ?', [Date.now() - STEP_UP_MAX_AGE_MS - 60_000, user.id]);
  const stale = await form('/account/email/send', { csrf, email: `late-${Date.now()}@example.org` }, jar);
  t.is(stale.status, 403);
  t.regex(stale.html, /href="\/account\/reauth"/);
  t.is((await q('SELECT id FROM email_codes WHERE user_id = ? AND client_id = ?', [user.id, 'account'])).length, 0);
});

test('the JSON equivalents: PATCH /api/account/profile, POST /api/account/email-change and …/confirm', async (t) => {
  const { user, jar } = await signedIn();
  const call = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(`${d.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', cookie: jar.header(), ...headers },
      body: JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as Record<string, any> };
  };
  const renamed = await call('PATCH', '/api/account/profile', { name: ' Linus ' });
  t.is(renamed.status, 200);
  t.deepEqual(renamed.body, { name: 'Linus', email: user.email, email_verified: true });
  t.is((await call('PATCH', '/api/account/profile', { name: '' })).body.error, 'invalid_request');
  const foreign = await call('PATCH', '/api/account/profile', { name: 'X' }, { origin: 'https://evil.example' });
  t.is(foreign.status, 403);

  const newEmail = `json-${Date.now()}@example.org`;
  const codeMail = nextMailTo(newEmail);
  const sent = await call('POST', '/api/account/email-change', { email: newEmail });
  t.is(sent.status, 202);
  t.deepEqual(sent.body, { email: newEmail, expires_in: 600 });
  const code = codeFrom((await codeMail()).subject);
  const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
  const bad = await call('POST', '/api/account/email-change/confirm', { email: newEmail, code: wrong });
  t.is(bad.status, 400);
  t.is(bad.body.error, 'invalid_grant');
  const ok = await call('POST', '/api/account/email-change/confirm', { email: newEmail, code });
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.deepEqual(ok.body, { name: 'Linus', email: newEmail, email_verified: true });

  await q('UPDATE sessions SET auth_time = ? WHERE user_id = ?', [Date.now() - STEP_UP_MAX_AGE_MS - 60_000, user.id]);
  const stale = await call('POST', '/api/account/email-change', { email: `again-${Date.now()}@example.org` });
  t.is(stale.status, 403);
  t.is(stale.body.error, 'step_up_required');
});
