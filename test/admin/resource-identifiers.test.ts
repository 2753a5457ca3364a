/**
 * A client may not register this authorization server's issuer, one of its endpoints or any
 * URL under the issuer's path as a resource identifier (RFC 8707 §2; docs/security.md "Review
 * finding 14"), through the admin API and the CLI, compared after normalisation; nor request it
 * as a `resource` at token exchange.
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { activeTenant, clientCredentialsToken, openServices } from '../helpers/seed.js';
import { iam } from '../helpers/cli.js';
import { exchange, putSettings, TE_GRANT, AT } from '../helpers/token-exchange.js';
import { SCOPE_TENANT_ADMIN } from '../../shared/scopes.js';
import { api } from '../helpers/api.js';

/** An issuer with a path, so "under the issuer" differs from "on the issuer's host". */
const ISSUER = 'https://id.example.test/t1';

let db: TestDb;
let d: Daemon;
let tenantId: string;
let admin: string;

test.before(async () => {
  db = await createTestDatabase();
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const actor = { type: 'system' as const, id: 'test' };
  tenantId = (await activeTenant(provisioning, { name: 'Resource identifiers' }, actor)).id;
  const adm = await directory.createClient(
    tenantId,
    { name: 'admin', grant_types: ['client_credentials'], scopes: [SCOPE_TENANT_ADMIN] },
    actor,
  );
  await ds.destroy();
  d = await startDaemon(db.url, db.dir, { IAM_ISSUER: ISSUER });
  admin = await clientCredentialsToken(d.url, adm.client.client_id, adm.client_secret!);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

const createClient = (body: Record<string, unknown>) =>
  api(d.url, 'POST', `/api/admin/tenants/${tenantId}/clients`, { body, token: admin });

const REFUSED = [
  ISSUER,
  `${ISSUER}/`,
  `${ISSUER}/token`,
  `${ISSUER}/introspect`,
  `${ISSUER}/userinfo`,
  `${ISSUER}/.well-known/openid-configuration`,
  `${ISSUER}/x/`,
  `${ISSUER}/api/v1?x=1`,
  'HTTPS://ID.EXAMPLE.TEST/t1',
  'https://Id.Example.Test/t1/token',
  'https://id.example.test:443/t1',
  'https://id.example.test./t1',
  'https://id.example.test/x/../t1/token',
  'https://id.example.test/./t1',
  'https://id.example.test/%74%31/token',
  'https://id.example.test//t1//token',
  'https://id.example.test/t1%2Ftoken',
];

test('the issuer, its endpoints and anything under it are refused as resource identifiers (400 naming the field)', async (t) => {
  for (const uri of REFUSED) {
    const r = await createClient({ name: 'RS', grant_types: ['client_credentials'], resource_identifiers: [uri] });
    t.is(r.status, 400, `${uri}: ${JSON.stringify(r.body)}`);
    t.is(r.body.error, 'invalid_request', uri);
    t.regex(String(r.body.error_description), /^body\.resource_identifiers\.0: .*issuer identifier/, uri);
    t.deepEqual(
      (r.body.details as { field: string }[]).map((x) => x.field),
      ['body.resource_identifiers.0'],
      uri,
    );
  }
  // The offending one is named among legitimate ones.
  const r = await createClient({
    name: 'RS',
    grant_types: ['client_credentials'],
    resource_identifiers: ['https://api.example.test', `${ISSUER}/token`],
  });
  t.is(r.status, 400);
  t.regex(String(r.body.error_description), /^body\.resource_identifiers\.1: /);
});

test('resource identifiers beside the issuer are still accepted', async (t) => {
  const ok = [
    'https://api.example.test',
    'https://id.example.test/t10',
    'https://id.example.test/api',
    'http://id.example.test/t1',
    'https://id.example.test:8443/t1',
    'urn:example:api',
  ];
  const r = await createClient({ name: 'RS', grant_types: ['client_credentials'], resource_identifiers: ok });
  t.is(r.status, 201, JSON.stringify(r.body));
  t.deepEqual(r.body.resource_identifiers, ok);
});

test('the CLI refuses it too, naming the flag', async (t) => {
  const run = await iam(
    db,
    [
      'clients',
      'create',
      '--tenant',
      tenantId,
      '--name',
      'RS',
      '--grant-type',
      'client_credentials',
      '--resource-identifier',
      'https://api.example.test',
      '--resource-identifier',
      `${ISSUER}/token`,
    ],
    { IAM_ISSUER: ISSUER },
  );
  t.not(run.code, 0, run.stdout);
  t.regex(run.stderr, /--resource-identifier "https:\/\/id\.example\.test\/t1\/token"/);
  t.regex(run.stderr, /issuer identifier/);
});

test('token exchange refuses the issuer as a resource, even one the client registered as an audience', async (t) => {
  const created = await createClient({
    name: 'Exchanger',
    grant_types: ['client_credentials', TE_GRANT],
    scopes: ['api'],
    audiences: [`${ISSUER}/api`, 'https://api.example.test'],
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const caller = { clientId: String(created.body.client_id), secret: String(created.body.client_secret) };
  await putSettings(d.url, admin, { enabled: true, allowedSubjectTokenTypes: ['access_token'] });
  const own = await clientCredentialsToken(d.url, caller.clientId, caller.secret);
  const refused = await exchange(d.url, caller, {
    subject_token: own,
    subject_token_type: AT,
    resource: `${ISSUER}/api`,
  });
  t.is(refused.status, 400, JSON.stringify(refused.body));
  t.is(refused.body.error, 'invalid_target');
  t.regex(String(refused.body.error_description), /this authorization server/);
  const ok = await exchange(d.url, caller, {
    subject_token: own,
    subject_token_type: AT,
    resource: 'https://api.example.test',
  });
  t.is(ok.status, 200, JSON.stringify(ok.body));
});
