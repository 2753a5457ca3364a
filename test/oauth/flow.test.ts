/**
 * The spec's five-request login flow, with openid-client as the relying party, PKCE and
 * nonce, and the sign-in code read from mail delivered to a real SMTP server.
 *   1 GET /authorize   2 POST email-code/send   3 POST email-code/verify (session)
 *   4 GET /authorize, the continuation (code)    5 POST /token
 * A third-party client (the CLI's default) gets the consent page between 4 and the code.
 */
import test from 'ava';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { startSmtpSink } from '../helpers/smtp-sink.js';
import {
  challengeFrom,
  codeFrom,
  CookieJar,
  csrfFrom,
  get,
  postJson,
  REDIRECT,
  seedApp,
  sql,
  type App,
} from '../helpers/oauth.js';
import { openServices } from '../helpers/seed.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;

test.before(async () => {
  db = await createTestDatabase();
  app = await seedApp(db.url, db.dir);
  sink = await startSmtpSink();
  d = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url, IAM_EMAIL_CODE_RESEND_SECONDS: '0' });
});
test.after.always(async () => {
  await d?.stop();
  await sink?.close();
  await db?.drop();
});

async function rp(clientId: string, secret: string) {
  return oidc.discovery(new URL(d.url), clientId, { redirect_uris: [REDIRECT] }, oidc.ClientSecretBasic(secret), {
    execute: [oidc.allowInsecureRequests],
  });
}

/** Requests 1–4: returns the callback URL the browser would land on. */
async function login(
  config: oidc.Configuration,
  email: string,
  checks: { verifier: string; nonce: string; state: string },
  jar = new CookieJar(),
) {
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid email profile offline_access',
    nonce: checks.nonce,
    state: checks.state,
    code_challenge: await oidc.calculatePKCECodeChallenge(checks.verifier),
    code_challenge_method: 'S256',
  });
  const page = await get(url.toString(), jar); // 1
  if (page.status !== 200) throw new Error(`authorize: ${page.status}`);
  const challenge = challengeFrom(await page.text());
  const earlier = new Set(sink.messages);
  const send = await postJson(
    `${d.url}/api/v1/auth/direct/email-code/send`,
    { client_id: config.clientMetadata().client_id, email, authorization_challenge_id: challenge },
    jar,
  ); // 2
  if (send.status !== 200) throw new Error(`send: ${send.status} ${await send.text()}`);
  const mail = await sink.waitFor((m) => !earlier.has(m) && m.to.includes(email), 15_000);
  const verify = await postJson(
    `${d.url}/api/v1/auth/direct/email-code/verify`,
    {
      client_id: config.clientMetadata().client_id,
      email,
      code: codeFrom(mail.text),
      authorization_challenge_id: challenge,
    },
    jar,
  ); // 3
  const session = (await verify.json()) as { redirect_url: string; ok: boolean };
  if (verify.status !== 200) throw new Error(`verify: ${verify.status} ${JSON.stringify(session)}`);
  const back = await get(session.redirect_url, jar); // 4
  if (back.status !== 302) throw new Error(`continue: ${back.status} ${await back.text()}`);
  return { callback: new URL(back.headers.get('location')!), jar, mail, session };
}

test.serial(
  'five-request flow with openid-client: ID token validates against the JWKS, userinfo answers, refresh rotates, ' +
    'reuse kills the family',
  async (t) => {
    const config = await rp(app.web.clientId, app.web.secret);
    const checks = { verifier: oidc.randomPKCECodeVerifier(), nonce: oidc.randomNonce(), state: oidc.randomState() };
    const { callback, jar, mail, session } = await login(config, app.user.email, checks);

    t.is(session.ok, true);
    t.regex(mail.subject, /sign-in code/i);
    t.is(callback.searchParams.get('iss'), d.url, 'RFC 9207 iss on the authorization response');
    const cookie = jar.raw.find((l) => l.startsWith('service_session='))!;
    t.regex(cookie, /HttpOnly/);
    t.regex(cookie, /SameSite=Lax/);

    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: checks.verifier,
      expectedNonce: checks.nonce,
      expectedState: checks.state,
      idTokenExpected: true,
    }); // 5
    const claims = tokens.claims()!;
    t.is(claims.sub, app.user.id);
    t.is(claims.nonce, checks.nonce);
    t.truthy(claims.auth_time);
    t.is(claims.acr, 'urn:iam:acr:email-code');
    t.deepEqual(claims.amr, ['otp', 'email']);

    // The ID token's signature, checked independently of the client library against /jwks.
    const jwks = createRemoteJWKSet(new URL(`${d.url}/jwks`));
    const { payload, protectedHeader } = await jwtVerify(tokens.id_token!, jwks, {
      issuer: d.url,
      audience: app.web.clientId,
    });
    t.is(protectedHeader.alg, 'ES256');
    t.is(payload.email, app.user.email);
    // The access token is an RFC 9068 JWT.
    const at = await jwtVerify(tokens.access_token, jwks, { issuer: d.url, typ: 'at+jwt' });
    t.is(at.payload.client_id, app.web.clientId);
    t.is(at.payload.tenant_id, app.tenantId);
    t.truthy(at.payload.fid);

    const info = await oidc.fetchUserInfo(config, tokens.access_token, app.user.id);
    t.is(info.email, app.user.email);
    t.is(info.name, 'Alice');

    const first = tokens.refresh_token!;
    const rotated = await oidc.refreshTokenGrant(config, first);
    t.truthy(rotated.refresh_token);
    t.not(rotated.refresh_token, first);
    t.is((await oidc.fetchUserInfo(config, rotated.access_token, app.user.id)).sub, app.user.id);

    // Reusing the rotated-out refresh token is theft: the whole family dies.
    const reuse = await t.throwsAsync(() => oidc.refreshTokenGrant(config, first));
    t.regex(String((reuse as { error?: string }).error ?? reuse?.message), /invalid_grant/);
    await t.throwsAsync(
      () => oidc.refreshTokenGrant(config, rotated.refresh_token!),
      undefined,
      'the newest refresh token is dead too',
    );
    await t.throwsAsync(
      () => oidc.fetchUserInfo(config, rotated.access_token, app.user.id),
      undefined,
      'and so are its access tokens',
    );

    const rows = (await sql(db.url, db.dir, 'SELECT revoked_reason FROM token_families WHERE user_id = ?', [
      app.user.id,
    ])) as { revoked_reason: string }[];
    t.true(rows.some((r) => r.revoked_reason === 'refresh_reuse'));
  },
);

test.serial('token responses are not cacheable', async (t) => {
  const config = await rp(app.web.clientId, app.web.secret);
  const checks = { verifier: oidc.randomPKCECodeVerifier(), nonce: oidc.randomNonce(), state: oidc.randomState() };
  const { callback } = await login(config, app.user.email, checks);
  const res = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic ' + Buffer.from(`${app.web.clientId}:${app.web.secret}`).toString('base64'),
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      code_verifier: checks.verifier,
    }),
  });
  t.is(res.status, 200);
  t.is(res.headers.get('cache-control'), 'no-store');
  t.is(res.headers.get('pragma'), 'no-cache');
});

test.serial('every login step is in the auth history', async (t) => {
  const config = await rp(app.web.clientId, app.web.secret);
  const checks = { verifier: oidc.randomPKCECodeVerifier(), nonce: oidc.randomNonce(), state: oidc.randomState() };
  await login(config, app.user.email, checks);
  const wrong = await postJson(`${d.url}/api/v1/auth/direct/email-code/verify`, {
    client_id: app.web.clientId,
    email: app.user.email,
    code: '000000',
  });
  t.is(wrong.status, 400);
  const rows = (await sql(db.url, db.dir, 'SELECT event, outcome FROM auth_history WHERE user_id = ?', [
    app.user.id,
  ])) as { event: string; outcome: string }[];
  const seen = new Set(rows.map((r) => `${r.event}:${r.outcome}`));
  for (const e of [
    'email_code_sent:success',
    'email_code_verify:success',
    'session_created:success',
    'email_code_verify:failure',
  ])
    t.true(seen.has(e), e);
});

test.serial(
  'openid-client asks a client with the CLI defaults for offline_access: consent page, then a refresh token',
  async (t) => {
    // As `iam clients create --tenant … --name Reader --redirect-uri …` makes it: third-party,
    // grants authorization_code and refresh_token, scopes openid profile email.
    const { ds, directory } = await openServices(db.url, db.dir);
    const created = await directory.createClient(
      app.tenantId,
      { name: 'Reader', redirect_uris: [REDIRECT] },
      { type: 'system', id: 'test' },
    );
    await ds.destroy();
    t.deepEqual(created.client.grant_types, ['authorization_code', 'refresh_token']);
    t.false(created.client.scopes.includes('offline_access'));
    const config = await rp(created.client.client_id, created.client_secret!);
    t.true(config.serverMetadata().scopes_supported!.includes('offline_access'));

    const checks = { verifier: oidc.randomPKCECodeVerifier(), nonce: oidc.randomNonce(), state: oidc.randomState() };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid email offline_access',
      nonce: checks.nonce,
      state: checks.state,
      code_challenge: await oidc.calculatePKCECodeChallenge(checks.verifier),
      code_challenge_method: 'S256',
    });
    const jar = new CookieJar();
    const page = await get(url.toString(), jar);
    t.is(page.status, 200, `the login page, not ${page.headers.get('location')}`);
    const challenge = challengeFrom(await page.text());
    const body = { client_id: created.client.client_id, email: app.user.email, authorization_challenge_id: challenge };
    const earlier = new Set(sink.messages);
    t.is((await postJson(`${d.url}/api/v1/auth/direct/email-code/send`, body, jar)).status, 200);
    const mail = await sink.waitFor((m) => !earlier.has(m) && m.to.includes(app.user.email), 15_000);
    const verify = await postJson(
      `${d.url}/api/v1/auth/direct/email-code/verify`,
      { ...body, code: codeFrom(mail.text) },
      jar,
    );
    t.is(verify.status, 200);
    const consent = await get(((await verify.json()) as { redirect_url: string }).redirect_url, jar);
    t.is(consent.status, 200, 'the consent page follows the sign-in');
    const html = await consent.text();
    t.regex(html, /Stay signed in when you are away/, 'the consent page shows offline_access');
    const answer = await fetch(`${d.url}/authorize/consent`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
      body: new URLSearchParams({ challenge: challengeFrom(html), csrf: csrfFrom(html), decision: 'allow' }),
    });
    t.is(answer.status, 302);

    const tokens = await oidc.authorizationCodeGrant(config, new URL(answer.headers.get('location')!), {
      pkceCodeVerifier: checks.verifier,
      expectedNonce: checks.nonce,
      expectedState: checks.state,
      idTokenExpected: true,
    });
    t.is(tokens.claims()!.sub, app.user.id);
    t.truthy(tokens.refresh_token, 'a refresh token for offline_access');
    t.true(tokens.scope!.split(' ').includes('offline_access'));
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    t.truthy(refreshed.access_token);
    t.not(refreshed.refresh_token, tokens.refresh_token);
  },
);
