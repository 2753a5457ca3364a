/**
 * Dynamic client registration (RFC 7591) and management (RFC 7592) against one daemon, with
 * openid-client as the registering client (docs/registration.md). Tenants: `open` (anonymous,
 * generous limits), `flood` (anonymous, small limits), `iat` (initial access tokens only) and
 * the seed tenant (closed, the default policy).
 */
import test from 'ava';
import * as oidc from 'openid-client';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { api } from '../helpers/api.js';
import { createTestDatabase, TEST_SECRET_KEY, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { loginKit } from '../helpers/login.js';
import { challengeFrom, csrfFrom, get, pkce, REDIRECT } from '../helpers/oauth.js';
import { activeTenant, clientCredentialsToken, openServices, seed } from '../helpers/seed.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { ClientLifecycleService } from '../../shared/services/client-lifecycle.js';
import { UnusedClientExpiry } from '../../shared/services/registration/index.js';

let db: TestDb;
let d: Daemon;
let sink: SmtpSink;
let admin: string;
let services: Awaited<ReturnType<typeof openServices>>;
/** A query on the test's own connection to the daemon's database. */
const q = (query: string, params: unknown[] = []): Promise<any[]> => services.ds.query(query, params);
const tenants = { seed: '', open: '', flood: '', iat: '' };
const USER = 'dcr-user@example.com';
const insecure = { execute: [oidc.allowInsecureRequests] };

test.before(async () => {
  db = await createTestDatabase();
  const s = await seed(db.url, db.dir);
  tenants.seed = s.tenantId;
  const opened = await openServices(db.url, db.dir);
  const { provisioning, directory } = opened;
  const actor = { type: 'system' as const, id: 'test' };
  for (const k of ['open', 'flood', 'iat'] as const)
    tenants[k] = (await activeTenant(provisioning, { name: k }, actor)).id;
  await directory.createUser(tenants.open, { email: USER, name: 'DCR user' }, actor);
  services = opened;
  sink = await startSmtpSink();
  d = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url, IAM_EMAIL_CODE_RESEND_SECONDS: '0' });
  admin = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  const put = (t: string, body: unknown) =>
    api(d.url, 'PUT', `/api/admin/tenants/${t}/registration-policy`, { token: admin, body });
  const keys = await vendorKeys();
  for (const r of [
    await put(tenants.open, {
      mode: 'open',
      scopeCeiling: ['openid', 'profile', 'email', 'offline_access', 'api.read'],
      openLimits: { perIpPerHour: 1000, perTenantPerDay: 1000 },
      softwareStatementIssuers: [{ iss: 'https://vendor.example', jwks: { keys: [keys.publicJwk] } }],
    }),
    await put(tenants.flood, { mode: 'open', openLimits: { perIpPerHour: 3, perTenantPerDay: 100 } }),
    await put(tenants.iat, { mode: 'initial_access_token', clientSecretTtlSeconds: 86_400 }),
  ])
    if (r.status !== 200) throw new Error(`policy: ${r.status} ${r.text}`);
});
test.after.always(async () => {
  await services?.ds.destroy();
  await d?.stop();
  await sink?.close();
  await db?.drop();
});

let vendor: Awaited<ReturnType<typeof makeVendorKeys>> | undefined;
async function makeVendorKeys() {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  return { privateKey, publicJwk: { ...(await exportJWK(publicKey)), alg: 'ES256' } };
}
async function vendorKeys() {
  return (vendor ??= await makeVendorKeys());
}

const register = (body: unknown, token?: string) => api(d.url, 'POST', '/register', { body, token });
const publicApp = (tenantId: string, extra: Record<string, unknown> = {}) => ({
  tenant_id: tenantId,
  client_name: 'Agent app',
  redirect_uris: [REDIRECT],
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code', 'refresh_token'],
  scope: 'openid email',
  ...extra,
});

test.serial('discovery names the registration endpoint', async (t) => {
  const meta = await api(d.url, 'GET', '/.well-known/oauth-authorization-server');
  t.is(meta.body.registration_endpoint, `${d.url}/register`);
  const oidcMeta = await api(d.url, 'GET', '/.well-known/openid-configuration');
  t.is(oidcMeta.body.registration_endpoint, `${d.url}/register`);
});

test.serial(
  'no tenant named and no default: invalid_client_metadata naming tenant_id; then the default tenant',
  async (t) => {
    const { tenant_id: _n, ...anon } = publicApp(tenants.open);
    const refused = await register(anon);
    t.is(refused.status, 400);
    t.is(refused.body.error, 'invalid_client_metadata');
    t.regex(refused.body.error_description, /tenant_id/);

    const set = await api(d.url, 'PUT', '/api/admin/platform/registration', {
      token: admin,
      body: { defaultTenantId: tenants.open },
    });
    t.is(set.status, 200);
    t.deepEqual((await api(d.url, 'GET', '/api/admin/platform/registration', { token: admin })).body, {
      defaultTenantId: tenants.open,
    });
    const ok = await register(anon);
    t.is(ok.status, 201, ok.text);
    t.is(ok.body.tenant_id, tenants.open);
  },
);

test.serial(
  'openid-client registers a public client anonymously (open), which then signs a user in with PKCE',
  async (t) => {
    const config = await oidc.dynamicClientRegistration(
      new URL(d.url),
      {
        client_name: 'MCP client',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        scope: 'openid email',
        tenant_id: tenants.open,
        policy_uri: 'https://app.example/privacy',
        tos_uri: 'https://app.example/tos',
      },
      oidc.None(),
      insecure,
    );
    const m = config.clientMetadata();
    t.truthy(m.client_id);
    t.is(m.client_secret, undefined);
    t.is(m.client_secret_expires_at, 0);
    t.truthy(m.registration_access_token);
    t.is(m.registration_client_uri, `${d.url}/register/${m.client_id}`);
    const [row] = await q('SELECT registered_via, first_party, policy_uri, tos_uri FROM clients WHERE client_id = ?', [
      m.client_id,
    ]);
    t.is(row.registered_via, 'dynamic');
    t.falsy(Number(row.first_party));
    t.is(row.policy_uri, 'https://app.example/privacy');
    t.is(row.tos_uri, 'https://app.example/tos');

    // The third-party consent page, then the code redeemed by the public client with its verifier.
    const kit = loginKit(
      () => d.url,
      () => sink,
    );
    const jar = await kit.signIn(m.client_id, USER);
    const p = pkce();
    const page = await get(`${d.url}/authorize?${new URLSearchParams(kit.authParams(m.client_id, p.challenge))}`, jar);
    const html = await page.text();
    const res = await fetch(`${d.url}/authorize/consent`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
      body: new URLSearchParams({ challenge: challengeFrom(html), csrf: csrfFrom(html), decision: 'allow' }),
    });
    const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
    const tok = await fetch(`${d.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        code_verifier: p.verifier,
        client_id: m.client_id,
      }),
    });
    t.is(tok.status, 200);
    t.truthy(((await tok.json()) as { access_token?: string }).access_token);

    // An unused registration of the same age, and the expiry pass eight days later: only it goes.
    const unused = await register(publicApp(tenants.open, { client_name: 'Never used' }));
    t.is(unused.status, 201);
    const lifecycle = new ClientLifecycleService(services.ds, TEST_SECRET_KEY, services.directory);
    const r = await new UnusedClientExpiry(services.ds, () => lifecycle).run(Date.now() + 8 * 86_400_000);
    t.true(r.deleted >= 1);
    t.true(r.used >= 1);
    t.is((await q('SELECT 1 FROM clients WHERE client_id = ?', [unused.body.client_id])).length, 0);
    t.is((await q('SELECT 1 FROM clients WHERE client_id = ?', [m.client_id])).length, 1);
    const [reg] = await q('SELECT used_at FROM client_registrations WHERE client_id = ?', [m.client_id]);
    t.truthy(reg.used_at);
  },
);

test.serial(
  'openid-client registers with an initial access token; RFC 7592 read, update (rotated token), delete',
  async (t) => {
    const iat = await api(d.url, 'POST', `/api/admin/tenants/${tenants.iat}/registration/initial-access-tokens`, {
      token: admin,
      body: { maxUses: 1 },
    });
    t.is(iat.status, 201, iat.text);
    t.regex(iat.body.token, /^iat_/);
    const config = await oidc.dynamicClientRegistration(
      new URL(d.url),
      {
        client_name: 'Backend',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'client_credentials'],
        scope: 'openid profile',
      },
      undefined,
      { ...insecure, initialAccessToken: iat.body.token },
    );
    const m = config.clientMetadata();
    t.truthy(m.client_secret);
    t.true((m.client_secret_expires_at as number) > Date.now() / 1000);
    t.is(m.token_endpoint_auth_method, 'client_secret_basic');
    // The confidential client authenticates with what it was given.
    const cc = await clientCredentialsToken(d.url, m.client_id, m.client_secret as string, 'profile');
    t.truthy(cc);

    // The token's one use is spent: a second registration with it is refused.
    const again = await register({ redirect_uris: [REDIRECT] }, iat.body.token);
    t.is(again.status, 401);
    t.is(again.body.error, 'invalid_token');
    t.regex(again.headers.get('www-authenticate') ?? '', /^Bearer /);
    const listed = await api(d.url, 'GET', `/api/admin/tenants/${tenants.iat}/registration/initial-access-tokens`, {
      token: admin,
    });
    t.is(listed.body.tokens[0].uses, 1);
    t.false(listed.text.includes(iat.body.token));

    const uri = m.registration_client_uri as string;
    const rat = m.registration_access_token as string;
    const read = await api(d.url, 'GET', new URL(uri).pathname, { token: rat });
    t.is(read.status, 200);
    t.is(read.body.client_name, 'Backend');
    t.is((await api(d.url, 'GET', new URL(uri).pathname, { token: 'wrong' })).status, 401);
    const missing = await api(d.url, 'GET', new URL(uri).pathname);
    t.is(missing.status, 401);
    t.is(missing.headers.get('www-authenticate'), 'Bearer realm="iam"');

    const updated = await api(d.url, 'PUT', new URL(uri).pathname, {
      token: rat,
      body: {
        client_id: m.client_id,
        client_name: 'Backend v2',
        redirect_uris: [REDIRECT, 'https://rp.example.test/cb2'],
        grant_types: ['authorization_code', 'client_credentials'],
        scope: 'openid',
        tos_uri: 'https://app.example/tos2',
      },
    });
    t.is(updated.status, 200, updated.text);
    t.is(updated.body.client_name, 'Backend v2');
    t.is(updated.body.tos_uri, 'https://app.example/tos2');
    t.deepEqual(updated.body.redirect_uris, [REDIRECT, 'https://rp.example.test/cb2']);
    t.not(updated.body.registration_access_token, rat);
    t.is((await api(d.url, 'GET', new URL(uri).pathname, { token: rat })).status, 401, 'the old token stops');
    const next = updated.body.registration_access_token as string;
    // The admin API's rules: a confidential client cannot become public here either.
    const flip = await api(d.url, 'PUT', new URL(uri).pathname, {
      token: next,
      body: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' },
    });
    t.is(flip.status, 400);
    t.is(flip.body.error, 'invalid_client_metadata');

    const del = await api(d.url, 'DELETE', new URL(uri).pathname, { token: next });
    t.is(del.status, 204);
    t.is((await q('SELECT 1 FROM clients WHERE client_id = ?', [m.client_id])).length, 0);
    t.is((await q('SELECT 1 FROM client_registrations WHERE client_id = ?', [m.client_id])).length, 0);
    const tokenAfter = await fetch(`${d.url}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: 'Basic ' + Buffer.from(`${m.client_id}:${m.client_secret}`).toString('base64'),
      },
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
    });
    t.is(tokenAfter.status, 401);
    // Who did what: the token admitted it, the client itself changed and deleted it.
    const audit = await q('SELECT action, actor_id FROM audit_events WHERE target_id = ?', [m.client_id]);
    const by = Object.fromEntries(audit.map((a) => [a.action, a.actor_id]));
    t.deepEqual(by, {
      'client.create': iat.body.id,
      'client.registration.update': m.client_id,
      'client.update': m.client_id,
      'client.delete': m.client_id,
    });
  },
);

test.serial('refusals: RFC 7591 §3.2.2 errors, the policy, and expired tokens', async (t) => {
  const bad = async (body: unknown, error: string, re: RegExp, token?: string, status = 400) => {
    const r = await register(body, token);
    t.is(r.status, status, r.text);
    t.is(r.body.error, error);
    t.regex(r.body.error_description, re);
  };
  const open = tenants.open;
  await bad(publicApp(open, { redirect_uris: ['http://evil.example/cb'] }), 'invalid_redirect_uri', /redirect_uris/);
  await bad(publicApp(open, { redirect_uris: ['com.example.app:/cb'] }), 'invalid_redirect_uri', /native/);
  t.is(
    (await register(publicApp(open, { redirect_uris: ['com.example.app:/cb'], application_type: 'native' }))).status,
    201,
  );
  await bad(
    publicApp(open, {
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [(await vendorKeys()).publicJwk] },
      jwks_uri: 'https://app.example/jwks',
    }),
    'invalid_client_metadata',
    /jwks_uri/,
  );
  await bad(
    publicApp(open, { token_endpoint_auth_method: 'client_secret_basic' }),
    'invalid_client_metadata',
    /open registration/,
  );
  await bad(
    publicApp(open, { application_type: 'native', token_endpoint_auth_method: 'client_secret_post' }),
    'invalid_client_metadata',
    /native/,
  );
  await bad(publicApp(open, { scope: 'openid iam.admin' }), 'invalid_client_metadata', /iam\.admin/);
  await bad(publicApp(open, { scope: 'openid scim' }), 'invalid_client_metadata', /scim/);
  await bad(publicApp(open, { scope: 'openid payments' }), 'invalid_client_metadata', /payments/);
  await bad(publicApp(open, { grant_types: ['client_credentials'] }), 'invalid_client_metadata', /client_credentials/);
  await bad(publicApp(tenants.seed), 'access_denied', /closed/, undefined, 403);
  await bad(publicApp(tenants.iat), 'invalid_token', /initial access token/, undefined, 401);
  await bad(publicApp(tenants.iat), 'invalid_token', /not valid/, 'iat_unknown', 401);

  // An expired token: written as expired (the API's shortest lifetime is a minute).
  const iat = await api(d.url, 'POST', `/api/admin/tenants/${tenants.iat}/registration/initial-access-tokens`, {
    token: admin,
    body: { maxUses: 5, expiresInSeconds: 60 },
  });
  await q('UPDATE initial_access_tokens SET expires_at = ? WHERE id = ?', [Date.now() - 1, iat.body.id]);
  await bad({ redirect_uris: [REDIRECT] }, 'invalid_token', /expired/, iat.body.token, 401);

  // Software statements (RFC 7591 §2.3): a trusted issuer's claims win; others are refused.
  const sign = (key: CryptoKey, iss: string) =>
    new SignJWT({ client_name: 'From the statement', software_id: 'vendor-app' })
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(iss)
      .setIssuedAt()
      .sign(key);
  const { privateKey } = await vendorKeys();
  const ok = await register(publicApp(open, { software_statement: await sign(privateKey, 'https://vendor.example') }));
  t.is(ok.status, 201, ok.text);
  t.is(ok.body.client_name, 'From the statement');
  t.is(ok.body.software_id, 'vendor-app');
  await bad(
    publicApp(open, { software_statement: await sign(privateKey, 'https://other.example') }),
    'unapproved_software_statement',
    /other\.example/,
  );
  const stranger = await makeVendorKeys();
  await bad(
    publicApp(open, { software_statement: await sign(stranger.privateKey, 'https://vendor.example') }),
    'invalid_software_statement',
    /signature/,
  );
});

test.serial(
  'a flood of anonymous registrations is refused by the limit and leaves no more rows than it allows',
  async (t) => {
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => register(publicApp(tenants.flood, { client_name: `f${i}` }))),
    );
    const created = answers.filter((a) => a.status === 201).length;
    const refused = answers.filter((a) => a.status === 429);
    t.is(created, 3);
    t.is(refused.length, 5);
    t.is(refused[0].body.error, 'slow_down');
    t.truthy(refused[0].headers.get('retry-after'));
    const [n] = await q('SELECT COUNT(*) AS n FROM clients WHERE tenant_id = ?', [tenants.flood]);
    t.is(Number(n.n), 3);
  },
);
