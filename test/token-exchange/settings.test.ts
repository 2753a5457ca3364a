/**
 * PUT (and GET) /api/admin/settings/token-exchange: authentication, tenant reach, validation
 * of every field, merge, audit, OpenAPI, and a change taking effect on a second daemon that
 * shares the database, without a restart.
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { clientCredentialsToken, openServices, seed, type Seeded, activeTenant } from '../helpers/seed.js';
import { AT, claimsOf, exchange, settingsCall, TE_GRANT, type Caller } from '../helpers/token-exchange.js';

const TARGETS = Array.from({ length: 40 }, (_, i) => `https://rs-${i}.example.test`);

let db: TestDb;
let d1: Daemon;
let d2: Daemon;
let s: Seeded;
let platform: string;
let tenantAdmin: string;
let noScope: string;
let otherTenantId: string;
let worker: Caller & { secret: string };

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  otherTenantId = (await activeTenant(provisioning, { name: 'Other' }, actor)).id;
  const reporter = await directory.createClient(
    s.tenantId,
    { name: 'reporter', grant_types: ['client_credentials'], scopes: ['reports.read'] },
    actor,
  );
  const w = await directory.createClient(
    s.tenantId,
    { name: 'worker', grant_types: ['client_credentials', TE_GRANT], scopes: ['svc'], audiences: TARGETS },
    actor,
  );
  worker = { clientId: w.client.client_id, secret: w.client_secret! };
  await ds.destroy();
  // Two daemons, one database, one issuer (as behind a load balancer): settings must reach
  // both without a restart.
  d1 = await startDaemon(db.url, db.dir);
  d2 = await startDaemon(db.url, db.dir, { IAM_ISSUER: d1.url });
  platform = await clientCredentialsToken(d1.url, s.platform.clientId, s.platform.secret);
  tenantAdmin = await clientCredentialsToken(d1.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
  noScope = await clientCredentialsToken(d1.url, reporter.client.client_id, reporter.client_secret!);
});
test.after.always(async () => {
  await d1?.stop();
  await d2?.stop();
  await db?.drop();
});

test.serial(
  'authentication and reach: 401 without a token, 403 without an admin scope or for another tenant, 404 for no tenant',
  async (t) => {
    const none = await settingsCall(d1.url, 'PUT', undefined, { enabled: true });
    t.is(none.status, 401);
    t.is(none.body.error, 'invalid_token');
    t.regex(none.headers.get('www-authenticate') ?? '', /^Bearer/);
    const forged = await settingsCall(d1.url, 'GET', 'abc.def.ghi');
    t.is(forged.status, 401);
    const scope = await settingsCall(d1.url, 'PUT', noScope, { enabled: true });
    t.is(scope.status, 403);
    t.is(scope.body.error, 'insufficient_scope');
    const other = await settingsCall(d1.url, 'PUT', tenantAdmin, { enabled: true }, otherTenantId);
    t.is(other.status, 403);
    t.is(other.body.error, 'tenant_forbidden');
    const missing = await settingsCall(d1.url, 'GET', platform, undefined, 'ten_doesnotexist');
    t.is(missing.status, 404);
    t.is(missing.body.error, 'not_found');
  },
);

test.serial('GET before any change: the defaults, token exchange off', async (t) => {
  const r = await settingsCall(d1.url, 'GET', tenantAdmin);
  t.is(r.status, 200);
  t.deepEqual(r.body.settings, {
    enabled: false,
    allowedSubjectTokenTypes: [AT],
    maxResourceParams: 10,
    maxAudienceParams: 10,
    idJag: {
      enabled: false,
      allowedIssuers: [],
      maxTokenLifetime: 300,
      includeTenantClaim: false,
      requireConfidentialClient: true,
    },
    idJagIssuance: { enabled: false, maxLifetime: 300, trustedAuthorizationServers: [] },
    requireMayAct: false,
  });
  t.regex(String(r.body.note), /disabled/);
});

test.serial('every field is validated and a refusal names it; nothing is stored', async (t) => {
  const cases: [unknown, string, RegExp?][] = [
    [{ enabled: 'yes' }, 'body.enabled'],
    [{ maxResourceParams: 0 }, 'body.maxResourceParams', /between 1 and 100/],
    [{ maxResourceParams: 101 }, 'body.maxResourceParams', /between 1 and 100/],
    [{ maxResourceParams: 2.5 }, 'body.maxResourceParams', /whole number/],
    [{ maxResourceParams: '5' }, 'body.maxResourceParams'],
    [{ maxAudienceParams: 0 }, 'body.maxAudienceParams', /between 1 and 100/],
    [{ maxAudienceParams: 101 }, 'body.maxAudienceParams', /between 1 and 100/],
    [{ allowedSubjectTokenTypes: ['saml'] }, 'body.allowedSubjectTokenTypes.0', /unsupported token type/],
    [{ allowedSubjectTokenTypes: 'access_token' }, 'body.allowedSubjectTokenTypes'],
    [{ idJag: 'on' }, 'body.idJag'],
    [{ idJag: { enabled: 1 } }, 'body.idJag.enabled'],
    [{ idJag: { maxTokenLifetime: 0 } }, 'body.idJag.maxTokenLifetime', /between 1 and 3600/],
    [{ idJag: { maxTokenLifetime: 3601 } }, 'body.idJag.maxTokenLifetime', /between 1 and 3600/],
    [{ idJag: { includeTenantClaim: 'true' } }, 'body.idJag.includeTenantClaim'],
    [{ idJag: { requireConfidentialClient: null } }, 'body.idJag.requireConfidentialClient'],
    [{ idJag: { allowedIssuers: 'https://idp.example.com' } }, 'body.idJag.allowedIssuers'],
    [{ idJag: { allowedIssuers: ['http://idp.example.com'] } }, 'body.idJag.allowedIssuers.0', /https/],
    [
      { idJag: { allowedIssuers: ['https://ok.example.com', 'https://user:pw@idp.example.com'] } },
      'body.idJag.allowedIssuers.1',
      /credentials/,
    ],
    [{ idJag: { allowedIssuers: ['https://idp.example.com/?tenant=1'] } }, 'body.idJag.allowedIssuers.0', /query/],
    [{ idJag: { allowedIssuers: ['https://idp.example.com/#top'] } }, 'body.idJag.allowedIssuers.0', /fragment/],
    [{ idJag: { allowedIssuers: ['https://10.0.0.5'] } }, 'body.idJag.allowedIssuers.0', /private/],
    [{ idJag: { allowedIssuers: ['https://192.168.1.10:8443/idp'] } }, 'body.idJag.allowedIssuers.0', /private/],
    [{ idJag: { allowedIssuers: ['https://169.254.169.254'] } }, 'body.idJag.allowedIssuers.0', /link-local/],
    [{ idJag: { allowedIssuers: ['https://[fd00::1]'] } }, 'body.idJag.allowedIssuers.0', /unique-local/],
    [{ idJag: { allowedIssuers: ['https://[::ffff:10.0.0.1]'] } }, 'body.idJag.allowedIssuers.0', /ipv4-mapped/],
    [{ idJag: { allowedIssuers: ['https://127.0.0.1:8443'] } }, 'body.idJag.allowedIssuers.0', /loopback/],
    [{ idJag: { allowedIssuers: ['https://localhost:8443'] } }, 'body.idJag.allowedIssuers.0', /public host/],
    [{ idJag: { allowedIssuers: [42] } }, 'body.idJag.allowedIssuers.0'],
    [
      { idJag: { allowedIssuers: Array.from({ length: 51 }, (_, i) => `https://idp${i}.example.com`) } },
      'body.idJag.allowedIssuers',
      /at most 50/,
    ],
    [{ idJag: { enabled: true } }, 'body.idJag.allowedIssuers', /at least one issuer/],
  ];
  for (const [body, field, message] of cases) {
    const r = await settingsCall(d1.url, 'PUT', platform, body);
    t.is(r.status, 400, `${JSON.stringify(body)} → ${JSON.stringify(r.body)}`);
    t.is(r.body.error, 'invalid_request');
    t.true(
      String(r.body.error_description).startsWith(`${field}:`),
      `${JSON.stringify(body)} → ${String(r.body.error_description)}`,
    );
    if (message) t.regex(String(r.body.error_description), message);
  }
  const notJson = await fetch(`${d1.url}/api/admin/settings/token-exchange`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${platform}`, 'content-type': 'text/plain' },
    body: 'enabled=true',
  });
  t.is(notJson.status, 415);
  const after = await settingsCall(d1.url, 'GET', platform);
  t.is((after.body.settings as { enabled: boolean }).enabled, false, 'refused updates store nothing');
});

test.serial(
  'PUT merges with the stored settings, canonicalises token types, ignores unknown fields, is audited',
  async (t) => {
    const r1 = await settingsCall(d1.url, 'PUT', tenantAdmin, {
      enabled: true,
      allowedSubjectTokenTypes: ['access_token', 'urn:ietf:params:oauth:token-type:id_token', 'id_token'],
      maxResourceParams: 1,
      idJag: {
        enabled: true,
        allowedIssuers: ['https://idp.example.com', 'https://login.example.org/tenants/acme'],
        maxTokenLifetime: 900,
      },
      futureFlag: true,
    });
    t.is(r1.status, 200, JSON.stringify(r1.body));
    t.is(r1.body.success, true);
    t.deepEqual(r1.body.settings, {
      enabled: true,
      allowedSubjectTokenTypes: [AT, 'urn:ietf:params:oauth:token-type:id_token'],
      maxResourceParams: 1,
      maxAudienceParams: 10,
      idJag: {
        enabled: true,
        allowedIssuers: ['https://idp.example.com', 'https://login.example.org/tenants/acme'],
        maxTokenLifetime: 900,
        includeTenantClaim: false,
        requireConfidentialClient: true,
      },
      idJagIssuance: { enabled: false, maxLifetime: 300, trustedAuthorizationServers: [] },
      requireMayAct: false,
    });
    const note = String(r1.body.note);
    t.regex(note, new RegExp(s.tenantId));
    t.regex(note, /futureFlag/, 'unknown fields are named as ignored');
    t.regex(note, /600 s/, 'the lifetime cap above the access token lifetime is explained');
    t.regex(note, /no effect until urn:ietf:params:oauth:token-type:id-jag/);

    // Only the fields sent change.
    const r2 = await settingsCall(d1.url, 'PUT', tenantAdmin, {
      maxAudienceParams: 100,
      idJag: { includeTenantClaim: true },
    });
    t.is(r2.status, 200);
    t.like(r2.body.settings, {
      enabled: true,
      maxResourceParams: 1,
      maxAudienceParams: 100,
      idJag: { enabled: true, maxTokenLifetime: 900, includeTenantClaim: true },
    });
    t.deepEqual(
      (await settingsCall(d2.url, 'GET', tenantAdmin)).body.settings,
      r2.body.settings,
      'the other daemon reads the same',
    );

    const { ds, directory } = await openServices(db.url, db.dir);
    t.teardown(() => ds.destroy());
    const tenant = await directory.requireTenant(s.tenantId);
    t.deepEqual(tenant.settings.tokenExchange, r2.body.settings);
    t.false('futureFlag' in tenant.settings.tokenExchange);
    const events = (await directory.scope(s.tenantId).audit.list()).filter(
      (e) => e.action === 'tenant.token_exchange_settings.update',
    );
    t.is(events.length, 2);
    t.is(events[0].actor_id, s.tenantAdmin.clientId);
    t.is(events[0].target_id, s.tenantId);
  },
);

test.serial(
  "a platform admin reaches another tenant with ?tenant_id=; the tenant's own settings are untouched",
  async (t) => {
    const r = await settingsCall(d1.url, 'PUT', platform, { maxResourceParams: 7 }, otherTenantId);
    t.is(r.status, 200);
    t.is((r.body.settings as { maxResourceParams: number }).maxResourceParams, 7);
    t.regex(String(r.body.note), new RegExp(otherTenantId));
    t.is(
      ((await settingsCall(d1.url, 'GET', platform)).body.settings as { maxResourceParams: number }).maxResourceParams,
      1,
    );
    const bad = await settingsCall(d1.url, 'GET', platform, undefined, 'bad tenant!');
    t.is(bad.status, 400);
    t.regex(String(bad.body.error_description), /^query\.tenant_id:/);
  },
);

test.serial('a change made through one daemon applies on the other at once, with no restart', async (t) => {
  const subject = await clientCredentialsToken(d2.url, worker.clientId, worker.secret);
  const params = { subject_token: subject, subject_token_type: AT, resource: TARGETS.slice(0, 25) };
  await settingsCall(d1.url, 'PUT', platform, { enabled: false });
  const off = await exchange(d2.url, worker, params);
  t.is(off.status, 400);
  t.is(off.body.error, 'unsupported_grant_type');

  t.is((await settingsCall(d1.url, 'PUT', platform, { enabled: true, maxResourceParams: 25 })).status, 200);
  const on = await exchange(d2.url, worker, params);
  t.is(on.status, 200, JSON.stringify(on.body));
  t.deepEqual(
    claimsOf(on.body.access_token).resource,
    TARGETS.slice(0, 25),
    'more than 20 repeats of a parameter are still a list',
  );
  t.is(claimsOf(on.body.access_token).sub, worker.clientId);

  t.is((await settingsCall(d2.url, 'PUT', platform, { maxResourceParams: 24 })).status, 200);
  const tooMany = await exchange(d1.url, worker, params);
  t.is(tooMany.status, 400);
  t.is(tooMany.body.error, 'invalid_request');
  t.regex(String(tooMany.body.error_description), /At most 24 resource/);
  const hundredOne = await exchange(d1.url, worker, {
    subject_token: subject,
    subject_token_type: AT,
    audience: Array.from({ length: 101 }, (_, i) => `aud-${i}`),
  });
  t.is(hundredOne.status, 400);
  t.regex(String(hundredOne.body.error_description), /At most 100 audience parameters are accepted; got 101/);
});

test.serial('the endpoint is in /openapi.json with its body schema and bounds', async (t) => {
  const doc = (await (await fetch(`${d1.url}/openapi.json`)).json()) as {
    paths: Record<
      string,
      Record<
        string,
        {
          requestBody?: {
            content: Record<string, { schema: { properties: Record<string, { minimum?: number; maximum?: number }> } }>;
          };
        }
      >
    >;
  };
  const put = doc.paths['/api/admin/settings/token-exchange']?.put;
  t.truthy(put);
  t.truthy(doc.paths['/api/admin/settings/token-exchange']?.get);
  const props = put.requestBody!.content['application/json'].schema.properties;
  t.like(props.maxResourceParams, { minimum: 1, maximum: 100 });
  t.like(props.maxAudienceParams, { minimum: 1, maximum: 100 });
  t.truthy(props.idJag);
});
