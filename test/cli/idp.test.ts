/**
 * `iam idp add|list|disable` against a real upstream (node-oidc-provider on loopback HTTPS,
 * test/helpers/upstream-op.ts): the secret from stdin, stored sealed and never printed; the
 * discovery fetched at add time; a refused issuer named by its flag.
 */
import { rmSync } from 'node:fs';
import test from 'ava';
import { testDatabase } from '../helpers/db.js';
import { iam, iamJson } from '../helpers/cli.js';
import { makeCert } from '../helpers/https-issuer.js';
import { sql } from '../helpers/oauth.js';
import { startUpstreamOp, type UpstreamOp } from '../helpers/upstream-op.js';

const cert = makeCert();
let op: UpstreamOp;
test.before(async () => {
  op = await startUpstreamOp({ redirectUri: 'https://iam.example.test/login/upstream/callback', cert });
});
test.after.always(async () => {
  await op?.close();
  rmSync(cert.dir, { recursive: true, force: true });
});
const trust = { IAM_OUTBOUND_ALLOW_LOOPBACK: 'true', IAM_OUTBOUND_CA_FILE: cert.certFile };

test('add reads the secret from stdin, fetches discovery, never prints the secret; list and disable', async (t) => {
  const db = await testDatabase(t);
  await iamJson(db, ['db', 'migrate']);
  const tenant = await iamJson<{ id: string }>(db, ['tenants', 'create', '--name', 'Brokered']);
  const secret = 'cli-upstream-secret-0123456789';
  const add = await iam(
    db,
    [
      'idp',
      'add',
      '--tenant',
      tenant.id,
      '--issuer',
      op.issuer,
      '--client-id',
      op.clientId,
      '--client-secret-stdin',
      '--scope',
      'openid',
      '--scope',
      'email',
      '--scope',
      'offline_access',
      '--name',
      'Example Corp',
      '--link-by-verified-email',
      '--json',
    ],
    trust,
    { stdin: `${secret}\n` },
  );
  t.is(add.code, 0, add.stderr);
  t.false(add.stdout.includes(secret));
  t.false(add.stderr.includes(secret));
  const idp = JSON.parse(add.stdout) as Record<string, unknown>;
  t.regex(String(idp.id), /^uip_/);
  t.is(idp.slug, 'example-corp');
  t.deepEqual(idp.scopes, ['openid', 'email', 'offline_access']);
  t.true(idp.link_by_verified_email);
  t.regex(String(idp.redirect_uri), /\/login\/upstream\/callback$/);
  const rows = (await sql(db.url, db.dir, 'SELECT * FROM upstream_identity_providers')) as Record<string, unknown>[];
  t.is(rows.length, 1);
  t.false(JSON.stringify(rows).includes(secret));

  const human = await iam(db, ['idp', 'list', '--tenant', tenant.id], trust);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /example-corp/);
  t.false(human.stdout.includes(secret));
  const listed = await iamJson<Record<string, unknown>[]>(db, ['idp', 'list', '--tenant', tenant.id]);
  t.deepEqual(
    listed.map((p) => p.status),
    ['active'],
  );
  const off = await iamJson<Record<string, unknown>>(db, ['idp', 'disable', 'example-corp', '--tenant', tenant.id]);
  t.is(off.status, 'disabled');
  const on = await iamJson<Record<string, unknown>>(db, [
    'idp',
    'disable',
    String(idp.id),
    '--tenant',
    tenant.id,
    '--enable',
  ]);
  t.is(on.status, 'active');
});

test('add refuses an issuer that is not https, an unreachable one, and a missing secret, naming the flag', async (t) => {
  const db = await testDatabase(t);
  await iamJson(db, ['db', 'migrate']);
  const tenant = await iamJson<{ id: string }>(db, ['tenants', 'create', '--name', 'Refusals']);
  const base = ['idp', 'add', '--tenant', tenant.id, '--client-id', 'x', '--client-secret-stdin'];
  const http = await iam(db, [...base, '--issuer', 'http://login.example.com'], trust, { stdin: 's' });
  t.is(http.code, 1);
  t.regex(http.stderr, /invalid --issuer "http:\/\/login\.example\.com": must be an https URL/);
  const down = await iam(db, [...base, '--issuer', 'https://127.0.0.1:1', '--json'], trust, { stdin: 's' });
  t.is(down.code, 1);
  const err = JSON.parse(down.stdout) as Record<string, unknown>;
  t.is(err.error, 'upstream_discovery_failed');
  t.regex(String(err.message), /^--issuer: discovery of https:\/\/127\.0\.0\.1:1 failed/);
  // Loopback is refused without the operator's outbound loopback switch.
  const loop = await iam(db, [...base, '--issuer', op.issuer], { IAM_OUTBOUND_CA_FILE: cert.certFile }, { stdin: 's' });
  t.is(loop.code, 1);
  t.regex(loop.stderr, /--issuer/);
  const none = await iam(db, [...base, '--issuer', op.issuer], trust);
  t.is(none.code, 1);
  t.regex(none.stderr, /--client-secret-stdin: no secret on stdin/);
});

test('--help lists the idp commands, and idp add --help shows its flags and examples', async (t) => {
  const db = { url: 'sqlite:/nonexistent/never-opened.db', dir: '/nonexistent' };
  const root = await iam(db, ['--help']);
  t.is(root.code, 0, root.stderr);
  for (const cmd of ['idp add', 'idp list', 'idp disable'])
    t.regex(root.stdout, new RegExp(`^\\s+${cmd}\\s+\\S`, 'm'), `root help lists "${cmd}"`);
  const add = await iam(db, ['idp', 'add', '--help']);
  t.is(add.code, 0, add.stderr);
  for (const flag of ['--tenant', '--issuer', '--client-id', '--client-secret-stdin', '--scope', '--name', '--json'])
    t.true(add.stdout.includes(flag), `idp add --help mentions ${flag}`);
  t.regex(add.stdout, /EXAMPLES[\s\S]*iam idp add --tenant/);
});
