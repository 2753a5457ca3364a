/**
 * RFC 8693 token exchange with this service's own tokens as subjects: a user's access token
 * exchanged down a chain of services (nested `act`), `resource` and `aud`, narrowing scope,
 * the token family carried along (revoking the login kills every exchanged token), ID token
 * subjects, and every refusal.
 */
import test from 'ava';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { clientCredentialsToken, openServices, activeTenant } from '../helpers/seed.js';
import { loginKit, type ClientCreds } from '../helpers/login.js';
import { REDIRECT, sql } from '../helpers/oauth.js';
import { AT, claimsOf, exchange, IDT, JAG, putSettings, TE_GRANT } from '../helpers/token-exchange.js';
import { SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';

const API_A = 'https://api-a.example.test';
const API_B = 'https://api-b.example.test';
const API_C = 'https://api-c.example.test';
const MANY = Array.from({ length: 12 }, (_, i) => `https://many-${i}.example.test`);

let db: TestDb;
let d: Daemon;
let sink: SmtpSink;
let tenantId: string;
let web: ClientCreds; // first-party login client; its users' tokens are addressed to API A
let svcA: ClientCreds; // resource server for API A, calls API B
let svcB: ClientCreds; // resource server for API B, calls API C
let bystander: ClientCreds; // allowed to exchange, but no token is for it
let noGrant: ClientCreds; // resource server for API A without the token-exchange grant
let batch: ClientCreds; // a client_credentials client whose tokens are addressed to API A
let admin: string;
let n = 0;
const kit = loginKit(
  () => d.url,
  () => sink,
);

test.before(async () => {
  db = await createTestDatabase();
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  const t = await activeTenant(provisioning, { name: 'Exchange tenant' }, actor);
  tenantId = t.id;
  const mk = async (input: Parameters<typeof directory.createClient>[1]) => {
    const c = await directory.createClient(tenantId, input, actor);
    return { clientId: c.client.client_id, secret: c.client_secret! };
  };
  web = await mk({
    name: 'Web',
    redirect_uris: [REDIRECT],
    first_party: true,
    grant_types: ['authorization_code', 'refresh_token', TE_GRANT],
    scopes: ['openid', 'profile', 'email', 'offline_access', 'account'],
    audiences: [API_A],
  });
  svcA = await mk({
    name: 'Service A',
    grant_types: ['client_credentials', TE_GRANT],
    scopes: ['openid', 'email', 'svc'],
    audiences: [API_B, API_C, ...MANY],
    resource_identifiers: [API_A],
  });
  svcB = await mk({
    name: 'Service B',
    grant_types: ['client_credentials', TE_GRANT],
    scopes: ['openid', 'email', 'svc'],
    audiences: [API_C],
    resource_identifiers: [API_B],
  });
  bystander = await mk({
    name: 'Bystander',
    grant_types: ['client_credentials', TE_GRANT],
    scopes: ['openid', 'email'],
    audiences: [API_C],
  });
  noGrant = await mk({
    name: 'No grant',
    grant_types: ['client_credentials'],
    scopes: ['openid', 'email'],
    resource_identifiers: [API_A],
  });
  batch = await mk({ name: 'Batch', grant_types: ['client_credentials'], scopes: ['svc'], audiences: [API_A] });
  const adm = await mk({ name: 'admin', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN] });
  await ds.destroy();
  sink = await startSmtpSink();
  d = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url, IAM_EMAIL_CODE_RESEND_SECONDS: '0' });
  admin = await clientCredentialsToken(d.url, adm.clientId, adm.secret);
  await putSettings(d.url, admin, {
    enabled: true,
    allowedSubjectTokenTypes: ['access_token', 'id_token'],
    maxResourceParams: 3,
    maxAudienceParams: 2,
  });
});
test.after.always(async () => {
  await d?.stop();
  await sink?.close();
  await db?.drop();
});

/** A fresh user signed in at the web client: access (aud API A), ID and refresh token. */
async function login() {
  const email = `te${++n}-${Date.now()}@example.com`;
  const { ds, directory } = await openServices(db.url, db.dir);
  const user = await directory.createUser(tenantId, { email, name: `User ${n}` }, { type: 'system', id: 'test' });
  await ds.destroy();
  return { user, ...(await kit.tokensFor(web, email)) };
}

const ccToken = (c: ClientCreds) => clientCredentialsToken(d.url, c.clientId, c.secret);

test.serial(
  'a user token down a chain of services: nested act, resource and aud, same sub and family; userinfo answers',
  async (t) => {
    const u = await login();
    const original = claimsOf(u.access_token);
    t.is(original.aud, API_A);

    // Service A received the user's token (addressed to API A) and calls API B on the user's behalf.
    const first = await exchange(d.url, svcA, {
      subject_token: u.access_token,
      subject_token_type: AT,
      actor_token: await ccToken(svcA),
      actor_token_type: AT,
      resource: API_B,
      scope: 'openid email',
    });
    t.is(first.status, 200, JSON.stringify(first.body));
    t.is(first.body.issued_token_type, AT, 'RFC 8693 §2.2.1');
    t.is(first.body.token_type, 'Bearer');
    t.is(first.body.scope, 'openid email');
    t.is(first.body.refresh_token, undefined, 'no refresh token from an exchange');
    t.true(typeof first.body.expires_in === 'number' && first.body.expires_in > 0 && first.body.expires_in <= 600);
    const c1 = claimsOf(first.body.access_token);
    t.is(c1.sub, u.user.id);
    t.is(c1.tenant_id, tenantId);
    t.is(c1.client_id, svcA.clientId);
    t.is(c1.aud, API_B);
    t.is(c1.resource, API_B);
    t.deepEqual(c1.act, { sub: svcA.clientId });
    t.is(c1.fid, original.fid, 'the token family of the login is kept');
    t.true(c1.exp! <= original.exp!, 'never outlives the subject token');

    // Service B received that token (addressed to API B) and calls API C: the chain nests.
    const second = await exchange(d.url, svcB, {
      subject_token: String(first.body.access_token),
      subject_token_type: AT,
      actor_token: await ccToken(svcB),
      actor_token_type: AT,
      audience: API_C,
    });
    t.is(second.status, 200, JSON.stringify(second.body));
    const c2 = claimsOf(second.body.access_token);
    t.deepEqual(c2.act, { sub: svcB.clientId, act: { sub: svcA.clientId } }, 'RFC 8693 §4.1: current actor outermost');
    t.is(c2.aud, API_C);
    t.is(c2.resource, undefined, 'only an audience was asked for');
    t.is(c2.sub, u.user.id);
    t.is(c2.fid, original.fid);
    t.is(second.body.scope, 'openid email', "omitted scope: the subject's, within the client's");

    // The exchanged token is a genuine token of this issuer...
    const jwks = createRemoteJWKSet(new URL(`${d.url}/jwks`));
    const verified = await jwtVerify(String(second.body.access_token), jwks, {
      issuer: d.url,
      typ: 'at+jwt',
      audience: API_C,
    });
    t.is(verified.payload.sub, u.user.id);
    // ...that the user's resources accept.
    const info = await kit.userinfo(String(second.body.access_token));
    t.is(info.status, 200);
    t.like(await info.json(), { sub: u.user.id, email: u.user.email });

    // Introspection by the resource server shows the delegation (interface spec: act, resource).
    const intro = await fetch(`${d.url}/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: kit.basic(svcB) },
      body: new URLSearchParams({ token: String(first.body.access_token) }),
    });
    t.like(await intro.json(), {
      active: true,
      sub: u.user.id,
      act: { sub: svcA.clientId },
      resource: API_B,
      aud: API_B,
    });

    // Without an actor, the subject's chain is carried as it is.
    const third = await exchange(d.url, svcB, {
      subject_token: String(first.body.access_token),
      subject_token_type: AT,
      audience: API_C,
      scope: 'openid',
    });
    t.is(third.status, 200, JSON.stringify(third.body));
    t.deepEqual(claimsOf(third.body.access_token).act, { sub: svcA.clientId });
    t.is(third.body.scope, 'openid', 'narrowing is allowed');
  },
);

test.serial(
  "revoking the login's token family kills every exchanged token, and exchanging a revoked token is refused",
  async (t) => {
    const u = await login();
    const first = await exchange(d.url, svcA, {
      subject_token: u.access_token,
      subject_token_type: AT,
      resource: API_B,
    });
    t.is(first.status, 200, JSON.stringify(first.body));
    const second = await exchange(d.url, svcB, {
      subject_token: String(first.body.access_token),
      subject_token_type: AT,
      audience: API_C,
    });
    t.is(second.status, 200, JSON.stringify(second.body));
    t.is((await kit.userinfo(String(second.body.access_token))).status, 200);

    const revoke = await fetch(`${d.url}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: kit.basic(web) },
      body: new URLSearchParams({ token: u.refresh_token, token_type_hint: 'refresh_token' }),
    });
    t.is(revoke.status, 200);
    t.is((await kit.userinfo(String(first.body.access_token))).status, 401);
    t.is((await kit.userinfo(String(second.body.access_token))).status, 401);
    const again = await exchange(d.url, svcB, {
      subject_token: String(first.body.access_token),
      subject_token_type: AT,
      audience: API_C,
    });
    t.is(again.status, 400);
    t.is(again.body.error, 'invalid_request');
    t.regex(String(again.body.error_description), /revoked/);
  },
);

test.serial("an ID token subject: only the client it was issued to, scope bounded by the user's consent", async (t) => {
  const u = await login();
  const r = await exchange(d.url, web, { subject_token: u.id_token, subject_token_type: IDT, scope: 'openid email' });
  t.is(r.status, 200, JSON.stringify(r.body));
  const c = claimsOf(r.body.access_token);
  t.is(c.sub, u.user.id);
  t.is(c.client_id, web.clientId);
  t.is(c.aud, API_A, "no target asked: the client's registered audience");
  t.is(c.fid, undefined);
  t.is((await kit.userinfo(String(r.body.access_token))).status, 200);

  const wider = await exchange(d.url, web, {
    subject_token: u.id_token,
    subject_token_type: IDT,
    scope: 'openid email profile',
  });
  t.is(wider.status, 400);
  t.is(wider.body.error, 'invalid_scope', 'profile was never consented');

  const elsewhere = await exchange(d.url, svcA, { subject_token: u.id_token, subject_token_type: IDT });
  t.is(elsewhere.status, 400);
  t.is(elsewhere.body.error, 'invalid_request');
  t.regex(String(elsewhere.body.error_description), /issued to another client/);

  const forged = await exchange(d.url, web, { subject_token: u.access_token, subject_token_type: IDT });
  t.is(forged.status, 400);
  t.regex(String(forged.body.error_description), /not an ID token/, 'typ at+jwt is not an ID token');
});

test.serial(
  'refusals: subject token type, parameter counts, targets, scope, who may exchange, actor, grant',
  async (t) => {
    const u = await login();
    const base = { subject_token: u.access_token, subject_token_type: AT };
    const refused = async (
      caller: ClientCreds,
      params: Record<string, string | string[] | undefined>,
      error: string,
      description?: RegExp,
      status = 400,
    ) => {
      const r = await exchange(d.url, caller, params);
      t.is(r.status, status, `${error}: ${JSON.stringify(r.body)}`);
      t.is(r.body.error, error);
      if (description) t.regex(String(r.body.error_description), description);
    };
    // subject_token_type
    await refused(
      svcA,
      { ...base, subject_token_type: 'urn:ietf:params:oauth:token-type:saml2' },
      'invalid_request',
      /not supported/,
    );
    await refused(svcA, { ...base, subject_token_type: 'access_token' }, 'invalid_request', /not supported/);
    await refused(svcA, { ...base, subject_token_type: JAG }, 'invalid_request', /not accepted by this tenant/);
    await refused(svcA, { subject_token_type: AT }, 'invalid_request', /subject_token is required/);
    await refused(svcA, { subject_token: u.access_token }, 'invalid_request', /subject_token_type is required/);
    await refused(svcA, { ...base, subject_token: 'not-a-token' }, 'invalid_request', /not a valid/);
    await refused(svcA, { ...base, actor_token_type: AT }, 'invalid_request', /without actor_token/);
    await refused(
      svcA,
      { ...base, requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' },
      'invalid_request',
      /requested_token_type/,
    );
    // counts (tenant: at most 3 resources, 2 audiences)
    await refused(svcA, { ...base, resource: MANY.slice(0, 4) }, 'invalid_request', /At most 3 resource/);
    await refused(svcA, { ...base, audience: MANY.slice(0, 3) }, 'invalid_request', /At most 2 audience/);
    const atLimit = await exchange(d.url, svcA, { ...base, resource: MANY.slice(0, 3), audience: MANY.slice(3, 5) });
    t.is(atLimit.status, 200, JSON.stringify(atLimit.body));
    t.deepEqual(claimsOf(atLimit.body.access_token).resource, MANY.slice(0, 3));
    t.deepEqual(claimsOf(atLimit.body.access_token).aud, [...MANY.slice(3, 5), ...MANY.slice(0, 3)]);
    // targets
    await refused(svcA, { ...base, resource: 'https://not-registered.example.test' }, 'invalid_target', /not allowed/);
    await refused(svcA, { ...base, audience: 'someone-else' }, 'invalid_target', /not allowed/);
    await refused(svcA, { ...base, resource: 'relative/path' }, 'invalid_target', /absolute URI/);
    await refused(svcA, { ...base, resource: `${API_B}#frag` }, 'invalid_target', /fragment/);
    // scope may only narrow
    await refused(svcA, { ...base, scope: 'openid email svc' }, 'invalid_scope', /svc/);
    // who may exchange the subject
    await refused(bystander, base, 'invalid_request', /neither issued to nor addressed to this client/);
    await refused(noGrant, base, 'unauthorized_client');
    // the actor must be the caller's own token
    await refused(
      svcA,
      { ...base, actor_token: await ccToken(svcB), actor_token_type: AT },
      'invalid_request',
      /actor_token was issued to another client/,
    );
    await refused(
      svcA,
      { ...base, actor_token: 'garbage', actor_token_type: AT },
      'invalid_request',
      /actor_token is not a valid/,
    );
    await refused(
      svcA,
      { ...base, actor_token: u.id_token, actor_token_type: JAG },
      'invalid_request',
      /actor_token_type/,
    );
    // a parameter that must appear once
    await refused(svcA, { ...base, scope: ['openid', 'email'] }, 'invalid_request', /scope must appear once/);
  },
);

test.serial("a disabled user's token cannot be exchanged", async (t) => {
  const u = await login();
  await sql(db.url, db.dir, 'UPDATE users SET status = ? WHERE tenant_id = ? AND id = ?', [
    'disabled',
    tenantId,
    u.user.id,
  ]);
  const r = await exchange(d.url, svcA, { subject_token: u.access_token, subject_token_type: AT });
  t.is(r.status, 400);
  t.regex(String(r.body.error_description), /disabled/);
});

test.serial('a token of a client that was disabled since cannot be exchanged', async (t) => {
  const subject = await ccToken(batch);
  const ok = await exchange(d.url, svcA, { subject_token: subject, subject_token_type: AT, scope: 'svc' });
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.is(claimsOf(ok.body.access_token).sub, batch.clientId, 'a client subject keeps its client id as sub');
  await sql(db.url, db.dir, 'UPDATE clients SET status = ? WHERE client_id = ?', ['disabled', batch.clientId]);
  const r = await exchange(d.url, svcA, { subject_token: subject, subject_token_type: AT, scope: 'svc' });
  t.is(r.status, 400);
  t.is(r.body.error, 'invalid_request');
  t.regex(String(r.body.error_description), /no longer active/);
});

test.serial(
  'a third-party client never gets the account scope by exchange, and its token stays confined',
  async (t) => {
    // A service registered with account and then made third-party: what registration now refuses.
    const { ds, directory } = await openServices(db.url, db.dir);
    const c = await directory.createClient(
      tenantId,
      {
        name: 'Legacy service',
        first_party: true,
        grant_types: ['client_credentials', TE_GRANT],
        scopes: ['openid', 'email', 'account'],
        resource_identifiers: [API_A],
      },
      { type: 'system', id: 'test' },
    );
    await ds.destroy();
    const legacy = { clientId: c.client.client_id, secret: c.client_secret! };
    await sql(db.url, db.dir, 'UPDATE clients SET first_party = 0 WHERE client_id = ?', [legacy.clientId]);
    const email = `te${++n}-${Date.now()}@example.com`;
    const services = await openServices(db.url, db.dir);
    await services.directory.createUser(tenantId, { email, name: 'Account' }, { type: 'system', id: 'test' });
    await services.ds.destroy();
    const u = await kit.tokensFor(web, email, 'openid email account');
    t.is(claimsOf(u.access_token).scope, 'openid email account');

    const ceiling = await exchange(d.url, legacy, { subject_token: u.access_token, subject_token_type: AT });
    t.is(ceiling.status, 200, JSON.stringify(ceiling.body));
    t.is(ceiling.body.scope, 'openid email', 'RFC 8693 §2.2.1: the scope issued, without account');
    t.is(claimsOf(ceiling.body.access_token).scope, 'openid email');
    const asked = await exchange(d.url, legacy, {
      subject_token: u.access_token,
      subject_token_type: AT,
      scope: 'openid account',
    });
    t.is(asked.status, 200, JSON.stringify(asked.body));
    t.is(asked.body.scope, 'openid', 'dropped, as at /authorize (RFC 6749 §3.3)');
    const only = await exchange(d.url, legacy, {
      subject_token: u.access_token,
      subject_token_type: AT,
      scope: 'account',
    });
    t.is(only.status, 400);
    t.is(only.body.error, 'invalid_scope');

    const exported = await fetch(`${d.url}/api/user/data-export`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${String(ceiling.body.access_token)}` },
      body: '{}',
    });
    t.is(exported.status, 403);
    t.is(((await exported.json()) as { error: string }).error, 'insufficient_scope');
  },
);

test.serial('switched off for the tenant: unsupported_grant_type', async (t) => {
  const u = await login();
  await putSettings(d.url, admin, { enabled: false });
  const r = await exchange(d.url, svcA, { subject_token: u.access_token, subject_token_type: AT });
  t.is(r.status, 400);
  t.is(r.body.error, 'unsupported_grant_type');
  await putSettings(d.url, admin, { enabled: true });
  t.is((await exchange(d.url, svcA, { subject_token: u.access_token, subject_token_type: AT })).status, 200);
});
