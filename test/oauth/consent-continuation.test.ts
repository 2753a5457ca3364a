/**
 * After sign-in the authorization continues to the consent page whenever consent is needed
 * (OIDC Core §3.1.2.4): the continuation is the client's own request with a login-done marker,
 * never a prompt=none request, so a third-party client gets the consent page instead of
 * consent_required. Both sign-in paths are covered: the login forms and the direct-auth API.
 * Also offline_access on a client created with the CLI's defaults (OIDC Core §11).
 */
import test from 'ava';
import type { TestDb } from '../helpers/db.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { createUserIn, startLoginEnv, stopLoginEnv, type LoginEnv } from '../helpers/env.js';
import { loginKit } from '../helpers/login.js';
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
  type App,
} from '../helpers/oauth.js';
import { openServices } from '../helpers/seed.js';

let env: LoginEnv;
let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
/** Created as `iam clients create --name Reader --redirect-uri …` does: every default. */
let reader: { clientId: string; secret: string };
/** A third-party client without the refresh_token grant. */
let noRefresh: { clientId: string; secret: string };
const kit = loginKit(
  () => d.url,
  () => sink,
);

test.before(async () => {
  env = await startLoginEnv();
  ({ db, d, app, sink } = env);
  const { ds, directory } = await openServices(db.url, db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  const r = await directory.createClient(app.tenantId, { name: 'Reader', redirect_uris: [REDIRECT] }, actor);
  const n = await directory.createClient(
    app.tenantId,
    { name: 'Codes only', redirect_uris: [REDIRECT], grant_types: ['authorization_code'] },
    actor,
  );
  await ds.destroy();
  reader = { clientId: r.client.client_id, secret: r.client_secret! };
  noRefresh = { clientId: n.client.client_id, secret: n.client_secret! };
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

const newUser = () => createUserIn(env, 'continue');

const params = (clientId: string, challenge: string, extra: Record<string, string> = {}) => ({
  response_type: 'code',
  client_id: clientId,
  redirect_uri: REDIRECT,
  scope: 'openid email',
  state: 'st-1',
  nonce: 'n-1',
  code_challenge: challenge,
  code_challenge_method: 'S256',
  ...extra,
});

async function postForm(path: string, body: Record<string, string>, jar: CookieJar): Promise<Response> {
  const res = await fetch(`${d.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    body: new URLSearchParams(body),
  });
  jar.take(res);
  return res;
}

/**
 * GET /authorize without a session, then the login forms: returns the 303 of POST /login/verify
 * (the continuation) and the jar with the new session.
 */
async function signInWithForms(clientId: string, email: string, extra: Record<string, string> = {}) {
  const jar = new CookieJar();
  const p = pkce();
  const page = await get(authorizeUrl(d.url, params(clientId, p.challenge, extra)), jar);
  if (page.status !== 200) throw new Error(`authorize ${page.status}`);
  const html = await page.text();
  const form = { challenge: challengeFrom(html), csrf: csrfFrom(html) };
  const earlier = new Set(sink.messages);
  const sent = await postForm('/login/email-code', { ...form, email }, jar);
  if (sent.status !== 200) throw new Error(`email-code ${sent.status}`);
  const mail = await sink.waitFor((m) => !earlier.has(m) && m.to.includes(email), 15_000);
  const verified = await postForm('/login/verify', { ...form, email, code: codeFrom(mail.text) }, jar);
  return { jar, verifier: p.verifier, verified };
}

/** Answers the consent page `html` with `decision`; returns the redirect's URL. */
async function answerConsent(html: string, jar: CookieJar, decision: 'allow' | 'deny'): Promise<URL> {
  const res = await postForm(
    '/authorize/consent',
    { challenge: challengeFrom(html), csrf: csrfFrom(html), decision },
    jar,
  );
  if (res.status !== 302) throw new Error(`consent ${res.status}`);
  return new URL(res.headers.get('location')!);
}

test('login form, third-party client: the continuation shows the consent page; allowing issues a code', async (t) => {
  const user = await newUser();
  const { jar, verifier, verified } = await signInWithForms(app.thirdParty.clientId, user.email);
  t.is(verified.status, 303);
  const next = new URL(verified.headers.get('location')!);
  t.is(next.pathname, '/authorize');
  t.is(next.searchParams.get('prompt'), null, 'the continuation is not turned into prompt=none');
  t.is(next.searchParams.get('state'), 'st-1');
  t.truthy(next.searchParams.get('login_done'));

  const consent = await get(next.toString(), jar);
  t.is(consent.status, 200, 'the consent page, not a redirect with consent_required');
  const html = await consent.text();
  t.regex(html, /Allow Partner/);
  const cb = await answerConsent(html, jar, 'allow');
  t.is(`${cb.origin}${cb.pathname}`, REDIRECT);
  t.is(cb.searchParams.get('state'), 'st-1');
  t.is(cb.searchParams.get('iss'), d.url);
  const tokens = await kit.redeem(cb.searchParams.get('code')!, verifier, app.thirdParty);
  t.is(tokens.status, 200, JSON.stringify(tokens.body));
});

test('login form, third-party client: denying lands with access_denied, state and iss', async (t) => {
  const user = await newUser();
  const { jar, verified } = await signInWithForms(app.thirdParty.clientId, user.email);
  const consent = await get(verified.headers.get('location')!, jar);
  t.is(consent.status, 200);
  const cb = await answerConsent(await consent.text(), jar, 'deny');
  t.is(cb.searchParams.get('error'), 'access_denied');
  t.is(cb.searchParams.get('state'), 'st-1');
  t.is(cb.searchParams.get('iss'), d.url);
  t.is(cb.searchParams.get('code'), null);
});

test('direct-auth API with an authorization challenge: redirect_url leads to the consent page', async (t) => {
  const user = await newUser();
  const jar = new CookieJar();
  const p = pkce();
  const page = await get(authorizeUrl(d.url, params(app.thirdParty.clientId, p.challenge)), jar);
  const challenge = challengeFrom(await page.text());
  const earlier = new Set(sink.messages);
  const body = { client_id: app.thirdParty.clientId, email: user.email, authorization_challenge_id: challenge };
  t.is((await postJson(`${d.url}/api/v1/auth/direct/email-code/send`, body, jar)).status, 200);
  const mail = await sink.waitFor((m) => !earlier.has(m) && m.to.includes(user.email), 15_000);
  const verify = await postJson(
    `${d.url}/api/v1/auth/direct/email-code/verify`,
    { ...body, code: codeFrom(mail.text) },
    jar,
  );
  t.is(verify.status, 200);
  const { redirect_url } = (await verify.json()) as { redirect_url: string };
  t.false(new URL(redirect_url).searchParams.has('prompt'));
  const consent = await get(redirect_url, jar);
  t.is(consent.status, 200, `not ${consent.headers.get('location')}`);
  const cb = await answerConsent(await consent.text(), jar, 'allow');
  t.truthy(cb.searchParams.get('code'));
  t.is(cb.searchParams.get('iss'), d.url);
});

test("the client's own prompt is kept: prompt=login does not loop, prompt=consent still asks", async (t) => {
  const user = await newUser();
  // First-party with prompt=login: the login just done satisfies it; the continuation issues the code.
  const first = await signInWithForms(app.web.clientId, user.email, { prompt: 'login' });
  const next = new URL(first.verified.headers.get('location')!);
  t.is(next.searchParams.get('prompt'), 'login');
  const back = await get(next.toString(), first.jar);
  t.is(back.status, 302);
  t.truthy(new URL(back.headers.get('location')!).searchParams.get('code'));

  // Third-party, consent already given, prompt=consent: the consent page again after the login.
  const jar = await kit.signIn(app.thirdParty.clientId, user.email);
  const p = pkce();
  const page = await get(authorizeUrl(d.url, params(app.thirdParty.clientId, p.challenge)), jar);
  await answerConsent(await page.text(), jar, 'allow');
  const again = await signInWithForms(app.thirdParty.clientId, user.email, { prompt: 'login consent' });
  const shown = await get(again.verified.headers.get('location')!, again.jar);
  t.is(shown.status, 200);
  t.regex(await shown.text(), /Allow Partner/);
});

test('the login-done marker proves nothing in another session or for another request', async (t) => {
  const user = await newUser();
  const { verified } = await signInWithForms(app.web.clientId, user.email, { prompt: 'login' });
  const next = new URL(verified.headers.get('location')!);

  // Another browser, with a session of its own: prompt=login is honoured, the login page is shown.
  const other = await kit.signIn(app.web.clientId, user.email);
  const elsewhere = await get(next.toString(), other);
  t.is(elsewhere.status, 200);
  t.regex(await elsewhere.text(), /name="challenge"/);

  // The same session, the marker on another request (another state): the login page again.
  const mine = await signInWithForms(app.web.clientId, user.email, { prompt: 'login' });
  const changed = new URL(mine.verified.headers.get('location')!);
  changed.searchParams.set('state', 'another');
  const r = await get(changed.toString(), mine.jar);
  t.is(r.status, 200);
  t.regex(await r.text(), /name="challenge"/);
});

test('offline_access, CLI-default client: on the consent page, then a refresh token', async (t) => {
  const user = await newUser();
  const { jar, verifier, verified } = await signInWithForms(reader.clientId, user.email, {
    scope: 'openid email offline_access',
  });
  t.is(verified.status, 303);
  const consent = await get(verified.headers.get('location')!, jar);
  t.is(consent.status, 200);
  const html = await consent.text();
  t.regex(html, /Stay signed in when you are away/);
  const cb = await answerConsent(html, jar, 'allow');
  const tokens = await kit.redeem(cb.searchParams.get('code')!, verifier, reader);
  t.is(tokens.status, 200, JSON.stringify(tokens.body));
  t.is(typeof tokens.body.refresh_token, 'string');
  t.regex(tokens.body.scope, /offline_access/);
  const refreshed = await kit.refresh(tokens.body.refresh_token, reader);
  t.is(refreshed.status, 200);
});

test('offline_access without the refresh_token grant: invalid_scope, redirected with state and iss', async (t) => {
  const p = pkce();
  const r = await get(authorizeUrl(d.url, params(noRefresh.clientId, p.challenge, { scope: 'openid offline_access' })));
  t.is(r.status, 302);
  const loc = new URL(r.headers.get('location')!);
  t.is(loc.searchParams.get('error'), 'invalid_scope');
  t.is(loc.searchParams.get('state'), 'st-1');
  t.is(loc.searchParams.get('iss'), d.url);
});
