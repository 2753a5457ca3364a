/**
 * The OpenID Connect Core §5.1 standard claims (docs/claims.md, "Standard claims"): an operator
 * gives a user given_name, family_name, locale, zoneinfo, phone_number, address and the rest;
 * a tenant turns the optional `address` and `phone` scopes on; the ID token and UserInfo
 * release each scope's claims (§5.4), and only while the tenant offers them. The conformance
 * modules oidcc-scope-profile, -email, -address, -phone and -all run here as the suite runs
 * them (docs/conformance.md, "the suite's way"): a confidential client registered for RS256
 * without PKCE asks for the scopes with no code_challenge, redeems with its secret alone, and
 * reads both the ID token and UserInfo.
 */
import test from 'ava';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { TestDb } from '../helpers/db.js';
import type { Daemon } from '../helpers/daemon.js';
import type { SmtpSink } from '../helpers/smtp-sink.js';
import { clientCredentialsToken } from '../helpers/seed.js';
import { loginKit, type ClientCreds } from '../helpers/login.js';
import { authorizeUrl, get, REDIRECT, sql, type App } from '../helpers/oauth.js';
import { startLoginEnv, stopLoginEnv } from '../helpers/env.js';
import { api } from '../helpers/api.js';

let db: TestDb;
let d: Daemon;
let app: App;
let sink: SmtpSink;
let admin: string;
let rp: ClientCreds;
let n = 0;

const kit = loginKit(
  () => d.url,
  () => sink,
);

// The content-type goes on every call, a GET's too, as it always has.
const adminCall = (method: string, path: string, body?: unknown) =>
  api(d.url, method, path, { body, token: admin, headers: { 'content-type': 'application/json' } });
const setScopes = (scopes: string[]) =>
  adminCall('PUT', `/api/admin/tenants/${app.tenantId}/standard-claims`, { scopes });

const ADA = {
  given_name: 'Ada',
  family_name: 'Lovelace',
  middle_name: 'King',
  nickname: 'ada',
  preferred_username: 'ada.l',
  profile: 'https://example.com/ada',
  picture: 'https://example.com/ada.png',
  website: 'https://ada.example.com',
  gender: 'female',
  birthdate: '1815-12-10',
  zoneinfo: 'Europe/London',
  locale: 'en-gb',
  phone_number: '+442071234567',
  phone_number_verified: true,
  address: {
    formatted: '12 St James Square\nLondon SW1Y 4JH\nUnited Kingdom',
    street_address: '12 St James Square',
    locality: 'London',
    postal_code: 'SW1Y 4JH',
    country: 'GB',
  },
};

test.before(async () => {
  ({ db, d, app, sink } = await startLoginEnv());
  admin = await clientCredentialsToken(d.url, app.admin.clientId, app.admin.secret);
  const c = await adminCall('POST', `/api/admin/tenants/${app.tenantId}/clients`, {
    name: 'Certification RP',
    redirect_uris: [REDIRECT],
    first_party: true,
    scopes: ['openid', 'profile', 'email', 'address', 'phone'],
    id_token_signed_response_alg: 'RS256',
    require_pkce: false,
  });
  if (c.status !== 201) throw new Error(`client ${c.status} ${JSON.stringify(c.body)}`);
  rp = { clientId: String(c.body.client_id), secret: String(c.body.client_secret) };
});
test.after.always(() => stopLoginEnv({ db, d, sink }));

/** A user with `claims`, signed in at the certification client. */
async function signedIn(claims: Record<string, unknown>) {
  const email = `std${++n}-${Date.now()}@example.com`;
  const u = await adminCall('POST', `/api/admin/tenants/${app.tenantId}/users`, {
    email,
    name: 'Ada Lovelace',
    ...claims,
  });
  if (u.status !== 201) throw new Error(`user ${u.status} ${JSON.stringify(u.body)}`);
  return { jar: await kit.signIn(rp.clientId, email), user: u.body, email };
}

/** The suite's request: no code_challenge, the client's own parameters. */
const suiteRequest = (scope: string) =>
  authorizeUrl(
    d.url,
    kit.authParams(rp.clientId, 'unused', {
      prompt: 'none',
      scope,
      code_challenge: undefined,
      code_challenge_method: undefined,
    }),
  );

/** The suite's redemption: client_secret_basic and no code_verifier. */
async function redeem(code: string) {
  const r = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: kit.basic(rp) },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }),
  });
  const body = (await r.json()) as Record<string, string>;
  if (r.status !== 200) throw new Error(`token ${r.status} ${JSON.stringify(body)}`);
  return body;
}

/** The code flow for `scope`; the decoded ID token (RS256, as registered) and the UserInfo answer. */
async function tokens(jar: Awaited<ReturnType<typeof signedIn>>['jar'], scope: string) {
  const r = await get(suiteRequest(scope), jar);
  const loc = new URL(r.headers.get('location')!);
  const code = loc.searchParams.get('code');
  if (!code) return { error: loc.searchParams.get('error') };
  const t = await redeem(code);
  if (decodeProtectedHeader(t.id_token).alg !== 'RS256') throw new Error('the ID token is not RS256');
  const ui = await fetch(`${d.url}/userinfo`, { headers: { authorization: `Bearer ${t.access_token}` } });
  return {
    error: null,
    id: decodeJwt(t.id_token) as Record<string, unknown>,
    userinfo: (await ui.json()) as Record<string, unknown>,
  };
}

const PROFILE = [
  'name',
  'given_name',
  'family_name',
  'middle_name',
  'nickname',
  'preferred_username',
  'profile',
  'picture',
  'website',
  'gender',
  'birthdate',
  'zoneinfo',
  'locale',
];

test.serial('the admin API keeps a user’s standard claims and shows them', async (t) => {
  const { user } = await signedIn(ADA);
  for (const [k, v] of Object.entries(ADA)) t.deepEqual(user[k], k === 'locale' ? 'en-GB' : v, k);
  const list = await adminCall('GET', `/api/admin/tenants/${app.tenantId}/users?limit=1000`);
  const listed = (list.body.users as Record<string, unknown>[]).find((u) => u.id === user.id)!;
  t.is(listed.given_name, 'Ada');
  t.deepEqual(listed.address, ADA.address);
  t.false('standard_claims' in listed, 'the storage column is not shown as such');
});

test.serial(
  'oidcc-scope-profile and -email: the profile and email claims in the ID token and at UserInfo',
  async (t) => {
    const { jar, email } = await signedIn(ADA);
    const r = await tokens(jar, 'openid profile email');
    for (const where of [r.id!, r.userinfo!]) {
      for (const k of PROFILE) t.truthy(where[k], k);
      t.is(where.locale, 'en-GB', 'the locale in its canonical BCP 47 form');
      t.is(where.email, email);
      t.is(where.email_verified, true);
      t.is(typeof where.updated_at, 'number');
      t.true((where.updated_at as number) < 1e11, 'updated_at in seconds (OIDC Core §5.1)');
      t.is(where.address, undefined, 'no address without the address scope');
      t.is(where.phone_number, undefined, 'no phone without the phone scope');
    }
  },
);

test.serial(
  'an email code proves the address: email_verified becomes true on the record and in the tokens',
  async (t) => {
    const email = `unverified${++n}-${Date.now()}@example.com`;
    const u = await adminCall('POST', `/api/admin/tenants/${app.tenantId}/users`, { email, name: 'Una' });
    t.is(u.status, 201);
    // As an upstream sign-in leaves it when the upstream did not verify the address.
    const verified = async () =>
      Number(
        (
          (await sql(db.url, db.dir, 'SELECT email_verified FROM users WHERE tenant_id = ? AND id = ?', [
            app.tenantId,
            u.body.id,
          ])) as { email_verified: unknown }[]
        )[0].email_verified,
      );
    await sql(db.url, db.dir, 'UPDATE users SET email_verified = 0 WHERE tenant_id = ? AND id = ?', [
      app.tenantId,
      u.body.id,
    ]);
    t.is(await verified(), 0);
    const r = await tokens(await kit.signIn(rp.clientId, email), 'openid email');
    for (const where of [r.id!, r.userinfo!]) t.like(where, { email, email_verified: true });
    t.is(await verified(), 1);
  },
);

test.serial(
  'a tenant that does not offer address and phone: invalid_scope, although the client has them',
  async (t) => {
    t.is((await setScopes([])).status, 200);
    const { jar } = await signedIn(ADA);
    for (const scope of ['openid address', 'openid phone', 'openid profile email address phone'])
      t.is((await tokens(jar, scope)).error, 'invalid_scope', scope);
  },
);

test.serial('oidcc-scope-address, -phone, -all: a tenant that offers them releases them', async (t) => {
  const on = await setScopes(['phone', 'address']);
  t.is(on.status, 200);
  t.deepEqual(on.body.scopes, ['address', 'phone']);
  t.deepEqual((await adminCall('GET', `/api/admin/tenants/${app.tenantId}/standard-claims`)).body, {
    tenantId: app.tenantId,
    scopes: ['address', 'phone'],
  });
  const { jar } = await signedIn(ADA);
  const address = await tokens(jar, 'openid address');
  for (const where of [address.id!, address.userinfo!]) {
    t.deepEqual(where.address, ADA.address);
    t.is(where.phone_number, undefined);
    t.is(where.given_name, undefined, 'no profile claims without profile');
  }
  const phone = await tokens(jar, 'openid phone');
  for (const where of [phone.id!, phone.userinfo!]) {
    t.is(where.phone_number, '+442071234567');
    t.is(where.phone_number_verified, true);
    t.is(where.address, undefined);
  }
  const all = await tokens(jar, 'openid profile email address phone');
  for (const where of [all.id!, all.userinfo!]) {
    for (const k of [...PROFILE, 'email', 'email_verified', 'address', 'phone_number']) t.not(where[k], undefined, k);
  }
  // A user without a phone number: the claim is left out, never null (OIDC Core §5.3.2).
  const { jar: bare } = await signedIn({});
  const none = await tokens(bare, 'openid profile address phone');
  for (const where of [none.id!, none.userinfo!]) {
    t.false('phone_number' in where);
    t.false('phone_number_verified' in where);
    t.false('address' in where);
    t.false('given_name' in where);
    t.is(where.name, 'Ada Lovelace');
  }
});

test.serial('turning a scope off stops its claims at once, for a grant given before', async (t) => {
  t.is((await setScopes(['address', 'phone'])).status, 200);
  const { jar } = await signedIn(ADA);
  const r = await get(suiteRequest('openid phone'), jar);
  const code = new URL(r.headers.get('location')!).searchParams.get('code')!;
  const tk = await redeem(code);
  const userinfo = async () =>
    (await (
      await fetch(`${d.url}/userinfo`, { headers: { authorization: `Bearer ${tk.access_token}` } })
    ).json()) as Record<string, unknown>;
  t.is((await userinfo()).phone_number, '+442071234567');
  t.is((await setScopes(['address'])).status, 200);
  t.is((await userinfo()).phone_number, undefined);
});

test('bad standard claims are refused with the field named, and nothing is created', async (t) => {
  const bad: [Record<string, unknown>, string][] = [
    [{ phone_number: '0207 123 4567' }, 'phone_number'],
    [{ phone_number: '+0123' }, 'phone_number'],
    [{ birthdate: '1815-02-30' }, 'birthdate'],
    [{ birthdate: '10-12-1815' }, 'birthdate'],
    [{ zoneinfo: 'Mars/Olympus' }, 'zoneinfo'],
    [{ locale: 'not a locale!' }, 'locale'],
    [{ website: 'javascript:alert(1)' }, 'website'],
    [{ picture: 'ftp://example.com/a.png' }, 'picture'],
    [{ address: {} }, 'address'],
    [{ address: { country: 'GB', planet: 'Earth' } }, 'address'],
    [{ phone_number_verified: 'yes' }, 'phone_number_verified'],
    [{ given_name: '' }, 'given_name'],
    [{ given_name: 'x'.repeat(256) }, 'given_name'],
    [{ sub: 'usr_someone_else' }, 'sub'],
  ];
  for (const [claims, field] of bad) {
    const email = `bad${++n}@example.com`;
    const r = await adminCall('POST', `/api/admin/tenants/${app.tenantId}/users`, { email, name: 'Bad', ...claims });
    t.is(r.status, 400, JSON.stringify(claims));
    t.regex(JSON.stringify(r.body), new RegExp(field), JSON.stringify(claims));
  }
  // Accepted forms: a year alone, a withheld year, an extension.
  for (const claims of [{ birthdate: '1815' }, { birthdate: '0000-12-10' }, { phone_number: '+14155550100;ext=42' }]) {
    const r = await adminCall('POST', `/api/admin/tenants/${app.tenantId}/users`, {
      email: `ok${++n}@example.com`,
      name: 'Ok',
      ...claims,
    });
    t.is(r.status, 201, JSON.stringify(r.body));
  }
});

test('the standard-claims setting: only address and phone, each once; a tenant admin of another tenant is refused', async (t) => {
  for (const scopes of [['email'], ['phone', 'phone'], 'phone'])
    t.is((await adminCall('PUT', `/api/admin/tenants/${app.tenantId}/standard-claims`, { scopes })).status, 400);
  t.is((await adminCall('PUT', `/api/admin/tenants/${app.tenantId}/standard-claims`, {})).status, 400);
  const other = await adminCall('GET', `/api/admin/tenants/ten_0000000000000000/standard-claims`);
  t.is(other.status, 403);
});

test('discovery lists the address and phone scopes and every standard claim', async (t) => {
  const m = (await (await fetch(`${d.url}/.well-known/openid-configuration`)).json()) as Record<string, string[]>;
  for (const s of ['openid', 'profile', 'email', 'address', 'phone']) t.true(m.scopes_supported.includes(s), s);
  for (const c of [
    ...PROFILE,
    'updated_at',
    'email',
    'email_verified',
    'address',
    'phone_number',
    'phone_number_verified',
  ])
    t.true(m.claims_supported.includes(c), c);
});
