/**
 * `iam clients resource-metadata set|show|remove` (docs/cli.md, docs/mcp.md) run as the real
 * executable: a document stored from flags and shown with its URL and etag, then removed with
 * --confirm; and a resource that is not the client's refused, the message naming the flag.
 */
import test from 'ava';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, credentialsClient, openServices } from '../helpers/seed.js';

const actor = { type: 'system' as const, id: 'test' };
const MCP = 'https://mcp.example.test/mcp';

test('resource-metadata set, show, remove; a resource the client does not serve names --resource', async (t) => {
  const db = await testDatabase(t);
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  const tenant = (await activeTenant(provisioning, { name: 'PRM CLI' }, actor)).id;
  const rs = await credentialsClient(directory, tenant, { name: 'MCP', resource_identifiers: [MCP] });
  await ds.destroy();
  const T = ['--tenant', tenant];
  const C = ['clients', 'resource-metadata'];

  const set = await iamJson(db, [...C, 'set', ...T, rs.clientId, '--resource', MCP, '--scope', 'mcp:tools']);
  t.like(set, { client_id: rs.clientId, created: true, strict_introspection: true });
  t.regex(set.url, new RegExp(`/resource-metadata/${rs.clientId}$`));
  t.deepEqual(set.document.scopes_supported, ['mcp:tools']);
  const shown = await iamJson(db, [...C, 'show', ...T, rs.clientId]);
  t.is(shown.etag, set.etag);
  t.deepEqual(shown.document, set.document);
  t.like(await iamJson(db, [...C, 'remove', ...T, rs.clientId, '--confirm', rs.clientId]), { removed: true });

  const refused = await iam(db, [
    ...C,
    'set',
    ...T,
    rs.clientId,
    '--resource',
    'https://elsewhere.example.test',
    '--json',
  ]);
  t.is(refused.code, 1);
  t.regex(JSON.parse(refused.stdout).message, /--resource/);
});
