/**
 * Signing in through an upstream OpenID provider, over HTTP with cookie jars (no browser),
 * against a real node-oidc-provider on loopback HTTPS (test/helpers/upstream-op.ts): the
 * "Continue with" button, the upstream's own login, the callback, the session, then a code and
 * tokens from us; the linking rules; state, browser binding and nonce refused when they do not
 * match; the upstream tokens sealed at rest; re-authentication of a link the refresh gave up on.
 */
import test, { type ExecutionContext } from 'ava';
import { decodeJwt } from 'jose';
import { rmSync } from 'node:fs';
import { SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';
import { UpstreamSealer } from '../../shared/services/upstream-idp/index.js';
import { TEST_SECRET_KEY, createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { makeCert, type TestCert } from '../helpers/https-issuer.js';
import {
  authorizeUrl,
  challengeFrom,
  CookieJar,
  csrfFrom,
  get,
  pkce,
  REDIRECT,
  sql as rawSql,
} from '../helpers/oauth.js';
import { activeTenant, clientCredentialsToken, openServices } from '../helpers/seed.js';
import { startUpstreamOp, type UpstreamOp } from '../helpers/upstream-op.js';
import { until } from '../helpers/poll.js';
import { api } from '../helpers/api.js';

let db: TestDb;
let cert: TestCert;
let d: Daemon;
let op: UpstreamOp;
let tenantId: string;
let web: { clientId: string; secret: string };
let admin: string;
let bobId: string;
let carolId: string;
let erinId: string;
const actor = { type: 'system' as const, id: 'test' };
type Row = Record<string, unknown>;
const sql = async (url: string, dir: string, q: string, params: unknown[] = []) =>
  (await rawSql(url, dir, q, params)) as Row[];

test.before(async () => {
  cert = makeCert();
  db = await createTestDatabase();
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  tenantId = (await activeTenant(provisioning, { name: 'Brokered', allow_signup: true }, actor)).id;
  const w = await directory.createClient(
    tenantId,
    {
      name: 'Web',
      redirect_uris: [REDIRECT],
      first_party: true,
      scopes: ['openid', 'profile', 'email', 'offline_access'],
    },
    actor,
  );
  web = { clientId: w.client.client_id, secret: w.client_secret! };
  const adm = await directory.createClient(
    tenantId,
    { name: 'admin', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN] },
    actor,
  );
  bobId = (await directory.createUser(tenantId, { email: 'bob@upstream.example', name: 'Bob' }, actor)).id;
  carolId = (await directory.createUser(tenantId, { email: 'carol@example.com', name: 'Carol' }, actor)).id;
  erinId = (await directory.createUser(tenantId, { email: 'erin@example.com', name: 'Erin' }, actor)).id;
  await ds.destroy();
  d = await startDaemon(db.url, db.dir, {
    IAM_OUTBOUND_ALLOW_LOOPBACK: 'true',
    IAM_OUTBOUND_CA_FILE: cert.certFile,
    IAM_THROTTLE_IP_FORM_POSTS: '100000',
  });
  op = await startUpstreamOp({
    redirectUri: `${d.url}/login/upstream/callback`,
    cert,
    accessTokenTtl: 300,
    accounts: {
      alice: { email: 'Alice@Upstream.example', email_verified: true, name: 'Alice Upstream' },
      bob: { email: 'bob@upstream.example', email_verified: true, name: 'Bob Upstream' },
      // Claims an address a local user has, unverified: must never be linked to it.
      mallory: { email: 'carol@example.com', email_verified: false, name: 'Mallory' },
      dave: { email: 'dave@upstream.example', email_verified: false },
      // A verified address of a local user who is disabled.
      erin: { email: 'erin@example.com', email_verified: true, name: 'Erin Upstream' },
      // A verified address nobody here has (sign-up closed in the test that uses it).
      frank: { email: 'frank@upstream.example', email_verified: true, name: 'Frank Upstream' },
      // Verified at sign-up; the test then has the upstream withdraw and restore the verification.
      gina: { email: 'gina@upstream.example', email_verified: true, name: 'Gina Upstream' },
    },
  });
  admin = await clientCredentialsToken(d.url, adm.client.client_id, adm.client_secret!);
  const r = await adminCall('POST', {
    issuer: op.issuer,
    client_id: op.clientId,
    client_secret: op.clientSecret,
    scopes: ['openid', 'email', 'profile', 'offline_access'],
    display_name: 'Upstream Corp',
    link_by_verified_email: true,
  });
  if (r.status !== 201) throw new Error(`register: ${r.status} ${JSON.stringify(r.body)}`);
});
test.after.always(async () => {
  await op?.close();
  await d?.stop();
  await db?.drop();
  if (cert) rmSync(cert.dir, { recursive: true, force: true });
});

const adminCall = (method: string, body?: unknown, suffix = '') =>
  api(d.url, method, `/api/admin/tenants/${tenantId}/identity-providers${suffix}`, { body, token: admin });

async function postForm(url: string, form: Record<string, string>, jar: CookieJar): Promise<Response> {
  const res = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
    body: new URLSearchParams(form).toString(),
  });
  jar.take(res);
  return res;
}

interface Started {
  jar: CookieJar;
  verifier: string;
  /** The upstream authorization URL our start endpoint redirected to. */
  upstreamUrl: URL;
}

/** GET /authorize, then the "Continue with Upstream Corp" button. */
async function startAtLoginPage(t: ExecutionContext, jar = new CookieJar()): Promise<Started> {
  const p = pkce();
  const page = await get(
    authorizeUrl(d.url, {
      response_type: 'code',
      client_id: web.clientId,
      redirect_uri: REDIRECT,
      scope: 'openid email',
      state: 'rp-state',
      nonce: 'rp-nonce',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
    }),
    jar,
  );
  t.is(page.status, 200);
  const html = await page.text();
  t.regex(html, /Continue with Upstream Corp/);
  const start = await postForm(
    `${d.url}/login/upstream/start`,
    { challenge: challengeFrom(html), csrf: csrfFrom(html), provider: 'upstream-corp' },
    jar,
  );
  t.is(start.status, 303, await start.clone().text());
  const upstreamUrl = new URL(start.headers.get('location')!);
  t.is(upstreamUrl.origin, op.issuer);
  // PKCE S256, state and nonce on the upstream request (OIDC Core §3.1.2.1, RFC 7636).
  t.is(upstreamUrl.searchParams.get('code_challenge_method'), 'S256');
  t.truthy(upstreamUrl.searchParams.get('state'));
  t.truthy(upstreamUrl.searchParams.get('nonce'));
  t.is(upstreamUrl.searchParams.get('redirect_uri'), `${d.url}/login/upstream/callback`);
  return { jar, verifier: p.verifier, upstreamUrl };
}

/** Follows our redirects from `url` (our callback) with `jar` until one leaves for the client. */
async function followOurs(url: string, jar: CookieJar): Promise<Response> {
  let res = await get(url, jar);
  for (let i = 0; i < 5 && res.headers.get('location')?.startsWith(d.url); i++)
    res = await get(res.headers.get('location')!, jar);
  return res;
}

async function redeem(code: string, verifier: string) {
  const res = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic ' + Buffer.from(`${web.clientId}:${web.secret}`).toString('base64'),
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The whole sign-in as `account` at the upstream; returns our tokens' claims and the jar. */
async function signInAs(t: ExecutionContext, account: string) {
  const s = await startAtLoginPage(t);
  op.loginAs = account;
  const callback = await op.follow(s.upstreamUrl.toString());
  t.is(`${callback.origin}${callback.pathname}`, `${d.url}/login/upstream/callback`);
  const res = await followOurs(callback.toString(), s.jar);
  return { ...s, res };
}

async function signedInUser(t: ExecutionContext, account: string) {
  const { res, verifier, jar } = await signInAs(t, account);
  t.is(res.status, 302, await res.clone().text());
  const loc = new URL(res.headers.get('location')!);
  t.is(`${loc.origin}${loc.pathname}`, REDIRECT);
  t.is(loc.searchParams.get('state'), 'rp-state');
  const tokens = await redeem(loc.searchParams.get('code')!, verifier);
  t.is(tokens.status, 200, JSON.stringify(tokens.body));
  const idToken = decodeJwt(String(tokens.body.id_token));
  t.is(idToken.nonce, 'rp-nonce');
  return { sub: String(idToken.sub), idToken, jar, accessToken: String(tokens.body.access_token) };
}

async function userinfo(accessToken: string) {
  const res = await fetch(`${d.url}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
  return (await res.json()) as Record<string, unknown>;
}

const linksOf = (userId: string) =>
  sql(db.url, db.dir, 'SELECT * FROM upstream_identity_links WHERE tenant_id = ? AND user_id = ?', [tenantId, userId]);

test.serial(
  'a new upstream user with a verified address gets a local account, a session, a code and tokens',
  async (t) => {
    const { sub, idToken } = await signedInUser(t, 'alice');
    const users = await sql(db.url, db.dir, 'SELECT id, email, name FROM users WHERE tenant_id = ? AND id = ?', [
      tenantId,
      sub,
    ]);
    t.is(users.length, 1);
    t.is(users[0].email, 'alice@upstream.example');
    t.is(users[0].name, 'Alice Upstream');
    t.deepEqual(idToken.amr, ['fed']);
    const links = await linksOf(sub);
    t.is(links.length, 1);
    t.is(links[0].upstream_iss, op.issuer);
    t.is(links[0].upstream_sub, 'alice');
    t.is(links[0].state, 'active');
    t.truthy(links[0].refresh_token_sealed);
    t.true(Number(links[0].access_expires_at) > Date.now());
  },
);

test.serial(
  'the upstream tokens are sealed at rest: the raw row holds no plaintext token, and it opens to a live one',
  async (t) => {
    const { sub } = await signedInUser(t, 'alice');
    const [row] = await linksOf(sub);
    const sealer = new UpstreamSealer(TEST_SECRET_KEY);
    t.is(row.key_id, sealer.keyId);
    const plain = sealer.openLinkTokens({
      id: String(row.id),
      key_id: String(row.key_id),
      access_token_sealed: String(row.access_token_sealed),
      refresh_token_sealed: row.refresh_token_sealed as string | null,
      id_token_sealed: row.id_token_sealed as string | null,
    });
    const raw = JSON.stringify(row);
    for (const token of [plain.accessToken, plain.refreshToken!, plain.idToken!]) {
      t.true(token.length > 10);
      t.false(raw.includes(token));
    }
    // What was sealed is the upstream's real access token: its userinfo answers for alice.
    const info = await op.fetch(`${op.issuer}/me`, { headers: { authorization: `Bearer ${plain.accessToken}` } });
    t.is(info.status, 200);
    t.is(((await info.json()) as { sub: string }).sub, 'alice');
    // The provider's client secret is sealed too, and no API shows it.
    const [idp] = await sql(db.url, db.dir, 'SELECT * FROM upstream_identity_providers WHERE tenant_id = ?', [
      tenantId,
    ]);
    t.false(JSON.stringify(idp).includes(op.clientSecret));
    const listed = await adminCall('GET');
    t.false(JSON.stringify(listed.body).includes(op.clientSecret));
  },
);

test.serial('a second sign-in reuses the link by iss + sub; prompt=none works afterwards', async (t) => {
  const first = await signedInUser(t, 'alice');
  const second = await signedInUser(t, 'alice');
  t.is(second.sub, first.sub);
  t.is((await linksOf(first.sub)).length, 1);
  const p = pkce();
  const silent = await get(
    authorizeUrl(d.url, {
      response_type: 'code',
      client_id: web.clientId,
      redirect_uri: REDIRECT,
      scope: 'openid',
      prompt: 'none',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
    }),
    second.jar,
  );
  t.is(silent.status, 302);
  const code = new URL(silent.headers.get('location')!).searchParams.get('code');
  t.truthy(code);
  const tokens = await redeem(code!, p.verifier);
  t.is(decodeJwt(String(tokens.body.id_token)).sub, first.sub);
});

test.serial(
  'email_verified is what the upstream says of the address: false in the ID token and UserInfo when unverified',
  async (t) => {
    const verifiedOf = async (sub: string) =>
      (await sql(db.url, db.dir, 'SELECT email_verified FROM users WHERE tenant_id = ? AND id = ?', [tenantId, sub]))[0]
        .email_verified;
    // Verified at the upstream: a local account, and both say so (OIDC Core §5.1, §5.4 email scope).
    const first = await signedInUser(t, 'gina');
    t.is(first.idToken.email, 'gina@upstream.example');
    t.is(first.idToken.email_verified, true);
    t.like(await userinfo(first.accessToken), { email: 'gina@upstream.example', email_verified: true });
    // The upstream no longer vouches for the address (absent counts as not verified too).
    op.accounts.gina.email_verified = false;
    try {
      const second = await signedInUser(t, 'gina');
      t.is(second.sub, first.sub);
      t.is(second.idToken.email_verified, false);
      t.like(await userinfo(second.accessToken), { email: 'gina@upstream.example', email_verified: false });
      t.is(Number(await verifiedOf(first.sub)), 0);
      delete op.accounts.gina.email_verified;
      const third = await signedInUser(t, 'gina');
      t.is(third.idToken.email_verified, false);
    } finally {
      op.accounts.gina.email_verified = true;
    }
    // Verified again: true again.
    const fourth = await signedInUser(t, 'gina');
    t.is(fourth.idToken.email_verified, true);
    t.like(await userinfo(fourth.accessToken), { email_verified: true });
    t.is(Number(await verifiedOf(first.sub)), 1);
  },
);

test.serial('a verified address links to the existing local user when the provider allows it', async (t) => {
  const { sub } = await signedInUser(t, 'bob');
  t.is(sub, bobId);
  t.is((await linksOf(bobId)).length, 1);
});

test.serial('an unverified address is never linked to the local user who has it, nor makes an account', async (t) => {
  const { res } = await signInAs(t, 'mallory');
  t.is(res.status, 400);
  t.regex(await res.text(), /Signing in with Upstream Corp cannot be completed here/);
  t.is(res.headers.getSetCookie().filter((c) => c.startsWith('service_session=')).length, 0);
  t.is((await linksOf(carolId)).length, 0);
  const { res: dave } = await signInAs(t, 'dave');
  t.is(dave.status, 400);
  t.regex(await dave.text(), /Signing in with Upstream Corp cannot be completed here/);
  t.is(
    (
      await sql(db.url, db.dir, 'SELECT id FROM users WHERE tenant_id = ? AND email = ?', [
        tenantId,
        'dave@upstream.example',
      ])
    ).length,
    0,
  );
});

/**
 * The refusal page with what differs from one authorization request to the next taken out:
 * the request's id and CSRF token (in the hidden fields and the passkey script's data) and the
 * page's CSP nonce.
 */
function comparable(html: string): string {
  let out = html;
  for (const v of [challengeFrom(html), csrfFrom(html)]) out = out.split(v).join('<per-request>');
  return out.replace(/nonce="[^"]+"/g, 'nonce="<nonce>"');
}

test.serial(
  'refusals that depend on local accounts are one page: account exists (unlinkable or disabled) or none',
  async (t) => {
    await sql(db.url, db.dir, "UPDATE users SET status = 'disabled' WHERE tenant_id = ? AND id = ?", [
      tenantId,
      erinId,
    ]);
    const pages: Record<string, { status: number; body: string; sessions: number }> = {};
    const refusal = async (name: string, account: string) => {
      const { res } = await signInAs(t, account);
      const body = await res.text();
      pages[name] = {
        status: res.status,
        body: comparable(body),
        sessions: res.headers.getSetCookie().filter((c) => c.startsWith('service_session=')).length,
      };
    };
    // A local account exists with the address, unverified at the upstream (not linkable).
    await refusal('account exists, unverified address', 'mallory');
    // A local account exists with the verified address, but it is disabled.
    await refusal('account exists, disabled', 'erin');
    // No local account; sign-up is open but the address is not verified.
    await refusal('no account, unverified address', 'dave');
    // No local account, and sign-up closed.
    const [tenant] = await sql(db.url, db.dir, 'SELECT settings FROM tenants WHERE id = ?', [tenantId]);
    // A JSON text on SQLite; the MySQL driver may hand it over parsed.
    const settings = typeof tenant.settings === 'string' ? tenant.settings : JSON.stringify(tenant.settings);
    await sql(db.url, db.dir, 'UPDATE tenants SET settings = ? WHERE id = ?', [
      JSON.stringify({ ...JSON.parse(settings), allowSignup: false }),
      tenantId,
    ]);
    try {
      await refusal('no account, sign-up closed', 'frank');
    } finally {
      await sql(db.url, db.dir, 'UPDATE tenants SET settings = ? WHERE id = ?', [settings, tenantId]);
    }
    const [first, ...rest] = Object.entries(pages);
    t.is(first[1].status, 400);
    t.is(first[1].sessions, 0);
    t.regex(first[1].body, /Signing in with Upstream Corp cannot be completed here\./);
    for (const [name, page] of rest) {
      t.is(page.status, first[1].status, `${name}: the same status as ${first[0]}`);
      t.is(page.sessions, 0, name);
      t.is(page.body, first[1].body, `${name}: the same page as ${first[0]}`);
    }
    // The specific reason is in the log only.
    const logged = () =>
      new Set(d.logs.filter((l) => l.msg === 'upstream sign-in refused').map((l) => String(l.failure)));
    const reasons = ['account_exists', 'account_disabled', 'email_not_verified', 'no_account'];
    t.true(
      await until(() => reasons.every((r) => logged().has(r)), {
        timeoutMs: 5_000,
        what: () => [...logged()].join(', '),
      }),
    );
    // Nothing was made for any of them: no link, no account.
    t.is((await linksOf(carolId)).length, 0);
    t.is((await linksOf(erinId)).length, 0);
    const made = await sql(db.url, db.dir, 'SELECT id FROM users WHERE tenant_id = ? AND email IN (?, ?)', [
      tenantId,
      'dave@upstream.example',
      'frank@upstream.example',
    ]);
    t.is(made.length, 0);
  },
);

test.serial('a callback with another state, or from another browser, is refused and signs nobody in', async (t) => {
  const s = await startAtLoginPage(t);
  op.loginAs = 'alice';
  const callback = await op.follow(s.upstreamUrl.toString());
  const tampered = new URL(callback);
  tampered.searchParams.set('state', `${callback.searchParams.get('state')}x`);
  const r1 = await get(tampered.toString(), s.jar);
  t.is(r1.status, 400);
  t.regex(await r1.text(), /expired or was already used/);
  // The right state in a browser without the binding cookie.
  const other = new CookieJar();
  const r2 = await get(callback.toString(), other);
  t.is(r2.status, 400);
  t.regex(await r2.text(), /another browser/);
  t.false(other.cookies.has('service_session'));
  // The pending request is single use: after a refusal from the right browser it cannot be replayed.
  const ok = await followOurs(callback.toString(), s.jar);
  t.is(ok.status, 302);
  const replay = await get(callback.toString(), s.jar);
  t.is(replay.status, 400);
});

test.serial('an ID token whose nonce is not the one sent is refused', async (t) => {
  const s = await startAtLoginPage(t);
  // What the upstream will put in the ID token is the nonce it was sent; change ours.
  await sql(
    db.url,
    db.dir,
    "UPDATE upstream_login_states SET nonce = 'not-the-nonce-sent' WHERE tenant_id = ? AND consumed_at IS NULL",
    [tenantId],
  );
  op.loginAs = 'alice';
  const callback = await op.follow(s.upstreamUrl.toString());
  const res = await get(callback.toString(), s.jar);
  t.is(res.status, 400);
  t.regex(await res.text(), /nonce/);
  t.is(res.headers.getSetCookie().filter((c) => c.startsWith('service_session=')).length, 0);
});

test.serial(
  'a link needing re-authentication: prompt=none is login_required, otherwise the user goes through the upstream',
  async (t) => {
    const { sub, jar } = await signedInUser(t, 'bob');
    await sql(
      db.url,
      db.dir,
      "UPDATE upstream_identity_links SET state = 'reauthentication_required' WHERE tenant_id = ? AND user_id = ?",
      [tenantId, sub],
    );
    const p = pkce();
    const params = {
      response_type: 'code',
      client_id: web.clientId,
      redirect_uri: REDIRECT,
      scope: 'openid',
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
    };
    const silent = await get(authorizeUrl(d.url, { ...params, prompt: 'none' }), jar);
    t.is(silent.status, 302);
    t.is(new URL(silent.headers.get('location')!).searchParams.get('error'), 'login_required');
    const loud = await get(authorizeUrl(d.url, params), jar);
    t.is(loud.status, 302);
    const upstream = new URL(loud.headers.get('location')!);
    t.is(upstream.origin, op.issuer);
    op.loginAs = 'bob';
    const callback = await op.follow(upstream.toString());
    const res = await followOurs(callback.toString(), jar);
    t.is(res.status, 302);
    const code = new URL(res.headers.get('location')!).searchParams.get('code');
    t.truthy(code);
    const tokens = await redeem(code!, p.verifier);
    t.is(decodeJwt(String(tokens.body.id_token)).sub, sub);
    t.is((await linksOf(sub))[0].state, 'active');
  },
);

test.serial(
  'registration: issuer checks, discovery at add time, duplicates, no secret shown; disable removes the button',
  async (t) => {
    const bad = await adminCall('POST', { issuer: 'http://idp.example.com', client_id: 'x', client_secret: 'y' });
    t.is(bad.status, 400);
    t.regex(String(bad.body.error_description), /^body\.issuer: /);
    const q = await adminCall('POST', { issuer: `${op.issuer}?x=1`, client_id: 'x', client_secret: 'y' });
    t.is(q.status, 400);
    t.regex(String(q.body.error_description), /body\.issuer: must not contain a query/);
    const unreachable = await adminCall('POST', { issuer: 'https://127.0.0.1:1', client_id: 'x', client_secret: 'y' });
    t.is(unreachable.status, 400);
    t.is(unreachable.body.error, 'upstream_discovery_failed');
    t.regex(String(unreachable.body.error_description), /^body\.issuer: discovery of https:\/\/127\.0\.0\.1:1 failed/);
    const noOpenid = await adminCall('POST', {
      issuer: op.issuer,
      client_id: 'x',
      client_secret: 'y',
      scopes: ['email'],
    });
    t.is(noOpenid.status, 400);
    t.regex(String(noOpenid.body.error_description), /body\.scopes: must include openid/);
    const dup = await adminCall('POST', { issuer: op.issuer, client_id: op.clientId, client_secret: 'other' });
    t.is(dup.status, 409);
    const list = await adminCall('GET');
    const [idp] = list.body.identity_providers as Record<string, unknown>[];
    t.is(idp.slug, 'upstream-corp');
    t.is(idp.redirect_uri, `${d.url}/login/upstream/callback`);
    t.false('client_secret' in idp);
    t.false(JSON.stringify(list.body).includes('sealed'));
    const one = await adminCall('GET', undefined, '/upstream-corp');
    t.is(one.body.id, idp.id);
    const disabled = await adminCall('PATCH', { status: 'disabled' }, `/${String(idp.id)}`);
    t.is(disabled.status, 200);
    t.is(disabled.body.status, 'disabled');
    const p = pkce();
    const page = await get(
      authorizeUrl(d.url, {
        response_type: 'code',
        client_id: web.clientId,
        redirect_uri: REDIRECT,
        scope: 'openid',
        code_challenge: p.challenge,
        code_challenge_method: 'S256',
      }),
      new CookieJar(),
    );
    t.notRegex(await page.text(), /Continue with/);
    t.is((await adminCall('PATCH', { status: 'active' }, `/${String(idp.id)}`)).body.status, 'active');
    // Another tenant's admin token cannot see this tenant's providers (requireTenantAccess).
    const other = await fetch(`${d.url}/api/admin/tenants/ten_other/identity-providers`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    t.is(other.status, 403);
  },
);
