/**
 * `iam external-tokens refresh` and `iam external-tokens status`, run as an operator would,
 * against a real node-oidc-provider upstream: the manual run refreshes the tenant's (or one
 * user's) due links whatever `enabled` says, prints progress and the counts, and the run is
 * recorded for `status`.
 */
import test from 'ava';
import { iam } from '../helpers/cli.js';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';
import { startRefreshUpstream, type RefreshUpstream } from '../helpers/refresh-upstream.js';
import { linkUser, openLinkToken, rawLink, registerUpstream } from '../helpers/refresh-links.js';

const actor = { type: 'system' as const, id: 'test' };
let db: TestDb;
let up: RefreshUpstream;
let tenantId: string;
let links: { id: string; userId: string; access: string }[];
let env: Record<string, string>;

test.before(async () => {
  db = await createTestDatabase();
  up = await startRefreshUpstream({ accessTtlSeconds: 3600 });
  const { ds, directory, provisioning } = await openServices(db.url, db.dir);
  tenantId = (await activeTenant(provisioning, { name: 'Cli' }, actor)).id;
  const providerId = await registerUpstream(ds, tenantId, up);
  links = [];
  for (const i of [0, 1]) {
    const user = await directory.createUser(tenantId, { email: `cli-${i}@example.com`, name: 'Cli' }, actor);
    const tokens = await up.signIn(`cli-${i}`);
    const id = await linkUser(ds, {
      tenantId,
      providerId,
      userId: user.id,
      upstream: up,
      sub: `cli-${i}`,
      tokens,
      accessExpiresAt: Date.now() + 30_000,
    });
    links.push({ id, userId: user.id, access: tokens.access_token });
  }
  await ds.destroy();
  env = { IAM_OUTBOUND_ALLOW_LOOPBACK: 'true', IAM_OUTBOUND_CA_FILE: up.cert.certFile };
});
test.after.always(async () => {
  await up?.close();
  await db?.drop();
});

test.serial('refresh --user: that user only, now, though scanning is not enabled; --json summary', async (t) => {
  const r = await iam(
    db,
    ['external-tokens', 'refresh', '--tenant', tenantId, '--user', links[0].userId, '--json'],
    env,
  );
  t.is(r.code, 0, r.stderr + r.stdout);
  const summary = JSON.parse(r.stdout) as Record<string, unknown>;
  t.like(summary, { trigger: 'manual', tenants: [tenantId], refreshed: 1, invalid_grant: 0, errors: 0 });
  t.is(up.tokenCalls.refresh_token, 1);
  const { ds } = await openServices(db.url, db.dir);
  try {
    t.not(openLinkToken(tenantId, await rawLink(ds, tenantId, links[0].id), 'access'), links[0].access);
    t.is(openLinkToken(tenantId, await rawLink(ds, tenantId, links[1].id), 'access'), links[1].access);
  } finally {
    await ds.destroy();
  }
});

test.serial('refresh: progress per link on stderr, counts on stdout; then nothing is due', async (t) => {
  const r = await iam(db, ['external-tokens', 'refresh', '--tenant', tenantId], env);
  t.is(r.code, 0, r.stderr);
  t.true(r.stderr.includes(`${links[1].id}: refreshed`), r.stderr);
  t.regex(r.stdout, /refreshed:\s+1/);
  t.regex(r.stdout, /invalid_grant:\s+0/);
  const again = await iam(db, ['external-tokens', 'refresh', '--tenant', tenantId, '--json'], env);
  t.is(JSON.parse(again.stdout).refreshed, 0);
  t.is(up.tokenCalls.refresh_token, 2);
});

test.serial('status lists the recorded runs, newest first, with their counts', async (t) => {
  const r = await iam(db, ['external-tokens', 'status', '--json']);
  t.is(r.code, 0, r.stderr);
  const runs = JSON.parse(r.stdout) as { trigger_kind: string; refreshed: number; user_id: string | null }[];
  t.deepEqual(
    runs.map((x) => [x.trigger_kind, x.refreshed]),
    [
      ['manual', 0],
      ['manual', 1],
      ['manual', 1],
    ],
  );
  t.is(runs[2].user_id, links[0].userId);
  const text = await iam(db, ['external-tokens', 'status', '--limit', '1']);
  t.is(text.code, 0);
  t.regex(text.stdout, /INVALID_GRANT/);
  t.is(text.stdout.trim().split('\n').length, 2, 'a header and one run');
});

test.serial('an unknown tenant is refused naming the flag', async (t) => {
  const r = await iam(db, ['external-tokens', 'refresh', '--tenant', 'ten_nope', '--json'], env);
  t.is(r.code, 1);
  t.like(JSON.parse(r.stdout), { error: 'not_found' });
  t.regex(JSON.parse(r.stdout).message, /--tenant/);
});

test('help: both commands are listed, with their flags and examples', async (t) => {
  const root = await iam(db, ['external-tokens', '--help']);
  t.is(root.code, 0, root.stderr);
  t.regex(root.stdout, /external-tokens refresh\s+\S/);
  t.regex(root.stdout, /external-tokens status\s+\S/);
  const help = await iam(db, ['external-tokens', 'refresh', '--help']);
  for (const flag of ['--tenant', '--user', '--json']) t.true(help.stdout.includes(flag), flag);
  t.regex(help.stdout, /EXAMPLES[\s\S]*\$ iam external-tokens refresh --tenant/);
});
