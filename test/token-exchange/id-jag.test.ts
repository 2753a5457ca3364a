/**
 * ID-JAG subject tokens against a real HTTPS identity provider on loopback (discovery metadata
 * and a JWK Set, ES256 assertions signed with jose). The daemons trust its self-signed
 * certificate through IAM_OUTBOUND_CA_FILE and may reach loopback through
 * IAM_OUTBOUND_ALLOW_LOOPBACK; a third daemon without that setting shows loopback refused.
 */
import test from 'ava';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { clientCredentialsToken, introspectAs, openServices, activeTenant } from '../helpers/seed.js';
import {
  makeCert,
  newKey,
  startIssuer,
  type IdJagInput,
  type TestCert,
  type TestIssuer,
} from '../helpers/https-issuer.js';
import { AT, claimsOf, exchange, JAG, putSettings, TE_GRANT, type Caller } from '../helpers/token-exchange.js';
import { SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';
import { until } from '../helpers/poll.js';

const CHAT = 'https://chat.example.test/api';
const FILES = 'https://files.example.test/api';

let db: TestDb;
let cert: TestCert;
let idp: TestIssuer; // OpenID Connect discovery
let idp8414: TestIssuer; // RFC 8414 metadata only
let d1: Daemon; // loopback allowed, unknown-kid cooldown 1 hour
let d2: Daemon; // loopback allowed, no cooldown
let d3: Daemon; // loopback NOT allowed
let tenantId: string;
let agent: Caller & { secret: string };
let otherAgent: Caller & { secret: string };
let publicAgent: Caller;
let oidcAgent: Caller & { secret: string }; // may carry openid, for /userinfo
let rs: Caller & { secret: string }; // the resource server of CHAT, introspects
let localUser: { id: string; email: string };
let admin: string;

test.before(async () => {
  cert = makeCert();
  idp = await startIssuer({ cert });
  idp8414 = await startIssuer({ cert, discovery: 'oauth' });
  db = await createTestDatabase();
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  tenantId = (await activeTenant(provisioning, { name: 'ID-JAG tenant' }, actor)).id;
  const mk = async (input: Parameters<typeof directory.createClient>[1]) => {
    const c = await directory.createClient(tenantId, input, actor);
    return { clientId: c.client.client_id, secret: c.client_secret! };
  };
  agent = await mk({
    name: 'Agent',
    grant_types: [TE_GRANT],
    scopes: ['chat.read', 'chat.write'],
    audiences: [CHAT, FILES],
  });
  otherAgent = await mk({ name: 'Other agent', grant_types: [TE_GRANT], scopes: ['chat.read'], audiences: [CHAT] });
  publicAgent = {
    clientId: (
      await mk({
        name: 'Public agent',
        public: true,
        grant_types: [TE_GRANT],
        scopes: ['chat.read'],
        audiences: [CHAT],
      })
    ).clientId,
  };
  oidcAgent = await mk({
    name: 'OIDC agent',
    grant_types: [TE_GRANT],
    scopes: ['openid', 'profile', 'email', 'chat.read'],
    audiences: [CHAT],
  });
  rs = await mk({ name: 'Chat API', grant_types: ['client_credentials'], scopes: [], resource_identifiers: [CHAT] });
  const u = await directory.createUser(tenantId, { email: 'local.user@example.test', name: 'Local User' }, actor);
  localUser = { id: u.id, email: u.email };
  const adm = await mk({ name: 'admin', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN] });
  await ds.destroy();

  const trust = { IAM_OUTBOUND_ALLOW_LOOPBACK: 'true', IAM_OUTBOUND_CA_FILE: cert.certFile };
  d1 = await startDaemon(db.url, db.dir, { ...trust, IAM_IDJAG_JWKS_COOLDOWN_SECONDS: '3600' });
  // One issuer for all three, as behind a load balancer: ID-JAGs name it as their audience.
  d2 = await startDaemon(db.url, db.dir, { ...trust, IAM_IDJAG_JWKS_COOLDOWN_SECONDS: '0', IAM_ISSUER: d1.url });
  d3 = await startDaemon(db.url, db.dir, { IAM_OUTBOUND_CA_FILE: cert.certFile, IAM_ISSUER: d1.url });
  admin = await clientCredentialsToken(d1.url, adm.clientId, adm.secret);
  await putSettings(d1.url, admin, {
    enabled: true,
    allowedSubjectTokenTypes: ['id-jag', 'access_token'],
    idJag: {
      enabled: true,
      allowedIssuers: [idp.issuer, idp8414.issuer],
      maxTokenLifetime: 120,
      includeTenantClaim: true,
      requireConfidentialClient: true,
    },
  });
});
test.after.always(async () => {
  await Promise.all([d1?.stop(), d2?.stop(), d3?.stop()]);
  await idp?.close();
  await idp8414?.close();
  await db?.drop();
  if (cert) rmSync(cert.dir, { recursive: true, force: true });
});

const jag = (p: Partial<IdJagInput> = {}, issuer = idp) =>
  issuer.sign({ clientId: agent.clientId, audience: d1.url, scope: 'chat.read', resource: CHAT, ...p });
const fetches = (i: TestIssuer) => Object.values(i.hits).reduce((a, b) => a + b, 0);

async function refused(
  t: import('ava').ExecutionContext,
  r: Promise<{ status: number; body: Record<string, unknown> }>,
  error: string,
  description?: RegExp,
) {
  const a = await r;
  t.is(a.status, 400, JSON.stringify(a.body));
  t.is(a.body.error, error);
  if (description) t.regex(String(a.body.error_description), description);
}

test.serial(
  'an ID-JAG from a trusted issuer: access token with the tenant claim and the capped lifetime, no refresh token; ' +
    'keys cached',
  async (t) => {
    const r = await exchange(d1.url, agent, { subject_token: await jag({ sub: 'U1' }), subject_token_type: JAG });
    t.is(r.status, 200, JSON.stringify(r.body));
    t.is(r.body.issued_token_type, AT);
    t.is(r.body.token_type, 'Bearer');
    t.is(r.body.expires_in, 120, 'idJag.maxTokenLifetime caps the 600 s access token lifetime');
    t.is(r.body.refresh_token, undefined);
    t.is(r.body.scope, 'chat.read');
    const c = claimsOf(r.body.access_token);
    t.regex(String(c.sub), /^idjag:[A-Za-z0-9_-]{43}$/, "the issuer's subject, namespaced");
    t.deepEqual(c.sub_id, { format: 'iss_sub', iss: idp.issuer, sub: 'U1' });
    t.is(c.exp! - c.iat!, 120);
    t.is(c.tenant, tenantId);
    t.is(c.tenant_id, tenantId);
    t.is(c.client_id, agent.clientId);
    t.is(c.aud, CHAT);
    t.is(c.resource, CHAT);
    t.is(c.fid, undefined);
    const verified = await jwtVerify(String(r.body.access_token), createRemoteJWKSet(new URL(`${d1.url}/jwks`)), {
      issuer: d1.url,
      typ: 'at+jwt',
      audience: CHAT,
    });
    t.is(verified.payload.sub, c.sub);
    t.is(idp.hits['/.well-known/openid-configuration'], 1);
    t.is(idp.hits['/jwks'], 1);

    // A second assertion is verified from the cache; d2 warms its own cache here too.
    t.is((await exchange(d1.url, agent, { subject_token: await jag(), subject_token_type: JAG })).status, 200);
    t.is(idp.hits['/jwks'], 1, 'no refetch while the key set is fresh');
    t.is((await exchange(d2.url, agent, { subject_token: await jag(), subject_token_type: JAG })).status, 200);
    t.is(idp.hits['/jwks'], 2, 'the other daemon fetched once for itself');
  },
);

test.serial(
  "without includeTenantClaim there is no tenant claim; without a scope claim the client's scopes are the ceiling",
  async (t) => {
    await putSettings(d1.url, admin, { idJag: { includeTenantClaim: false } });
    const r = await exchange(d1.url, agent, {
      subject_token: await jag({ scope: undefined }),
      subject_token_type: JAG,
    });
    t.is(r.status, 200, JSON.stringify(r.body));
    const c = claimsOf(r.body.access_token);
    t.is(c.tenant, undefined);
    t.is(c.tenant_id, tenantId);
    t.is(c.scope, 'chat.read chat.write');
    await putSettings(d1.url, admin, { idJag: { includeTenantClaim: true } });
  },
);

test.serial(
  "an ID-JAG whose sub is a local user's id does not make a token for that user: refused at /userinfo and " +
    '/api/user/consents, introspection shows an external subject marked with its issuer',
  async (t) => {
    // A trusted issuer's `sub` is its own identifier; here it happens to equal a local user's id.
    const r = await exchange(d1.url, oidcAgent, {
      subject_token: await jag({ sub: localUser.id, clientId: oidcAgent.clientId, scope: 'openid profile email' }),
      subject_token_type: JAG,
    });
    t.is(r.status, 200, JSON.stringify(r.body));
    const token = String(r.body.access_token);

    const userinfo = await fetch(`${d1.url}/userinfo`, { headers: { authorization: `Bearer ${token}` } });
    const ui = (await userinfo.json()) as Record<string, unknown>;
    t.is(userinfo.status, 401, JSON.stringify(ui));
    t.is(ui.error, 'invalid_token');
    t.regex(userinfo.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    t.is(ui.email, undefined, "the local user's claims are not released");

    const c = claimsOf(token);
    t.not(c.sub, localUser.id);
    t.true(String(c.sub).startsWith('idjag:'));
    t.deepEqual(c.sub_id, { format: 'iss_sub', iss: idp.issuer, sub: localUser.id });

    const consents = await fetch(`${d1.url}/api/user/consents`, { headers: { authorization: `Bearer ${token}` } });
    t.is(consents.status, 401);
    t.is(((await consents.json()) as Record<string, unknown>).error, 'invalid_token');

    const i = await introspectAs(d1.url, rs, token);
    t.is(i.status, 200);
    t.is(i.body.active, true, JSON.stringify(i.body));
    t.not(i.body.sub, localUser.id, 'introspection does not name the local user');
    t.is(i.body.sub, c.sub);
    t.deepEqual(i.body.sub_id, { format: 'iss_sub', iss: idp.issuer, sub: localUser.id });
    t.is(i.body.client_id, oidcAgent.clientId);

    // Exchanged again as an access token, it stays the external subject, still marked.
    const again = await exchange(d1.url, oidcAgent, { subject_token: token, subject_token_type: AT });
    t.is(again.status, 200, JSON.stringify(again.body));
    const c2 = claimsOf(again.body.access_token);
    t.is(c2.sub, c.sub);
    t.deepEqual(c2.sub_id, c.sub_id);
    const ui2 = await fetch(`${d1.url}/userinfo`, {
      headers: { authorization: `Bearer ${String(again.body.access_token)}` },
    });
    t.is(ui2.status, 401);
  },
);

test.serial('a jti is single-use on every daemon; a refused request does not spend it', async (t) => {
  const token = await jag({ jti: `j-${randomBytes(6).toString('hex')}` });
  await refused(
    t,
    exchange(d1.url, agent, { subject_token: token, subject_token_type: JAG, scope: 'chat.write' }),
    'invalid_scope',
  );
  t.is((await exchange(d1.url, agent, { subject_token: token, subject_token_type: JAG })).status, 200);
  await refused(
    t,
    exchange(d1.url, agent, { subject_token: token, subject_token_type: JAG }),
    'invalid_request',
    /already been used/,
  );
  await refused(
    t,
    exchange(d2.url, agent, { subject_token: token, subject_token_type: JAG }),
    'invalid_request',
    /already been used/,
  );
});

test.serial(
  'refusals: issuer, signature, audience, expiry, iat, client, typ, tenant, scope and resource',
  async (t) => {
    const now = Math.floor(Date.now() / 1000);
    const x = (subject_token: string, extra: Record<string, string> = {}) =>
      exchange(d1.url, agent, { subject_token, subject_token_type: JAG, ...extra });
    const before = fetches(idp);
    await refused(
      t,
      x(await jag({ iss: 'https://evil.example.com' })),
      'invalid_request',
      /issuer https:\/\/evil\.example\.com is not trusted/,
    );
    const impostor = await newKey(idp.published[0].kid);
    await refused(t, x(await jag({ key: impostor })), 'invalid_request', /signature does not verify/);
    const good = await jag();
    const [h, p] = good.split('.');
    const forged = Buffer.from(JSON.stringify({ ...claimsOf(good), sub: 'admin' })).toString('base64url');
    const tampered = `${h}.${forged}.${good.split('.')[2]}`;
    t.not(p, tampered.split('.')[1]);
    await refused(t, x(tampered), 'invalid_request', /signature does not verify/);
    await refused(
      t,
      x(await jag({ audience: 'https://another-as.example.com' })),
      'invalid_request',
      /not addressed to this authorization server/,
    );
    await refused(t, x(await jag({ iat: now - 900, exp: now - 600 })), 'invalid_request', /expired/);
    await refused(t, x(await jag({ iat: now + 600, exp: now + 900 })), 'invalid_request', /issued in the future/);
    await refused(t, x(await jag({ clientId: otherAgent.clientId })), 'invalid_request', /issued for another client/);
    await refused(t, x(await jag({ typ: 'JWT' })), 'invalid_request', /typ must be oauth-id-jag\+jwt/);
    await refused(t, x(await jag({ extra: { aud_tenant: 'ten_someone_else' } })), 'invalid_request', /another tenant/);
    await refused(t, x(await jag(), { scope: 'chat.write' }), 'invalid_scope', /chat\.write/);
    await refused(t, x(await jag(), { resource: FILES }), 'invalid_target', /not covered by the subject_token/);
    await refused(t, x('not.a.jwt'), 'invalid_request', /not a JWT/);
    t.is(
      fetches(idp),
      before,
      'no refusal made the daemon call the issuer (its keys are cached; evil.example.com was never contacted)',
    );
  },
);

test.serial('public clients are refused under requireConfidentialClient, admitted without it', async (t) => {
  const token = await jag({ clientId: publicAgent.clientId });
  await refused(
    t,
    exchange(d1.url, publicAgent, { subject_token: token, subject_token_type: JAG }),
    'unauthorized_client',
    /confidential/,
  );
  await putSettings(d1.url, admin, { idJag: { requireConfidentialClient: false } });
  const r = await exchange(d1.url, publicAgent, { subject_token: token, subject_token_type: JAG });
  t.is(r.status, 200, JSON.stringify(r.body));
  t.is(claimsOf(r.body.access_token).client_id, publicAgent.clientId);
  await putSettings(d1.url, admin, { idJag: { requireConfidentialClient: true } });
});

test.serial(
  'unknown kid: refused without refetching inside the cooldown; a daemon without cooldown refetches and picks up a ' +
    'rotated key',
  async (t) => {
    const jwks = () => idp.hits['/jwks'] ?? 0;
    const stranger = await newKey('k-unknown');
    const start = jwks();
    await refused(
      t,
      exchange(d1.url, agent, { subject_token: await jag({ key: stranger }), subject_token_type: JAG }),
      'invalid_request',
      /No key with kid "k-unknown"/,
    );
    await refused(
      t,
      exchange(d1.url, agent, { subject_token: await jag({ key: stranger }), subject_token_type: JAG }),
      'invalid_request',
      /No key with kid "k-unknown"/,
    );
    t.is(jwks(), start, 'inside the cooldown an unknown kid does not reach the issuer');

    // The issuer rotates in a new key.
    const rotated = await newKey('k-rotated');
    idp.published.push(rotated);
    await refused(
      t,
      exchange(d1.url, agent, { subject_token: await jag({ key: rotated }), subject_token_type: JAG }),
      'invalid_request',
      /No key with kid "k-rotated"/,
    );
    t.is(jwks(), start);
    const r = await exchange(d2.url, agent, { subject_token: await jag({ key: rotated }), subject_token_type: JAG });
    t.is(r.status, 200, JSON.stringify(r.body));
    t.is(jwks(), start + 1, 'one refetch, caused by the unknown kid');
    await refused(
      t,
      exchange(d2.url, agent, { subject_token: await jag({ key: stranger }), subject_token_type: JAG }),
      'invalid_request',
      /No key with kid "k-unknown"/,
    );
  },
);

test.serial('an issuer with only RFC 8414 metadata is discovered too', async (t) => {
  const r = await exchange(d1.url, agent, {
    subject_token: await jag({ sub: 'U8414' }, idp8414),
    subject_token_type: JAG,
  });
  t.is(r.status, 200, JSON.stringify(r.body));
  t.deepEqual(claimsOf(r.body.access_token).sub_id, { format: 'iss_sub', iss: idp8414.issuer, sub: 'U8414' });
  t.is(idp8414.hits['/.well-known/openid-configuration'], 1, 'OpenID discovery tried first (404)');
  t.is(idp8414.hits['/.well-known/oauth-authorization-server'], 1);
});

test.serial(
  'without IAM_OUTBOUND_ALLOW_LOOPBACK the daemon refuses to contact a loopback issuer, even one in the settings',
  async (t) => {
    const before = fetches(idp);
    await refused(
      t,
      exchange(d3.url, agent, { subject_token: await jag(), subject_token_type: JAG }),
      'invalid_request',
      /keys of https:\/\/127\.0\.0\.1:\d+ are unavailable \(blocked_address\)/,
    );
    t.is(fetches(idp), before, 'nothing reached the issuer');
    t.true(
      await until(
        () =>
          d3.logs.some(
            (l) => l.msg === 'ID-JAG issuer metadata or keys could not be fetched' && /loopback/.test(String(l.detail)),
          ),
        { timeoutMs: 5_000, what: 'the operator sees why' },
      ),
    );
    // ...and its settings endpoint will not store one.
    const put = await fetch(`${d3.url}/api/admin/settings/token-exchange`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ idJag: { allowedIssuers: [idp.issuer] } }),
    });
    t.is(put.status, 400);
    t.regex(
      String(((await put.json()) as { error_description: string }).error_description),
      /^body\.idJag\.allowedIssuers\.0: .*loopback/,
    );
  },
);

test.serial('ID-JAG off, or its token type not listed: refused', async (t) => {
  await putSettings(d1.url, admin, { idJag: { enabled: false } });
  await refused(
    t,
    exchange(d1.url, agent, { subject_token: await jag(), subject_token_type: JAG }),
    'invalid_request',
    /not enabled/,
  );
  await putSettings(d1.url, admin, { idJag: { enabled: true }, allowedSubjectTokenTypes: ['access_token'] });
  await refused(
    t,
    exchange(d1.url, agent, { subject_token: await jag(), subject_token_type: JAG }),
    'invalid_request',
    /not accepted by this tenant/,
  );
  await putSettings(d1.url, admin, { allowedSubjectTokenTypes: ['id-jag'] });
  t.is((await exchange(d1.url, agent, { subject_token: await jag(), subject_token_type: JAG })).status, 200);
});
