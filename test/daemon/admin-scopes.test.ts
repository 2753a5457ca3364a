/**
 * Admin scopes (iam.admin, iam.platform) belong to client_credentials clients only
 * (docs/scopes.md): registering one on a client with any other grant is refused by the admin
 * API and the CLI; /authorize never grants one to a user; and a user's token that carries one
 * (as a client registered before the refusal could have obtained) is refused by the admin API
 * with 401 invalid_token.
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { iam } from '../helpers/cli.js';
import { activeTenant, clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';
import { authorizeUrl, get, pkce, REDIRECT, sql } from '../helpers/oauth.js';
import { KeyService } from '../../shared/services/keys.js';
import { TokenService } from '../../shared/services/tokens.js';
import { ADMIN_SCOPES, SCOPE_PLATFORM, SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let platformToken: string;
/** A browser client of the seed tenant holding both admin scopes, as registered before the refusal. */
let legacy: { clientId: string };
let userId: string;
let otherTenant: string;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  try {
    const actor = { type: 'system' as const, id: 'test' };
    const user = await directory.createUser(s.tenantId, { email: 'eve@example.com', name: 'Eve' }, actor);
    userId = user.id;
    const c = await directory.createClient(s.tenantId, { name: 'Legacy', redirect_uris: [REDIRECT] }, actor);
    legacy = { clientId: c.client.client_id };
    otherTenant = (await activeTenant(provisioning, { name: 'Other tenant' }, actor)).id;
    await directory.createUser(otherTenant, { email: 'bob@example.com', name: 'Bob' }, actor);
  } finally {
    await ds.destroy();
  }
  // What a client registered before the refusal looks like: a code-flow client with admin scopes.
  await sql(db.url, db.dir, 'UPDATE clients SET scopes = ? WHERE client_id = ?', [
    JSON.stringify(['openid', 'email', ...ADMIN_SCOPES]),
    legacy.clientId,
  ]);
  d = await startDaemon(db.url, db.dir);
  platformToken = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

const createClient = (body: unknown, token = platformToken) =>
  fetch(`${d.url}/api/admin/tenants/${s.tenantId}/clients`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });

test('the admin API refuses an admin scope on a client with any grant but client_credentials: 400', async (t) => {
  const tenantAdmin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
  const cases: [string, Record<string, unknown>, string][] = [
    ['default grants', { name: 'a', redirect_uris: [REDIRECT], scopes: ['openid', SCOPE_TENANT_ADMIN] }, platformToken],
    [
      'code flow, public',
      {
        name: 'b',
        redirect_uris: [REDIRECT],
        public: true,
        grant_types: ['authorization_code'],
        scopes: [SCOPE_TENANT_ADMIN],
      },
      tenantAdmin,
    ],
    [
      'client_credentials and refresh_token',
      { name: 'c', grant_types: ['client_credentials', 'refresh_token'], scopes: [SCOPE_TENANT_ADMIN] },
      platformToken,
    ],
    [
      'token exchange',
      {
        name: 'd',
        grant_types: ['client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange'],
        scopes: [SCOPE_PLATFORM],
      },
      platformToken,
    ],
    [
      'iam.platform in the code flow',
      { name: 'e', redirect_uris: [REDIRECT], scopes: [SCOPE_PLATFORM] },
      platformToken,
    ],
  ];
  for (const [name, body, token] of cases) {
    const r = await createClient(body, token);
    t.is(r.status, 400, name);
    const e = (await r.json()) as { error: string; error_description: string; details: { field: string }[] };
    t.is(e.error, 'invalid_request', name);
    t.regex(e.error_description, /^body\.scopes: .*client_credentials/, name);
    t.true(
      e.details.some((x) => x.field === 'body.scopes'),
      name,
    );
  }
  // The service clients admin callers are still registered.
  const ok = await createClient({ name: 'ops', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN] });
  t.is(ok.status, 201);
});

test('the CLI refuses an admin scope on a client with any grant but client_credentials', async (t) => {
  for (const args of [
    ['--redirect-uri', REDIRECT, '--scope', 'openid', '--scope', SCOPE_TENANT_ADMIN],
    ['--grant-type', 'authorization_code', '--redirect-uri', REDIRECT, '--scope', SCOPE_PLATFORM],
    ['--grant-type', 'client_credentials', '--grant-type', 'refresh_token', '--scope', SCOPE_PLATFORM],
  ]) {
    const r = await iam(db, ['clients', 'create', '--tenant', s.tenantId, '--name', 'x', ...args]);
    t.not(r.code, 0, args.join(' '));
    t.regex(r.stderr, /--scope.*client_credentials/, args.join(' '));
    t.notRegex(r.stderr, /\n\s+at /, 'no stack trace');
  }
  const ok = await iam(db, [
    'clients',
    'create',
    '--tenant',
    s.tenantId,
    '--name',
    'ops',
    '--grant-type',
    'client_credentials',
    '--scope',
    SCOPE_PLATFORM,
    '--json',
  ]);
  t.is(ok.code, 0, ok.stderr);
});

test('/authorize refuses an admin scope to a user, even on a client registered with it', async (t) => {
  for (const scope of [`openid ${SCOPE_TENANT_ADMIN}`, `openid ${SCOPE_PLATFORM}`]) {
    const r = await get(
      authorizeUrl(d.url, {
        response_type: 'code',
        client_id: legacy.clientId,
        redirect_uri: REDIRECT,
        scope,
        state: 'st',
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      }),
    );
    t.is(r.status, 302, 'no login or consent page is shown');
    const loc = new URL(r.headers.get('location')!);
    t.is(loc.searchParams.get('error'), 'invalid_scope');
    t.is(loc.searchParams.get('state'), 'st');
  }
  // The same client still works for what users may grant.
  const ok = await get(
    authorizeUrl(d.url, {
      response_type: 'code',
      client_id: legacy.clientId,
      redirect_uri: REDIRECT,
      scope: 'openid',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    }),
  );
  t.is(ok.status, 200, 'the login page');
});

/**
 * An access token as the code flow of a legacy client issued it before the fix: the user as
 * subject, a token family, the admin scope the user consented to. Signed with the daemon's
 * own key, through the same service the token endpoint uses.
 */
async function legacyUserToken(scope: string[], family: string | undefined): Promise<string> {
  const { ds, config } = await openServices(db.url, db.dir);
  try {
    const tokens = new TokenService(d.url, new KeyService(ds, config.secretKey, config.keyRetireAfterSeconds));
    const issued = await tokens.issueAccessToken({
      sub: userId,
      clientId: legacy.clientId,
      tenantId: s.tenantId,
      scope: ['openid', ...scope],
      audience: [d.url],
      ttlSeconds: 300,
      ...(family ? { familyId: family } : {}),
    });
    return issued.token;
  } finally {
    await ds.destroy();
  }
}

test("a user's token carrying iam.admin is refused by the admin API: 401 invalid_token", async (t) => {
  for (const family of ['fam_legacy', undefined]) {
    const token = await legacyUserToken([SCOPE_TENANT_ADMIN], family);
    for (const path of [`/api/admin/tenants/${s.tenantId}/users`, `/api/admin/tenants/${s.tenantId}/clients`]) {
      const r = await fetch(`${d.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      t.is(r.status, 401, `${path} family=${family}`);
      t.is(((await r.json()) as { error: string }).error, 'invalid_token');
      t.regex(r.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    }
    const create = await fetch(`${d.url}/api/admin/tenants/${s.tenantId}/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ email: 'mallory@example.com', name: 'M' }),
    });
    t.is(create.status, 401);
  }
});

test("a user's token carrying iam.platform cannot list another tenant's users", async (t) => {
  const path = `/api/admin/tenants/${otherTenant}/users`;
  const control = await fetch(`${d.url}${path}`, { headers: { authorization: `Bearer ${platformToken}` } });
  t.is(control.status, 200, "a platform client's token does list them");
  const token = await legacyUserToken([SCOPE_PLATFORM, SCOPE_TENANT_ADMIN], 'fam_legacy2');
  const r = await fetch(`${d.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  t.is(r.status, 401);
  const body = (await r.json()) as { error: string; users?: unknown };
  t.is(body.error, 'invalid_token');
  t.is(body.users, undefined);
  const tenants = await fetch(`${d.url}/api/admin/tenants`, { headers: { authorization: `Bearer ${token}` } });
  t.is(tenants.status, 401);
});
