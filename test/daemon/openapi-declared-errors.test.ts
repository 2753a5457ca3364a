/**
 * The error responses each operation of the interface specification declares in
 * /openapi.json, pinned against a table, so a route that gains or loses one is noticed here.
 * The specification states how many error responses each operation declares ("N error
 * responses are declared"); where ours differ, docs/conformance.md ("Deviations from the
 * interface") says why, and this test checks that it does.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { clientCredentialsToken, seed, type Seeded } from '../helpers/seed.js';

let db: TestDb;
let d: Daemon;
let s: Seeded;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  d = await startDaemon(db.url, db.dir);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

/** [method, path, the statuses we declare, the specification's count]. */
const TABLE: [string, string, number[], number][] = [
  ['post', '/api/v1/auth/direct/session', [400, 401, 403], 3],
  [
    'post',
    '/api/admin/platform/control-plane/tenant-recovery/{operationId}/reactivate',
    [400, 401, 403, 404, 409, 422],
    6,
  ],
  ['put', '/api/admin/settings/token-exchange', [400, 401, 403, 404], 5],
  ['patch', '/api/admin/tenants/{tenantId}/email-settings', [400, 401, 403, 404], 3],
  ['patch', '/api/admin/custom-claims/{id}/rename', [400, 401, 403, 404, 409], 6],
  ['put', '/api/admin/platform/plugins/{id}/enable', [400, 401, 403, 404, 422], 5],
  ['put', '/api/admin/external-token-refresh/config', [400, 401, 403, 404, 503], 5],
  ['post', '/api/admin/field-mapping/source-profiles', [400, 401, 403, 404, 409, 422], 6],
  ['patch', '/api/admin/agent-grants/{id}', [400, 401, 403, 404, 409, 412], 6],
  [
    'post',
    '/api/admin/field-mapping/operational-notification-states/{stateId}/resolve',
    [400, 401, 403, 404, 409, 422],
    6,
  ],
  ['get', '/api/admin/users/{id}/relationships', [400, 401, 403, 404], 3],
  ['post', '/api/admin/tenants/{id}/lifecycle/suspend', [400, 401, 403, 404, 409, 422], 2],
  ['put', '/api/admin/field-mapping/federation-trust-sources/{id}', [400, 401, 403, 404, 409, 422], 6],
  ['get', '/api/admin/field-mapping/federation-trust-sources', [400, 401, 403, 404], 6],
  ['put', '/api/admin/agent-write/clients/{id}/metadata', [400, 401, 403, 404], 4],
  // "One default error response": the spec's approvals list declares no status.
  ['get', '/api/admin/approvals', [400, 401, 403], 1],
  ['post', '/api/admin/tenants/{id}/provisioning/retry', [400, 401, 403, 404, 409, 422], 5],
];

type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

test('each specified operation declares exactly the error responses of the table', async (t) => {
  const doc = (await (await fetch(`${d.url}/openapi.json`)).json()) as Doc;
  for (const [method, path, ours] of TABLE) {
    const op = doc.paths[path]?.[method];
    if (!op) {
      t.fail(`${method.toUpperCase()} ${path} is not in /openapi.json`);
      continue;
    }
    const declared = Object.keys(op.responses)
      .map(Number)
      .filter((s) => s >= 400)
      .sort((a, b) => a - b);
    t.deepEqual(declared, ours, `${method.toUpperCase()} ${path}`);
  }
});

test('every count that differs from the specification is explained in docs/conformance.md', (t) => {
  const doc = readFileSync('docs/conformance.md', 'utf8');
  const section = doc.slice(doc.indexOf('## Deviations from the interface'));
  t.true(section.length > 40, 'docs/conformance.md has the section');
  for (const [method, path, ours, spec] of TABLE) {
    if (ours.length === spec) continue;
    // The row: | `METHOD path` | spec's count | our count | our statuses | why |
    const row = `| \`${method.toUpperCase()} ${path}\` | ${spec} | ${ours.length} | ${ours.join(', ')} |`;
    t.true(section.includes(row), `docs/conformance.md lacks the row starting ${row}`);
  }
});

test('source profile create and the trust source list answer their declared 404 for a tenant_id naming no tenant', async (t) => {
  const token = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
  const nowhere = 'ten_0000000000000000';
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  // Was a 500: the profile's foreign key to the tenant refused the insert.
  const created = await fetch(`${d.url}/api/admin/field-mapping/source-profiles?tenant_id=${nowhere}`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ sourceType: 'csv', profileKey: 'hr', displayName: 'HR' }),
  });
  t.is(created.status, 404);
  t.is(((await created.json()) as { error: string }).error, 'not_found');
  // Was an empty 200, as if the tenant existed.
  const listed = await fetch(`${d.url}/api/admin/field-mapping/federation-trust-sources?tenant_id=${nowhere}`, {
    headers,
  });
  t.is(listed.status, 404);
  t.is(((await listed.json()) as { error: string }).error, 'not_found');
  // The seeded tenant still lists (empty) and creates.
  const own = await fetch(`${d.url}/api/admin/field-mapping/federation-trust-sources?tenant_id=${s.tenantId}`, {
    headers,
  });
  t.is(own.status, 200);
});
