/**
 * The CLI of pushed authorization requests and request objects (docs/par.md, docs/cli.md):
 * `iam clients create --require-par --require-signed-request-object`, and the tenant's policy
 * with `iam tenants authorization-requests set|show`; a set without its flag is a usage error.
 * The real executable.
 */
import test from 'ava';
import { iam, iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { seed } from '../helpers/seed.js';

test('clients create --require-par and the tenant policy set and shown; set without --require-par exits 2', async (t) => {
  const db = await testDatabase(t);
  const { tenantId } = await seed(db.url, db.dir);
  const client = await iamJson(db, [
    'clients',
    'create',
    '--tenant',
    tenantId,
    '--name',
    'FAPI RP',
    '--redirect-uri',
    'https://rp.example.com/cb',
    '--require-par',
    '--require-signed-request-object',
  ]);
  t.like(client, { require_pushed_authorization_requests: true, require_signed_request_object: true });

  const set = await iamJson(db, ['tenants', 'authorization-requests', 'set', '--tenant', tenantId, '--require-par']);
  t.deepEqual(set.policy, { requirePushed: true });
  const shown = await iam(db, ['tenants', 'authorization-requests', 'show', '--tenant', tenantId]);
  t.is(shown.code, 0);
  t.regex(shown.stdout, /required of every client/);
  t.regex(shown.stdout, new RegExp(set.etag.replace(/[.*+?^${}()|[\]\\"]/g, '\\$&')));

  const bare = await iam(db, ['tenants', 'authorization-requests', 'set', '--tenant', tenantId]);
  t.is(bare.code, 2);
  t.regex(bare.stderr, /require-par/);
});
