/**
 * Hosted protected resource metadata (RFC 9728; docs/mcp.md): the admin API stores, shows and
 * removes a resource server's document (validated, ETag and If-Match, audited), the public URL
 * serves it (CORS open, cacheable, application/json), and the first store makes the resource
 * server a strict introspector. One daemon for the file.
 */
import test from 'ava';
import { api } from '../helpers/api.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import {
  activeTenant,
  clientCredentialsToken,
  credentialsClient,
  introspectAs,
  openServices,
  seed,
  type Seeded,
} from '../helpers/seed.js';

const R = 'https://mcp.example.test/mcp';
const ELSEWHERE = 'https://other-api.example.test';

let db: TestDb;
let d: Daemon;
let s: Seeded;
let admin: string;
let rs: { clientId: string; secret: string };
let plain: { clientId: string; secret: string }; // registers no resource identifier
let worker: { clientId: string; secret: string };
let otherTenantRs: string;

const path = (clientId: string, tenant = s.tenantId) =>
  `/api/admin/tenants/${tenant}/clients/${clientId}/resource-metadata`;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  rs = await credentialsClient(directory, s.tenantId, { name: 'MCP server', resource_identifiers: [R] });
  await credentialsClient(directory, s.tenantId, { name: 'Other API', resource_identifiers: [ELSEWHERE] });
  plain = await credentialsClient(directory, s.tenantId, { name: 'Plain' });
  worker = await credentialsClient(directory, s.tenantId, { name: 'Worker', scopes: ['jobs'] });
  const other = await activeTenant(provisioning, { name: 'Other' }, { type: 'system', id: 'test' });
  otherTenantRs = (
    await credentialsClient(directory, other.id, {
      name: 'Theirs',
      resource_identifiers: ['https://theirs.example.test'],
    })
  ).clientId;
  await ds.destroy();
  d = await startDaemon(db.url, db.dir);
  admin = await clientCredentialsToken(d.url, s.tenantAdmin.clientId, s.tenantAdmin.secret);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

async function ccToken(resource: string): Promise<string> {
  const res = await fetch(`${d.url}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'Basic ' + Buffer.from(`${worker.clientId}:${worker.secret}`).toString('base64'),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

test('store, show, replace under If-Match, serve publicly, remove; strict introspection from the first store', async (t) => {
  const toR = await ccToken(R);
  const toElsewhere = await ccToken(ELSEWHERE);
  // Before: a resource server that is not strict sees every token of its tenant.
  t.true((await introspectAs(d.url, rs, toElsewhere)).body.active);
  t.is((await api(d.url, 'GET', path(rs.clientId), { token: admin })).status, 404);
  t.is((await api(d.url, 'GET', `/resource-metadata/${rs.clientId}`)).status, 404);

  const doc = { resource: R, scopes_supported: ['mcp:tools'], resource_name: 'Example MCP', 'x-extension': { a: 1 } };
  const put = await api(d.url, 'PUT', path(rs.clientId), { token: admin, body: doc });
  t.is(put.status, 201, put.text);
  const url = `${d.url}/resource-metadata/${rs.clientId}`;
  t.is(put.body.url, url);
  t.true(put.body.strict_introspection);
  t.deepEqual(put.body.document, {
    ...doc,
    authorization_servers: [d.url],
    bearer_methods_supported: ['header'],
  });
  const etag = put.headers.get('etag')!;
  t.regex(etag, /^"[\w-]+"$/);

  // Strict now: a token addressed elsewhere is inactive to it, one addressed to it active.
  t.deepEqual((await introspectAs(d.url, rs, toElsewhere)).body, { active: false });
  t.true((await introspectAs(d.url, rs, toR)).body.active);

  // The public document: the stored JSON, CORS open, cacheable, with the same ETag.
  const pub = await fetch(url, { headers: { origin: 'https://inspector.example.test' } });
  t.is(pub.status, 200);
  t.regex(pub.headers.get('content-type')!, /^application\/json/);
  t.is(pub.headers.get('access-control-allow-origin'), '*');
  t.regex(pub.headers.get('cache-control')!, /max-age=\d+/);
  t.is(pub.headers.get('etag'), etag);
  t.deepEqual(await pub.json(), put.body.document);

  // Replace: a stale If-Match is 412, the current one 200; the audit names the actor.
  const stale = await api(d.url, 'PUT', path(rs.clientId), {
    token: admin,
    body: { resource: R },
    headers: { 'if-match': '"stale"' },
  });
  t.is(stale.status, 412);
  t.is(stale.body.error, 'precondition_failed');
  const replaced = await api(d.url, 'PUT', path(rs.clientId), {
    token: admin,
    body: { resource: R, resource_documentation: 'https://mcp.example.test/docs' },
    headers: { 'if-match': etag },
  });
  t.is(replaced.status, 200, replaced.text);
  t.not(replaced.headers.get('etag'), etag);
  const shown = await api(d.url, 'GET', path(rs.clientId), { token: admin });
  t.is(shown.body.document.resource_documentation, 'https://mcp.example.test/docs');
  t.is(shown.headers.get('etag'), replaced.headers.get('etag'));
  const events = await api(d.url, 'GET', `/api/admin/audit?tenant_id=${s.tenantId}&limit=50`, { token: admin });
  const set = (events.body.events ?? events.body.items ?? []).filter(
    (e: { action: string }) => e.action === 'client.resource_metadata.set',
  );
  t.is(set.length, 2, events.text.slice(0, 300));
  t.is(set[0].actor_id ?? set[0].actor?.id, s.tenantAdmin.clientId);

  // Remove: gone publicly; strict introspection stays as it is.
  t.is((await api(d.url, 'DELETE', path(rs.clientId), { token: admin })).status, 204);
  t.is((await fetch(url)).status, 404);
  t.deepEqual((await introspectAs(d.url, rs, toElsewhere)).body, { active: false });
  t.is((await api(d.url, 'DELETE', path(rs.clientId), { token: admin })).status, 404);
});

test('bad documents are 400 naming the field; another tenant’s client is 404', async (t) => {
  const bad: [string, Record<string, unknown>, RegExp][] = [
    [rs.clientId, { resource: ELSEWHERE }, /resource/],
    [plain.clientId, { resource: R }, /resource/],
    [rs.clientId, {}, /resource/],
    [rs.clientId, { resource: R, authorization_servers: ['not a url'] }, /authorization_servers/],
    [rs.clientId, { resource: R, bearer_methods_supported: ['cookie'] }, /bearer_methods_supported/],
    [rs.clientId, { resource: R, resource_signing_alg_values_supported: ['none'] }, /resource_signing_alg/],
    [rs.clientId, { resource: R, signed_metadata: 'eyJ...' }, /signed_metadata/],
    [rs.clientId, { resource: R, 'x-big': 'a'.repeat(17_000) }, /document/],
  ];
  for (const [client, body, field] of bad) {
    const r = await api(d.url, 'PUT', path(client), { token: admin, body });
    t.is(r.status, 400, JSON.stringify(body).slice(0, 80));
    t.regex(r.body.message, field);
  }
  // Another tenant's client through this tenant's path: 404, never 403; nothing published.
  t.is((await api(d.url, 'PUT', path(otherTenantRs), { token: admin, body: { resource: R } })).status, 404);
  t.is((await api(d.url, 'GET', path(otherTenantRs), { token: admin })).status, 404);
  t.is((await fetch(`${d.url}/resource-metadata/${otherTenantRs}`)).status, 404);
});
