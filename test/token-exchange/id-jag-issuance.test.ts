/**
 * The service as the enterprise IdP (draft-ietf-oauth-identity-assertion-authz-grant): tenant A
 * issues an ID-JAG for a user's ID token, addressed to tenant B of the same service
 * (aud = this issuer, aud_tenant = B), and tenant B accepts it through the existing consumer
 * path, verified with the service's own keys. Then the refusals the issuance policy makes,
 * and the policy's validation. One daemon.
 */
import test from 'ava';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { clientCredentialsToken, openServices, activeTenant } from '../helpers/seed.js';
import { loginKit, type ClientCreds } from '../helpers/login.js';
import { REDIRECT } from '../helpers/oauth.js';
import { api } from '../helpers/api.js';
import { claimsOf, exchange, IDT, JAG, putSettings, settingsCall, TE_GRANT } from '../helpers/token-exchange.js';
import { SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';

const CHAT = 'https://chat.example.test/api';
const OTHER_AS = 'https://as.other.example.test';

let db: TestDb;
let d: Daemon;
let sink: SmtpSink;
let tenantA: string;
let tenantB: string;
let web: ClientCreds; // tenant A: the app the user signs in to, asks for ID-JAGs
let agentB: ClientCreds; // tenant B: the client the ID-JAG names, redeems it
let adminA: string;
let adminB: string;
let n = 0;
const kit = loginKit(
  () => d.url,
  () => sink,
);

test.before(async () => {
  db = await createTestDatabase();
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  tenantA = (await activeTenant(provisioning, { name: 'Issuing tenant' }, actor)).id;
  tenantB = (await activeTenant(provisioning, { name: 'Relying tenant' }, actor)).id;
  const mk = async (tenant: string, input: Parameters<typeof directory.createClient>[1]) => {
    const c = await directory.createClient(tenant, input, actor);
    return { clientId: c.client.client_id, secret: c.client_secret! };
  };
  web = await mk(tenantA, {
    name: 'Web',
    redirect_uris: [REDIRECT],
    first_party: true,
    grant_types: ['authorization_code', 'refresh_token', TE_GRANT],
    scopes: ['openid', 'email', 'offline_access'],
  });
  agentB = await mk(tenantB, { name: 'Agent', grant_types: [TE_GRANT], scopes: ['chat.read'], audiences: [CHAT] });
  const admA = await mk(tenantA, { name: 'admin', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN] });
  const admB = await mk(tenantB, { name: 'admin', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN] });
  await ds.destroy();
  sink = await startSmtpSink();
  d = await startDaemon(db.url, db.dir, { IAM_SMTP_URL: sink.url, IAM_EMAIL_CODE_RESEND_SECONDS: '0' });
  adminA = await clientCredentialsToken(d.url, admA.clientId, admA.secret);
  adminB = await clientCredentialsToken(d.url, admB.clientId, admB.secret);
  await putSettings(d.url, adminA, {
    enabled: true,
    idJagIssuance: {
      enabled: true,
      maxLifetime: 120,
      trustedAuthorizationServers: [
        {
          issuer: d.url,
          audTenant: tenantB,
          clients: [
            { clientId: web.clientId, targetClientId: agentB.clientId, scopes: ['chat.read'], resources: [CHAT] },
          ],
        },
        { issuer: OTHER_AS, clients: [] },
      ],
    },
  });
  // Tenant B trusts this very service as an ID-JAG issuer: verified with its own keys, no fetch.
  await putSettings(d.url, adminB, {
    enabled: true,
    allowedSubjectTokenTypes: ['id-jag'],
    idJag: { enabled: true, allowedIssuers: [d.url] },
  });
});
test.after.always(async () => {
  await d?.stop();
  await sink?.close();
  await db?.drop();
});

async function idToken(): Promise<{ userId: string; idToken: string; refreshToken: string }> {
  const email = `jag${++n}-${Date.now()}@example.com`;
  const { ds, directory } = await openServices(db.url, db.dir);
  const user = await directory.createUser(tenantA, { email, name: `User ${n}` }, { type: 'system', id: 'test' });
  await ds.destroy();
  const tokens = await kit.tokensFor(web, email, 'openid email offline_access');
  return { userId: user.id, idToken: String(tokens.id_token), refreshToken: String(tokens.refresh_token) };
}

const ask = (subject: string, extra: Record<string, string | string[] | undefined> = {}) =>
  exchange(d.url, web, {
    subject_token: subject,
    subject_token_type: IDT,
    requested_token_type: JAG,
    audience: d.url,
    ...extra,
  });

test.serial(
  'tenant A issues an ID-JAG for tenant B; tenant B redeems it once, verified with our own keys',
  async (t) => {
    const u = await idToken();
    const r = await ask(u.idToken, { scope: 'chat.read', resource: CHAT });
    t.is(r.status, 200, JSON.stringify(r.body) + JSON.stringify(d.logs.filter((l) => l.level === 50)));
    t.is(r.body.issued_token_type, JAG, 'RFC 8693 §2.2.1');
    t.is(r.body.token_type, 'N_A', 'an ID-JAG is not an access token');
    t.is(r.body.expires_in, 120, 'the policy lifetime');
    t.is(r.body.scope, 'chat.read');
    t.is(r.body.refresh_token, undefined);
    const jag = String(r.body.access_token);
    t.is(decodeProtectedHeader(jag).typ, 'oauth-id-jag+jwt');
    // Signed with the service's published key, addressed to the target.
    const { payload: c } = await jwtVerify(jag, createRemoteJWKSet(new URL(`${d.url}/jwks`)), {
      issuer: d.url,
      audience: d.url,
      typ: 'oauth-id-jag+jwt',
    });
    t.is(c.sub, u.userId);
    t.is(c.client_id, agentB.clientId, 'the client id at the target, from the policy');
    t.is(c.aud_tenant, tenantB);
    t.is(c.resource, CHAT);
    t.is(c.scope, 'chat.read');
    t.is(typeof c.jti, 'string');
    t.is(c.exp! - c.iat!, 120);
    t.is(typeof c.auth_time, 'number');
    t.is(c.tenant_id, undefined, 'the issuing tenant is not disclosed');

    // Tenant B, through the existing consumer path.
    const redeemed = await exchange(d.url, agentB, { subject_token: jag, subject_token_type: JAG });
    t.is(redeemed.status, 200, JSON.stringify(redeemed.body));
    const at = claimsOf(redeemed.body.access_token);
    t.is(at.tenant_id, tenantB);
    t.is(at.aud, CHAT);
    t.is(at.scope, 'chat.read');
    t.deepEqual(at.sub_id, { format: 'iss_sub', iss: d.url, sub: u.userId }, 'an external subject to tenant B');
    const again = await exchange(d.url, agentB, { subject_token: jag, subject_token_type: JAG });
    t.is(again.status, 400);
    t.regex(String(again.body.error_description), /already been used/);

    // Issuance is audited in tenant A, naming the client, user and target, without the token.
    const events = await api(d.url, 'GET', '/api/admin/audit?action=token.id_jag.issue', { token: adminA });
    t.is(events.status, 200);
    const e = events.body.events as Record<string, any>[];
    const mine = e.find((x) => x.target_id === u.userId);
    t.truthy(mine, JSON.stringify(events.body));
    t.is(mine!.actor_id, web.clientId);
    t.is(mine!.summary.aud, d.url);
    t.is(mine!.summary.target_client_id, agentB.clientId);
    t.false(JSON.stringify(mine).includes(jag));
  },
);

test.serial('refusals: untrusted target, client not allowed, scope or resource beyond the policy', async (t) => {
  const u = await idToken();
  const cases: [Record<string, string | string[] | undefined>, string, RegExp][] = [
    [{ audience: 'https://unknown-as.example.test' }, 'invalid_target', /not an authorization server this tenant/],
    [{ audience: OTHER_AS }, 'unauthorized_client', /may not request ID-JAGs/],
    [{ scope: 'chat.write' }, 'invalid_scope', /chat\.write/],
    [{ resource: 'https://files.example.test/api' }, 'invalid_target', /resource not allowed/],
    [{ audience: [d.url, OTHER_AS] }, 'invalid_request', /exactly one audience/],
  ];
  for (const [extra, error, description] of cases) {
    const r = await ask(u.idToken, extra);
    t.is(r.status, 400, JSON.stringify(extra));
    t.is(r.body.error, error, JSON.stringify(r.body));
    t.regex(String(r.body.error_description), description);
  }
  // Only an ID token of the caller is a subject for issuance; an actor is not taken.
  const wrongType = await ask(u.idToken, { subject_token_type: 'urn:ietf:params:oauth:token-type:access_token' });
  t.is(wrongType.body.error, 'invalid_request');
  // Tenant B has no issuance policy: the same request there is refused.
  const none = await exchange(d.url, agentB, {
    subject_token: u.idToken,
    subject_token_type: IDT,
    requested_token_type: JAG,
    audience: d.url,
  });
  t.is(none.body.error, 'invalid_request');
  t.regex(String(none.body.error_description), /does not issue ID-JAGs/);
});

test.serial('the issuance policy is validated and stored beside the token exchange settings', async (t) => {
  const bad = await settingsCall(d.url, 'PUT', adminA, {
    idJagIssuance: { trustedAuthorizationServers: [{ issuer: 'http://as.example.test', clients: [] }] },
  });
  t.is(bad.status, 400);
  t.regex(JSON.stringify(bad.body), /https/);
  const tenantHint = await settingsCall(d.url, 'PUT', adminA, {
    idJagIssuance: { trustedAuthorizationServers: [{ issuer: OTHER_AS, audTenant: tenantB, clients: [] }] },
  });
  t.is(tenantHint.status, 400, 'aud_tenant only for this service’s own issuer');
  const got = await settingsCall(d.url, 'GET', adminA);
  const s = got.body.settings as Record<string, any>;
  t.is(s.idJagIssuance.maxLifetime, 120, 'nothing stored by the refused PUTs');
  t.is(s.idJagIssuance.trustedAuthorizationServers.length, 2);
  t.false(s.requireMayAct);
});

test.serial('a refresh token as the subject: read, not rotated; once rotated it is refused', async (t) => {
  const u = await idToken();
  const RT = 'urn:ietf:params:oauth:token-type:refresh_token';
  const r = await ask(u.refreshToken, { subject_token_type: RT });
  t.is(r.status, 200, JSON.stringify(r.body));
  t.is(claimsOf(r.body.access_token).sub, u.userId);
  // The refresh token still works at the refresh grant: issuance did not consume it.
  const refreshed = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic ' + Buffer.from(`${web.clientId}:${web.secret}`).toString('base64'),
    },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: u.refreshToken }),
  });
  t.is(refreshed.status, 200);
  const stale = await ask(u.refreshToken, { subject_token_type: RT });
  t.is(stale.body.error, 'invalid_request');
  t.regex(String(stale.body.error_description), /no longer a current refresh token/);
});
