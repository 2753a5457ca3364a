/**
 * Throttling of the email-code sign-in and of client authentication (docs/security.md):
 * codes bound to their login transaction, the per-address lock, the atomic resend wait, the
 * hourly mail cap per address and the client-authentication budgets, each with a 429
 * `slow_down` and `Retry-After`. Requests from "another IP" come from 127.0.0.2 and up (see
 * test/helpers/from-ip.ts); the test checks the daemon recorded that address.
 */
import test from 'ava';
import { rateLimitKey } from '../../shared/repositories/index.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { getFrom, postFrom, type IpResponse } from '../helpers/from-ip.js';
import { clientCredentialsToken } from '../helpers/seed.js';
import { startSmtpSink } from '../helpers/smtp-sink.js';
import {
  authorizeUrl,
  challengeFrom,
  codeFrom,
  CookieJar,
  csrfFrom,
  get,
  pkce,
  postJson,
  REDIRECT,
  seedApp,
  sql,
  type App,
} from '../helpers/oauth.js';
import { api } from '../helpers/api.js';

let db: TestDb;
/** The default budgets (30 s resend wait). */
let d: Daemon;
/** The same service without a resend wait, for tests that need several codes in one transaction. */
let d0: Daemon;
let app: App;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
let adminToken: string;
let n = 0;

test.before(async () => {
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  sink = await startSmtpSink();
  d = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url });
  d0 = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url, IAM_EMAIL_CODE_RESEND_SECONDS: '0' });
  adminToken = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);
});
test.after.always(async () => {
  await d?.stop();
  await d0?.stop();
  await sink?.close();
  await db?.drop();
});

async function newUser(): Promise<{ id: string; email: string }> {
  const email = `throttle${++n}-${Date.now()}@example.com`;
  const res = await api(d.url, 'POST', `/api/admin/tenants/${app.tenantId}/users`, {
    body: { email, name: `User ${n}` },
    token: adminToken,
  });
  if (res.status !== 201) throw new Error(`create user: ${res.status}`);
  return res.body as { id: string; email: string };
}

/** A new login transaction: the authorization request the login page continues. */
async function loginChallenge(base: string, from = '127.0.0.1'): Promise<string> {
  const url = authorizeUrl(base, {
    response_type: 'code',
    client_id: app.web.clientId,
    redirect_uri: REDIRECT,
    scope: 'openid email',
    state: 's',
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
  });
  const page = from === '127.0.0.1' ? await (await get(url)).text() : (await getFrom(from, url)).text;
  return challengeFrom(page);
}

/** Sends a code (from `from`) and returns the code of the mail it produced. */
async function sendAndRead(base: string, body: Record<string, unknown>, from = '127.0.0.1'): Promise<string> {
  const earlier = new Set(sink.messages);
  const r = await postFrom(from, `${base}/api/v1/auth/direct/email-code/send`, body);
  if (r.status !== 200) throw new Error(`send ${r.status} ${r.text}`);
  const email = body.email as string;
  return codeFrom((await sink.waitFor((m) => !earlier.has(m) && m.to.includes(email), 15_000)).text);
}

const wrongOf = (code: string, i = 0) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0');

test('guessing until 429 locks the address: a later right code in that transaction is still refused', async (t) => {
  const user = await newUser();
  const challenge = await loginChallenge(d0.url);
  const body = { client_id: app.web.clientId, email: user.email, authorization_challenge_id: challenge };
  const verify = (code: string) =>
    postFrom('127.0.0.1', `${d0.url}/api/v1/auth/direct/email-code/verify`, { ...body, code });

  // Default budget: 10 wrong codes per address. Two codes of five attempts each spend it.
  const statuses: number[] = [];
  let locked: IpResponse | undefined;
  for (let round = 0; round < 2 && !locked; round++) {
    const code = await sendAndRead(d0.url, body);
    for (let i = 0; i < 5; i++) {
      const r = await verify(wrongOf(code, i));
      statuses.push(r.status);
      if (r.status === 429) {
        locked = r;
        break;
      }
    }
  }
  t.deepEqual(statuses, [400, 400, 400, 400, 400, 400, 400, 400, 400, 429], 'the tenth wrong code locks');
  if (!locked) return;
  t.is(locked.json().error, 'slow_down');
  const retryAfter = Number(locked.headers['retry-after']);
  t.true(retryAfter > 0 && retryAfter <= 900, `Retry-After ${retryAfter} is the first lock (15 min)`);
  t.is(locked.json().retry_after, retryAfter);

  // A fresh code in the same transaction, and the right one: still refused while locked.
  const code = await sendAndRead(d0.url, body);
  const right = await verify(code);
  t.is(right.status, 429);
  t.is(right.json().error, 'slow_down');
  t.truthy(right.headers['retry-after']);
  // Another transaction for the same address is locked too (the budget is per address).
  const other = await loginChallenge(d0.url);
  const otherCode = await sendAndRead(d0.url, { ...body, authorization_challenge_id: other });
  const elsewhere = await postFrom('127.0.0.1', `${d0.url}/api/v1/auth/direct/email-code/verify`, {
    ...body,
    authorization_challenge_id: other,
    code: otherCode,
  });
  t.is(elsewhere.status, 429);
  const sessions = (await sql(db.url, db.dir, 'SELECT COUNT(*) AS n FROM sessions WHERE user_id = ?', [user.id])) as {
    n: number;
  }[];
  t.is(Number(sessions[0].n), 0, 'no sign-in while locked');
});

test("a victim's code still signs in after an attacker on another IP burnt 5 guesses and asked for new codes", async (t) => {
  const victim = await newUser();
  // The victim's browser: a login transaction and the code mailed for it.
  const victimTx = await loginChallenge(d.url);
  const victimBody = { client_id: app.web.clientId, email: victim.email, authorization_challenge_id: victimTx };
  const victimCode = await sendAndRead(d.url, victimBody);

  // The attacker, from 127.0.0.2: a transaction of its own for the victim's address (its send is
  // not held by the victim's resend wait), five wrong guesses, then new codes in new transactions.
  const attackerTx = await loginChallenge(d.url, '127.0.0.2');
  const attackerBody = { client_id: app.web.clientId, email: victim.email, authorization_challenge_id: attackerTx };
  const attackerCode = await sendAndRead(d.url, attackerBody, '127.0.0.2');
  for (let i = 0; i < 5; i++) {
    const r = await postFrom('127.0.0.2', `${d.url}/api/v1/auth/direct/email-code/verify`, {
      ...attackerBody,
      code: wrongOf(attackerCode, i),
    });
    t.is(r.status, 400);
  }
  // The victim's code, guessed in the attacker's transaction, is not even looked at there.
  const misplaced = await postFrom('127.0.0.2', `${d.url}/api/v1/auth/direct/email-code/verify`, {
    ...attackerBody,
    code: victimCode,
  });
  t.is(misplaced.status, 400);
  const again = await postFrom('127.0.0.2', `${d.url}/api/v1/auth/direct/email-code/send`, {
    ...attackerBody,
    authorization_challenge_id: await loginChallenge(d.url, '127.0.0.2'),
  });
  t.is(again.status, 200, "a new code in another of the attacker's transactions");
  const unbound = await postFrom('127.0.0.2', `${d.url}/api/v1/auth/direct/email-code/send`, {
    client_id: app.web.clientId,
    email: victim.email,
  });
  t.is(unbound.status, 200, 'and one in the unbound transaction');

  const ok = await postJson(`${d.url}/api/v1/auth/direct/email-code/verify`, { ...victimBody, code: victimCode });
  t.is(ok.status, 200, await ok.clone().text());
  t.is(((await ok.json()) as { user: { id: string } }).user.id, victim.id);

  // The daemon saw two clients: the attacker's requests under 127.0.0.2, the victim's under 127.0.0.1.
  const ips = (await sql(
    db.url,
    db.dir,
    'SELECT ip, event, outcome, COUNT(*) AS n FROM auth_history WHERE user_id = ? GROUP BY ip, event, outcome',
    [victim.id],
  )) as { ip: string; event: string; outcome: string; n: number }[];
  const count = (ip: string, event: string, outcome: string) =>
    Number(ips.find((r) => r.ip === ip && r.event === event && r.outcome === outcome)?.n ?? 0);
  t.is(count('127.0.0.2', 'email_code_sent', 'success'), 3);
  t.is(count('127.0.0.2', 'email_code_verify', 'failure'), 6);
  t.is(count('127.0.0.1', 'email_code_verify', 'success'), 1);
});

test('the resend wait is atomic: parallel sends in one transaction let exactly one through', async (t) => {
  const user = await newUser();
  const tx = await loginChallenge(d.url);
  const body = { client_id: app.web.clientId, email: user.email, authorization_challenge_id: tx };
  const results = await Promise.all(
    Array.from({ length: 6 }, () => postFrom('127.0.0.1', `${d.url}/api/v1/auth/direct/email-code/send`, body)),
  );
  const statuses = results.map((r) => r.status).sort();
  t.deepEqual(statuses, [200, 429, 429, 429, 429, 429]);
  for (const r of results.filter((x) => x.status === 429)) {
    t.is(r.json().error, 'slow_down');
    const retry = Number(r.headers['retry-after']);
    t.true(retry >= 1 && retry <= 30);
  }
  const rows = (await sql(db.url, db.dir, 'SELECT COUNT(*) AS n FROM email_codes WHERE email = ?', [user.email])) as {
    n: number;
  }[];
  t.is(Number(rows[0].n), 1);
});

test('one address is sent at most 10 codes an hour, across transactions and IPs', async (t) => {
  const user = await newUser();
  const statuses: number[] = [];
  for (let i = 0; i < 11; i++) {
    const r = await postFrom(`127.0.0.${10 + i}`, `${d.url}/api/v1/auth/direct/email-code/send`, {
      client_id: app.web.clientId,
      email: user.email,
      code_challenge: pkce().challenge,
    });
    statuses.push(r.status);
    if (r.status === 429) {
      t.is(r.json().error, 'slow_down');
      t.true(Number(r.headers['retry-after']) > 0);
    }
  }
  t.deepEqual(statuses, [...Array<number>(10).fill(200), 429]);
});

test('failed client authentication at /token and /introspect is throttled per IP; the right secret too', async (t) => {
  const basic = (id: string, secret: string) => 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64');
  const token = (from: string, secret: string) =>
    postFrom(
      from,
      `${d.url}/token`,
      { grant_type: 'client_credentials' },
      { form: true, headers: { authorization: basic(app.admin.clientId, secret) } },
    );
  // Default: 30 failures per IP per 15 min.
  for (let i = 0; i < 30; i++) t.is((await token('127.0.0.3', 'wrong')).status, 401);
  const spent = await token('127.0.0.3', 'wrong');
  t.is(spent.status, 429);
  t.is(spent.json().error, 'slow_down');
  t.true(Number(spent.headers['retry-after']) > 0);
  t.is((await token('127.0.0.3', app.admin.secret)).status, 429, 'the right secret is refused while blocked');
  t.is((await token('127.0.0.1', app.admin.secret)).status, 200, 'another IP is not blocked');

  const introspect = (from: string, secret: string) =>
    postFrom(
      from,
      `${d.url}/introspect`,
      { token: 'x' },
      { form: true, headers: { authorization: basic(app.web.clientId, secret) } },
    );
  for (let i = 0; i < 30; i++) t.is((await introspect('127.0.0.4', 'wrong')).status, 401);
  const blocked = await introspect('127.0.0.4', 'wrong');
  t.is(blocked.status, 429);
  t.truthy(blocked.headers['retry-after']);
  t.is((await introspect('127.0.0.4', app.web.secret)).status, 429);
  t.is((await introspect('127.0.0.1', app.web.secret)).status, 200);
});

test("a client's spent failure budget refuses wrong secrets with 429 but never its right one", async (t) => {
  const basic = (secret: string) => 'Basic ' + Buffer.from(`${app.thirdParty.clientId}:${secret}`).toString('base64');
  const token = (from: string, secret: string) =>
    postFrom(
      from,
      `${d.url}/token`,
      { grant_type: 'client_credentials' },
      { form: true, headers: { authorization: basic(secret) } },
    );
  // Default: 100 failures per client per 15 min; 25 from each of four IPs stay under the IP budget.
  for (let i = 0; i < 100; i++) t.is((await token(`127.0.0.${30 + (i % 4)}`, 'wrong')).status, 401);
  const spent = await token('127.0.0.34', 'wrong');
  t.is(spent.status, 429);
  t.is(spent.json().error, 'slow_down');
  // Anyone can fail on a client's behalf: its right secret still authenticates (the grant is
  // then judged on its own: this client may not use client_credentials).
  const right = await token('127.0.0.34', app.thirdParty.secret);
  t.not(right.status, 401);
  t.not(right.status, 429);
});

test('a successful introspection reads and writes no budget row', async (t) => {
  const basic = 'Basic ' + Buffer.from(`${app.web.clientId}:${app.web.secret}`).toString('base64');
  for (let i = 0; i < 20; i++) {
    const r = await postFrom(
      '127.0.0.9',
      `${d.url}/introspect`,
      { token: 'x' },
      { form: true, headers: { authorization: basic } },
    );
    t.is(r.status, 200);
  }
  // The only budget a call from 127.0.0.9 could touch is this IP's failure counter (the client's
  // may hold other tests' failures): no row, so no write happened on the success path.
  const rows = (await sql(db.url, db.dir, 'SELECT points FROM rate_limits WHERE rl_key = ?', [
    rateLimitKey('client-ip-fail:127.0.0.9'),
  ])) as unknown[];
  t.is(rows.length, 0);
  // The check bites: one failure from that IP writes the row.
  const bad = 'Basic ' + Buffer.from(`${app.web.clientId}:wrong`).toString('base64');
  t.is(
    (
      await postFrom(
        '127.0.0.9',
        `${d.url}/introspect`,
        { token: 'x' },
        { form: true, headers: { authorization: bad } },
      )
    ).status,
    401,
  );
  const after = (await sql(db.url, db.dir, 'SELECT points FROM rate_limits WHERE rl_key = ?', [
    rateLimitKey('client-ip-fail:127.0.0.9'),
  ])) as { points: number }[];
  t.is(Number(after[0]?.points), 1);
});

test("an attacker who locks the address does not lock out the victim's browser that signed in before", async (t) => {
  const victim = await newUser();
  const body = (tx: string) => ({ client_id: app.web.clientId, email: victim.email, authorization_challenge_id: tx });
  // The victim signs in once from this browser: it gets the known-device cookie.
  const jar = new CookieJar();
  const first = await loginChallenge(d0.url);
  const firstCode = await sendAndRead(d0.url, body(first));
  const ok = await postJson(`${d0.url}/api/v1/auth/direct/email-code/verify`, { ...body(first), code: firstCode }, jar);
  t.is(ok.status, 200);
  t.truthy(jar.cookies.get('known_device'));
  t.true(jar.raw.some((c) => c.startsWith('known_device=') && /HttpOnly/.test(c)));

  // The attacker, from 127.0.0.2, spends the address's budget: ten wrong codes lock it.
  let last = 0;
  for (let round = 0; round < 2; round++) {
    const tx = await loginChallenge(d0.url, '127.0.0.2');
    const code = await sendAndRead(d0.url, body(tx), '127.0.0.2');
    for (let i = 0; i < 5; i++) {
      const r = await postFrom('127.0.0.2', `${d0.url}/api/v1/auth/direct/email-code/verify`, {
        ...body(tx),
        code: wrongOf(code, i),
      });
      last = r.status;
    }
  }
  t.is(last, 429, 'the address is locked');

  // A browser without the cookie is locked out...
  const stranger = await loginChallenge(d0.url);
  const strangerCode = await sendAndRead(d0.url, body(stranger));
  const refused = await postJson(`${d0.url}/api/v1/auth/direct/email-code/verify`, {
    ...body(stranger),
    code: strangerCode,
  });
  t.is(refused.status, 429);
  // ...the victim's browser is not: its known-device cookie gives it budgets of its own.
  const again = await loginChallenge(d0.url);
  const earlier = new Set(sink.messages);
  const send = await postJson(`${d0.url}/api/v1/auth/direct/email-code/send`, body(again), jar);
  t.is(send.status, 200);
  const mail = await sink.waitFor((m) => !earlier.has(m) && m.to.includes(victim.email), 15_000);
  const signedIn = await postJson(
    `${d0.url}/api/v1/auth/direct/email-code/verify`,
    { ...body(again), code: codeFrom(mail.text) },
    jar,
  );
  t.is(signedIn.status, 200, await signedIn.clone().text());
  // A forged or another address's cookie is no such exemption.
  const forged = new CookieJar();
  forged.cookies.set(
    'known_device',
    jar.cookies.get('known_device')!.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
  );
  const third = await loginChallenge(d0.url);
  const thirdCode = await sendAndRead(d0.url, body(third));
  const forgedTry = await postJson(
    `${d0.url}/api/v1/auth/direct/email-code/verify`,
    { ...body(third), code: thirdCode },
    forged,
  );
  t.is(forgedTry.status, 429);
});

test("login forms: a code belongs to its form's authorization request; another's guesses leave it working", async (t) => {
  const victim = await newUser();
  // The victim's browser opens the login page: the challenge, the CSRF field and its cookie.
  const page = await getFrom(
    '127.0.0.50',
    authorizeUrl(d.url, {
      response_type: 'code',
      client_id: app.web.clientId,
      redirect_uri: REDIRECT,
      scope: 'openid email',
      state: 's',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    }),
  );
  const challenge = challengeFrom(page.text);
  const csrf = csrfFrom(page.text);
  const setCookies = ([] as string[]).concat(page.headers['set-cookie'] ?? []);
  const cookie = setCookies.map((c) => c.split(';')[0]).join('; ');
  const form = (path: string, fields: Record<string, string>) =>
    postFrom(
      '127.0.0.50',
      `${d.url}${path}`,
      { challenge, csrf, email: victim.email, ...fields },
      {
        form: true,
        headers: { cookie },
      },
    );
  const earlier = new Set(sink.messages);
  t.is((await form('/login/email-code', {})).status, 200);
  const mail = await sink.waitFor((m) => !earlier.has(m) && m.to.includes(victim.email), 15_000);
  const code = codeFrom(mail.text);

  // The attacker's transaction, from 127.0.0.51: a code of its own, five wrong guesses, and the
  // victim's code tried there too.
  const attackerTx = await loginChallenge(d.url, '127.0.0.51');
  const attackerBody = { client_id: app.web.clientId, email: victim.email, authorization_challenge_id: attackerTx };
  const attackerCode = await sendAndRead(d.url, attackerBody, '127.0.0.51');
  for (let i = 0; i < 5; i++) {
    const r = await postFrom('127.0.0.51', `${d.url}/api/v1/auth/direct/email-code/verify`, {
      ...attackerBody,
      code: wrongOf(attackerCode, i),
    });
    t.is(r.status, 400);
  }
  t.is(
    (await postFrom('127.0.0.51', `${d.url}/api/v1/auth/direct/email-code/verify`, { ...attackerBody, code })).status,
    400,
  );

  const ok = await form('/login/verify', { code });
  t.is(ok.status, 303, ok.text);
  const cookies = ([] as string[]).concat(ok.headers['set-cookie'] ?? []);
  t.true(cookies.some((c) => c.startsWith('service_session=')));
  t.true(cookies.some((c) => c.startsWith('known_device=') && /HttpOnly/.test(c)));
});

test('login form posts are throttled per IP: 429 with Retry-After and the error object', async (t) => {
  const statuses: number[] = [];
  const post = () =>
    postFrom(
      '127.0.0.52',
      `${d.url}/login/email-code`,
      { challenge: 'no-such-challenge', csrf: 'x', email: 'a@example.com' },
      { form: true },
    );
  for (let i = 0; i < 120; i++) statuses.push((await post()).status);
  const last = await post();
  statuses.push(last.status);
  t.true(statuses.slice(0, 120).every((s) => s === 400));
  t.is(statuses[120], 429);
  t.truthy(last.headers['retry-after']);
  t.is(last.json().error, 'slow_down');
});
