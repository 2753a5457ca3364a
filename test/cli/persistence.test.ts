/**
 * What an operator creates with the CLI is what the daemon serves, and it survives a
 * daemon restart.
 */
import test from 'ava';
import { iamJson } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { startDaemon } from '../helpers/daemon.js';
import { clientCredentialsToken } from '../helpers/seed.js';

test('tenant, confidential client and user created with --json are served by the daemon across a restart', async (t) => {
  const db = await testDatabase(t);
  await iamJson(db, ['db', 'migrate']);
  const tenant = await iamJson<{ id: string }>(db, ['tenants', 'create', '--name', 'Persisted']);
  t.regex(tenant.id, /^ten_/);
  const client = await iamJson<{ id: string; client_id: string; client_secret: string }>(db, [
    'clients',
    'create',
    '--tenant',
    tenant.id,
    '--name',
    'ops',
    '--grant-type',
    'client_credentials',
    '--scope',
    'iam.admin',
  ]);
  t.truthy(client.id && client.client_id && client.client_secret);
  const user = await iamJson<{ id: string; email: string }>(db, [
    'users',
    'create',
    '--tenant',
    tenant.id,
    '--email',
    'kept@example.com',
    '--name',
    'Kept',
  ]);

  for (const round of [1, 2]) {
    const d = await startDaemon(db.url, db.dir);
    try {
      const token = await clientCredentialsToken(d.url, client.client_id, client.client_secret);
      const res = await fetch(`${d.url}/api/admin/tenants/${tenant.id}/users`, {
        headers: { authorization: `Bearer ${token}` },
      });
      t.is(res.status, 200, `round ${round}`);
      const body = (await res.json()) as { users: { id: string; email: string }[] };
      t.deepEqual(
        body.users.map((u) => [u.id, u.email]),
        [[user.id, 'kept@example.com']],
        `round ${round}`,
      );
    } finally {
      t.is(await d.stop('SIGTERM'), 0);
    }
  }
  const listed = await iamJson<{ client_id: string }[]>(db, ['clients', 'list', '--tenant', tenant.id]);
  t.deepEqual(
    listed.map((c) => c.client_id),
    [client.client_id],
  );
});
