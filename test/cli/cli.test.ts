/**
 * The `iam` operator CLI, run as the real executable (`node bin/iam.js ...`) against a fresh
 * database per test: SQLite by default, MariaDB when IAM_TEST_DATABASE_URL names a server.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { parseDatabaseUrl } from '../../shared/config.js';
import { connect, createDataSource } from '../../shared/db/data-source.js';
import { iam, iamJson, SCHEMA_MESSAGE } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { openServices } from '../helpers/seed.js';

/** A migrated database with one tenant. */
async function withTenant(t: Parameters<typeof testDatabase>[0], name = 'Acme') {
  const db = await testDatabase(t);
  await iamJson(db, ['db', 'migrate']);
  const tenant = await iamJson<{ id: string; name: string }>(db, ['tenants', 'create', '--name', name]);
  return { db, tenant };
}

test('--help lists every command, and command help shows flags and examples', async (t) => {
  const db = { url: 'sqlite:/nonexistent/never-opened.db', dir: '/nonexistent' };
  const root = await iam(db, ['--help']);
  t.is(root.code, 0, root.stderr);
  for (const cmd of [
    'db migrate',
    'tenants create',
    'tenants list',
    'tenants set-policy-versions',
    'clients create',
    'clients list',
    'users create',
    'users list',
    'keys list',
    'keys rotate',
    'provisioning show',
    'provisioning retry',
    'autocomplete',
  ]) {
    t.regex(root.stdout, new RegExp(`^\\s+${cmd}\\s+\\S`, 'm'), `root help lists "${cmd}" with a summary`);
  }

  const create = await iam(db, ['clients', 'create', '--help']);
  t.is(create.code, 0, create.stderr);
  for (const flag of [
    '--tenant',
    '--name',
    '--redirect-uri',
    '--grant-type',
    '--scope',
    '--audience',
    '--public',
    '--first-party',
    '--allowed-origin',
    '--json',
  ]) {
    t.true(create.stdout.includes(flag), `clients create --help mentions ${flag}`);
  }
  t.regex(create.stdout, /EXAMPLES[\s\S]*\$ iam clients create --tenant/);
});

test('the build writes oclif.manifest.json naming every compiled command (so a start loads only its own)', (t) => {
  // cli/manifest.ts, run by `npm run build` and `prepare`. A manifest missing a command would
  // hide it from `iam`; without a manifest each start imports every command (about a second).
  const root = fileURLToPath(new URL('../../..', import.meta.url));
  const dir = join(root, 'dist/cli/commands');
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.js') ? [join(d, e.name)] : [],
    );
  const files = walk(dir).map((f) => relative(dir, f).replace(/\.js$/, '').split('/').join(':'));
  const manifest = JSON.parse(readFileSync(join(root, 'oclif.manifest.json'), 'utf8')) as { commands: object };
  t.deepEqual(Object.keys(manifest.commands).sort(), files.sort());
  t.true(files.includes('users:create'));
});

test('a command before `db migrate` refuses with exit 1; migrate applies, then reports already current', async (t) => {
  const db = await testDatabase(t, { empty: true });
  // An empty database that exists (a SQLite file of no bytes is one): one that does not exist
  // is refused before anything else (test/cli/first-hour.test.ts).
  const target = parseDatabaseUrl(db.url);
  if (target.kind === 'sqlite') writeFileSync(target.path, '');

  const before = await iam(db, ['tenants', 'list']);
  t.is(before.code, 1);
  t.true(before.stderr.includes(SCHEMA_MESSAGE), before.stderr);
  t.is(before.stdout, '');

  const beforeJson = await iam(db, ['users', 'list', '--tenant', 'ten_x', '--json']);
  t.is(beforeJson.code, 1);
  t.deepEqual(JSON.parse(beforeJson.stdout), { error: 'schema_not_current', message: SCHEMA_MESSAGE });

  const migrate = await iam(db, ['db', 'migrate']);
  t.is(migrate.code, 0, migrate.stderr);
  t.regex(migrate.stdout, /^\s+applied Core\d+$/m, 'a progress line per migration');

  const again = await iam(db, ['db', 'migrate']);
  t.is(again.code, 0, again.stderr);
  t.regex(again.stdout, /already current/);
  t.notRegex(again.stdout, /applied Core/);

  t.deepEqual(await iamJson(db, ['db', 'migrate']), { applied: [], current: true });
  t.deepEqual(await iamJson(db, ['tenants', 'list']), []);
});

test('db migrate --create --json creates the database and names the migrations it applied', async (t) => {
  const db = await testDatabase(t, { empty: true });
  const r = await iamJson<{ applied: string[]; current: boolean }>(db, ['db', 'migrate', '--create']);
  t.true(r.current);
  t.true(r.applied.length >= 1);
  t.regex(r.applied[0], /^Core\d+$/);
});

test('tenants, clients and users: create --json prints the object, list returns it', async (t) => {
  const { db, tenant } = await withTenant(t, 'Acme Corp');
  t.regex(tenant.id, /^ten_/);
  t.is(tenant.name, 'Acme Corp');
  t.false('settings' in tenant);
  const tenants = await iamJson<{ id: string; name: string }[]>(db, ['tenants', 'list']);
  t.deepEqual(
    tenants.map((x) => [x.id, x.name]),
    [[tenant.id, 'Acme Corp']],
  );

  // Confidential client; repeatable flags take one value each.
  const conf = await iamJson(db, [
    'clients',
    'create',
    '--tenant',
    tenant.id,
    '--name',
    'Web app',
    '--redirect-uri',
    'https://app.example.com/cb',
    '--redirect-uri',
    'https://app.example.com/cb2',
    '--scope',
    'openid',
    '--scope',
    'invoices:read',
    '--audience',
    'https://api.example.com',
  ]);
  t.is(conf.tenant_id, tenant.id);
  t.regex(conf.id, /^cli_/);
  t.is(typeof conf.client_id, 'string');
  t.true(conf.client_id.length >= 16);
  t.is(typeof conf.client_secret, 'string');
  t.true(conf.client_secret.length >= 32);
  t.is(conf.client_type, 'confidential');
  t.deepEqual(conf.redirect_uris, ['https://app.example.com/cb', 'https://app.example.com/cb2']);
  t.deepEqual(conf.scopes, ['openid', 'invoices:read']);
  t.deepEqual(conf.audiences, ['https://api.example.com']);
  t.deepEqual(conf.grant_types, ['authorization_code', 'refresh_token']);
  t.false('secret_hash' in conf);

  // Public client: no secret at all.
  const pub = await iamJson(db, [
    'clients',
    'create',
    '--tenant',
    tenant.id,
    '--name',
    'Native app',
    '--public',
    '--first-party',
    '--redirect-uri',
    'http://127.0.0.1:8400/cb',
  ]);
  t.is(pub.client_type, 'public');
  t.true(pub.first_party);
  t.false('client_secret' in pub);
  t.false('secret_hash' in pub);

  const clients = await iamJson<Record<string, unknown>[]>(db, ['clients', 'list', '--tenant', tenant.id]);
  t.deepEqual(clients.map((c) => c.client_id).sort(), [conf.client_id, pub.client_id].sort());
  for (const c of clients) {
    t.false('client_secret' in c);
    t.false('secret_hash' in c);
  }
  const clientsText = await iam(db, ['clients', 'list', '--tenant', tenant.id]);
  t.is(clientsText.code, 0, clientsText.stderr);
  t.true(clientsText.stdout.includes(conf.client_id));
  t.true(clientsText.stdout.includes(pub.client_id));
  t.false(clientsText.stdout.includes(conf.client_secret), 'the secret is never listed');

  const user = await iamJson(db, [
    'users',
    'create',
    '--tenant',
    tenant.id,
    '--email',
    'Ada@Example.COM',
    '--name',
    'Ada Lovelace',
  ]);
  t.regex(user.id, /^usr_/);
  t.is(user.email, 'ada@example.com');
  t.is(user.name, 'Ada Lovelace');
  t.is(user.tenant_id, tenant.id);
  const users = await iamJson<{ id: string; email: string }[]>(db, ['users', 'list', '--tenant', tenant.id]);
  t.deepEqual(
    users.map((u) => [u.id, u.email]),
    [[user.id, 'ada@example.com']],
  );

  // Every change is audited as the operator at the CLI.
  const ds = await connect(createDataSource(parseDatabaseUrl(db.url)));
  try {
    const rows: { actor_type: string; actor_id: string; action: string; target_id: string }[] = await ds.query(
      'SELECT actor_type, actor_id, action, target_id FROM audit_events ORDER BY created_at, action',
    );
    // The operator's changes, as the operator; the tenant's activation, by the provisioning runner.
    const byOperator = rows.filter((r) => r.action !== 'tenant.activate');
    t.deepEqual(
      byOperator.map((r) => [r.action, r.target_id]).sort(),
      [
        ['client.create', conf.client_id],
        ['client.create', pub.client_id],
        ['tenant.create', tenant.id],
        ['user.create', user.id],
      ].sort(),
    );
    for (const r of byOperator) t.deepEqual([r.actor_type, r.actor_id], ['cli', userInfo().username]);
    t.deepEqual(
      rows.filter((r) => r.action === 'tenant.activate').map((r) => [r.target_id, r.actor_type, r.actor_id]),
      [[tenant.id, 'system', 'provisioning']],
    );
  } finally {
    await ds.destroy();
  }
});

test('clients create without --json prints the secret once with a warning', async (t) => {
  const { db, tenant } = await withTenant(t);
  const r = await iam(db, [
    'clients',
    'create',
    '--tenant',
    tenant.id,
    '--name',
    'Web',
    '--redirect-uri',
    'https://app.example.com/cb',
  ]);
  t.is(r.code, 0, r.stderr);
  const secret = /client_secret:\s+(\S+)/.exec(r.stdout)?.[1];
  t.truthy(secret, r.stdout);
  t.is(r.stdout.split(secret!).length - 1, 1, 'the secret appears exactly once');
  t.regex(r.stderr, /cannot be shown again/);

  const pub = await iam(db, [
    'clients',
    'create',
    '--tenant',
    tenant.id,
    '--name',
    'Pub',
    '--public',
    '--redirect-uri',
    'http://127.0.0.1/cb',
  ]);
  t.is(pub.code, 0, pub.stderr);
  t.notRegex(pub.stdout, /client_secret/);
  t.notRegex(pub.stderr, /cannot be shown again/);
});

test("clients list for another tenant does not show the first tenant's clients", async (t) => {
  const { db, tenant: a } = await withTenant(t, 'Tenant A');
  const b = await iamJson<{ id: string }>(db, ['tenants', 'create', '--name', 'Tenant B']);
  const client = await iamJson(db, [
    'clients',
    'create',
    '--tenant',
    a.id,
    '--name',
    'A app',
    '--redirect-uri',
    'https://a.example.com/cb',
  ]);
  await iamJson(db, ['users', 'create', '--tenant', a.id, '--email', 'a@example.com', '--name', 'A user']);

  t.deepEqual(await iamJson(db, ['clients', 'list', '--tenant', b.id]), []);
  t.deepEqual(await iamJson(db, ['users', 'list', '--tenant', b.id]), []);
  const text = await iam(db, ['clients', 'list', '--tenant', b.id]);
  t.is(text.code, 0, text.stderr);
  t.false(text.stdout.includes(client.client_id));
  // The same query for tenant A does find it, so the empty result above is isolation, not a broken list.
  t.deepEqual(
    (await iamJson<{ client_id: string }[]>(db, ['clients', 'list', '--tenant', a.id])).map((c) => c.client_id),
    [client.client_id],
  );

  const unknown = await iam(db, ['clients', 'list', '--tenant', 'ten_doesnotexist']);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /--tenant.*ten_doesnotexist/);
});

test('a duplicate user email exits 1 with a message naming the email', async (t) => {
  const { db, tenant } = await withTenant(t);
  await iamJson(db, ['users', 'create', '--tenant', tenant.id, '--email', 'ada@example.com', '--name', 'Ada']);

  const dup = await iam(db, [
    'users',
    'create',
    '--tenant',
    tenant.id,
    '--email',
    'ADA@example.com',
    '--name',
    'Ada again',
  ]);
  t.is(dup.code, 1);
  t.regex(dup.stderr, /--email/);
  t.regex(dup.stderr, /ada@example\.com already exists/);
  t.notRegex(dup.stderr, /\n\s+at /, 'no stack trace');

  const dupJson = await iam(db, [
    'users',
    'create',
    '--tenant',
    tenant.id,
    '--email',
    'ada@example.com',
    '--name',
    'Ada',
    '--json',
  ]);
  t.is(dupJson.code, 1);
  const err = JSON.parse(dupJson.stdout);
  t.is(err.error, 'conflict');
  t.regex(err.message, /already exists/);

  t.is((await iamJson<unknown[]>(db, ['users', 'list', '--tenant', tenant.id])).length, 1);
});

test('a missing required flag, an unknown flag or a stray argument exits 2', async (t) => {
  const db = await testDatabase(t);
  const noName = await iam(db, ['tenants', 'create']);
  t.is(noName.code, 2);
  t.regex(noName.stderr, /Missing required flag name/);

  const noEmail = await iam(db, ['users', 'create', '--tenant', 'ten_x', '--name', 'X', '--json']);
  t.is(noEmail.code, 2);
  t.is(JSON.parse(noEmail.stdout).error, 'usage_error');
  t.regex(JSON.parse(noEmail.stdout).message, /email/);

  const unknownFlag = await iam(db, ['tenants', 'list', '--colour']);
  t.is(unknownFlag.code, 2);

  // Non-greedy repeatable flags: a second word after --redirect-uri is not swallowed as a value.
  const stray = await iam(db, [
    'clients',
    'create',
    '--tenant',
    'ten_x',
    '--name',
    'X',
    '--redirect-uri',
    'https://a.example/cb',
    'https://b.example/cb',
  ]);
  t.is(stray.code, 2);
  t.regex(stray.stderr, /Unexpected argument/);

  const badGrant = await iam(db, ['clients', 'create', '--tenant', 'ten_x', '--name', 'X', '--grant-type', 'password']);
  t.is(badGrant.code, 2);
});

test('clients create --scope account needs --first-party (docs/scopes.md, "The account scope")', async (t) => {
  const { db, tenant } = await withTenant(t);
  const args = ['clients', 'create', '--tenant', tenant.id, '--name', 'Acct', '--redirect-uri', 'https://a.example/cb'];
  const refused = await iam(db, [...args, '--scope', 'openid', '--scope', 'account']);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /--scope.*account may be registered only on a first-party client/);
  t.deepEqual(await iamJson(db, ['clients', 'list', '--tenant', tenant.id]), [], 'nothing created');
  const ok = await iamJson<{ scopes: string[]; first_party: boolean }>(db, [
    ...args,
    '--scope',
    'openid',
    '--scope',
    'account',
    '--first-party',
  ]);
  t.deepEqual(ok.scopes, ['openid', 'account']);
  t.true(ok.first_party);
});

test('an invalid redirect URI exits 1 naming the flag, and creates nothing', async (t) => {
  const { db, tenant } = await withTenant(t);
  const r = await iam(db, [
    'clients',
    'create',
    '--tenant',
    tenant.id,
    '--name',
    'Evil',
    '--redirect-uri',
    'http://evil.example.com/cb',
  ]);
  t.is(r.code, 1);
  t.regex(r.stderr, /--redirect-uri "http:\/\/evil\.example\.com\/cb": http is allowed only for loopback hosts/);

  const frag = await iam(db, [
    'clients',
    'create',
    '--tenant',
    tenant.id,
    '--name',
    'Frag',
    '--redirect-uri',
    'https://ok.example.com/cb',
    '--redirect-uri',
    'https://app.example.com/cb#x',
    '--json',
  ]);
  t.is(frag.code, 1);
  const err = JSON.parse(frag.stdout);
  t.is(err.error, 'invalid_request');
  t.regex(err.message, /--redirect-uri "https:\/\/app\.example\.com\/cb#x".*fragment/);
  t.deepEqual(
    err.details.map((d: { field: string }) => d.field),
    ['redirect_uris.1'],
  );

  const none = await iam(db, ['clients', 'create', '--tenant', tenant.id, '--name', 'No URI']);
  t.is(none.code, 1);
  t.regex(none.stderr, /--redirect-uri: the authorization_code grant needs at least one redirect URI/);

  t.deepEqual(await iamJson(db, ['clients', 'list', '--tenant', tenant.id]), []);
});

test('--allowed-origin is repeatable and stored as a browser sends it; a path exits 1 naming the flag', async (t) => {
  const { db, tenant } = await withTenant(t);
  const spa = [
    ...['clients', 'create', '--tenant', tenant.id, '--name', 'SPA', '--public'],
    ...['--redirect-uri', 'https://spa.example.com/cb'],
  ];
  const c = await iamJson<{ allowed_origins: string[] }>(db, [
    ...spa,
    ...['--allowed-origin', 'HTTPS://SPA.example.com:443', '--allowed-origin', 'http://127.0.0.1:5173', '--json'],
  ]);
  t.deepEqual(c.allowed_origins, ['https://spa.example.com', 'http://127.0.0.1:5173']);

  const bad = await iam(db, [...spa, '--allowed-origin', 'https://spa.example.com/app']);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /--allowed-origin "https:\/\/spa\.example\.com\/app": must be scheme:\/\/host\[:port\]/);
  t.is((await iamJson<unknown[]>(db, ['clients', 'list', '--tenant', tenant.id])).length, 1);
});

test('tenants set-policy-versions stores the versions in the settings; clients create takes --logo-uri', async (t) => {
  const { db, tenant } = await withTenant(t);
  const r = await iamJson(db, [
    'tenants',
    'set-policy-versions',
    '--tenant',
    tenant.id,
    '--privacy-policy-version',
    '2026-11',
    '--tos-version',
    '7',
  ]);
  t.deepEqual(r, { tenant_id: tenant.id, policyVersions: { privacyPolicyVersion: '2026-11', tosVersion: '7' } });
  const { ds } = await openServices(db.url, db.dir);
  try {
    const [row] = await ds.query<{ settings: string }[]>('SELECT settings FROM tenants WHERE id = ?', [tenant.id]);
    t.deepEqual(JSON.parse(row.settings).consentPolicy, { privacyPolicyVersion: '2026-11', tosVersion: '7' });
  } finally {
    await ds.destroy();
  }
  const cleared = await iamJson(db, ['tenants', 'set-policy-versions', '--tenant', tenant.id, '--tos-version', '8']);
  t.deepEqual(cleared.policyVersions, { tosVersion: '8' }, 'a flag left out clears that version');
  const long = await iam(db, [
    'tenants',
    'set-policy-versions',
    '--tenant',
    tenant.id,
    '--tos-version',
    'x'.repeat(65),
  ]);
  t.is(long.code, 1);
  t.regex(long.stderr, /--tos-version/);

  const logo = 'https://app.example.com/logo.png';
  const args = [
    'clients',
    'create',
    '--tenant',
    tenant.id,
    '--name',
    'App',
    '--redirect-uri',
    'https://app.example.com/cb',
  ];
  const c = await iamJson(db, [...args, '--logo-uri', logo]);
  t.is(c.logo_uri, logo);
  const http = await iam(db, [...args, '--logo-uri', 'http://app.example.com/logo.png']);
  t.is(http.code, 1);
  t.regex(http.stderr, /--logo-uri/);
});

test('keys rotate leaves one active and one retiring key per algorithm', async (t) => {
  const db = await testDatabase(t);
  await iamJson(db, ['db', 'migrate']);
  t.deepEqual(await iamJson(db, ['keys', 'list']), []);

  const first = await iamJson<{ active: { kid: string }; retiring: unknown[] }>(db, ['keys', 'rotate']);
  t.deepEqual(first.retiring, []);

  const start = Date.now();
  const second = await iam(db, ['keys', 'rotate']);
  t.is(second.code, 0, second.stderr);
  t.true(second.stdout.includes(first.active.kid), 'text output names the retiring key');

  const keys = await iamJson<{ kid: string; alg: string; status: string; retire_at: string | null }[]>(db, [
    'keys',
    'list',
  ]);
  // One key per signing algorithm offered: ES256 (the default, `active` in the JSON), RS256, PS256, EdDSA.
  const algs = ['ES256', 'EdDSA', 'PS256', 'RS256'];
  const active = keys.filter((k) => k.status === 'active');
  const retiring = keys.filter((k) => k.status === 'retiring');
  t.is(keys.length, 8);
  t.deepEqual(active.map((k) => k.alg).sort(), algs);
  t.deepEqual(retiring.map((k) => k.alg).sort(), algs);
  t.false(active.some((k) => k.kid === first.active.kid));
  t.true(retiring.some((k) => k.kid === first.active.kid && k.alg === 'ES256'));
  t.true(active.every((k) => k.retire_at === null));
  // Default IAM_KEY_RETIRE_AFTER_SECONDS is one day.
  t.true(retiring.every((k) => Date.parse(k.retire_at!) >= start + 86_400_000 - 5_000));
  for (const k of keys)
    t.deepEqual(Object.keys(k).sort(), ['alg', 'created_at', 'kid', 'retire_at', 'status'], 'no key material');
});

test('a configuration error exits 1 with its one line', async (t) => {
  const db = await testDatabase(t);
  const r = await iam(db, ['tenants', 'list'], { IAM_DATABASE_URL: 'postgres://db/iam' });
  t.is(r.code, 1);
  t.is(r.stderr.trim(), 'Error: IAM_DATABASE_URL: must start with sqlite: or mysql://, got "postgres:..."');

  const short = await iam(db, ['tenants', 'list', '--json'], { IAM_SECRET_KEY: 'too-short' });
  t.is(short.code, 1);
  t.is(JSON.parse(short.stdout).error, 'config_error');
  t.regex(JSON.parse(short.stdout).message, /^IAM_SECRET_KEY: /);
});
