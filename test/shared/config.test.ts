import test from 'ava';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { pollerOptionsFromConfig } from '../../shared/services/federation/metadata-poller.js';
import { DAEMON_MAIN } from '../helpers/daemon.js';

const dir = () => mkdtempSync(join(tmpdir(), 'iam-cfg-'));
const base = (d: string) => ({ IAM_DATABASE_URL: `sqlite:${join(d, 'iam.db')}` });

test('defaults', (t) => {
  const d = dir();
  const c = loadConfig(base(d));
  t.is(c.port, 8080);
  t.is(c.host, '127.0.0.1');
  t.is(c.issuer, 'http://localhost:8080');
  t.is(c.logLevel, 'info');
  t.deepEqual(c.database, { kind: 'sqlite', path: join(d, 'iam.db') });
  t.is(c.provisioningMaxAttempts, 5);
  t.is(c.provisioningRetryBaseMs, 5000);
});

test('without IAM_DATABASE_URL the SQLite file is in IAM_DATA_DIR, else in var/ of the working directory', (t) => {
  const d = dir();
  t.deepEqual(loadConfig({ IAM_DATA_DIR: 'data', IAM_SECRET_KEY: 'k'.repeat(32) }, d).database, {
    kind: 'sqlite',
    path: join(d, 'data', 'iam.db'),
  });
  t.deepEqual(loadConfig({ IAM_SECRET_KEY: 'k'.repeat(32) }, d).database, {
    kind: 'sqlite',
    path: join(d, 'var', 'iam.db'),
  });
});

test('the secret key is generated once into the data directory with mode 0600, then reused', (t) => {
  const d = dir();
  const c1 = loadConfig(base(d));
  t.is(c1.secretKeySource, 'generated');
  t.true(c1.secretKey.length >= 32);
  t.is(statSync(join(d, 'secret.key')).mode & 0o777, 0o600);
  const c2 = loadConfig(base(d));
  t.is(c2.secretKeySource, 'file');
  t.is(c2.secretKey, c1.secretKey);
  t.is(readFileSync(join(d, 'secret.key'), 'utf8').trim(), c1.secretKey);
});

test("IAM_MAIL_FROM: a bare address, by default no-reply@ the issuer's host", (t) => {
  t.is(loadConfig(base(dir())).mailFrom, 'no-reply@localhost');
  t.is(loadConfig({ ...base(dir()), IAM_ISSUER: 'https://id.example.com' }).mailFrom, 'no-reply@id.example.com');
  t.is(loadConfig({ ...base(dir()), IAM_MAIL_FROM: 'accounts@example.com' }).mailFrom, 'accounts@example.com');
  t.is(loadConfig({ ...base(dir()), IAM_MAIL_FROM: 'dev@localhost' }).mailFrom, 'dev@localhost');
  // Without SMTP the default is never used on the wire (the log provider), so it is let be.
  t.is(
    loadConfig({ ...base(dir()), IAM_ISSUER: 'https://id_internal.example' }).mailFrom,
    'no-reply@id_internal.example',
  );
  t.is(
    loadConfig({
      ...base(dir()),
      IAM_ISSUER: 'https://id_internal.example',
      IAM_SMTP_URL: 'smtp://127.0.0.1:2525',
      IAM_MAIL_FROM: 'id@example.com',
    }).mailFrom,
    'id@example.com',
  );
  // IAM_MAIL_LOG: the log provider behind SMTP only when an operator opts in (docs/email.md).
  t.false(loadConfig(base(dir())).mailLog);
  t.true(loadConfig({ ...base(dir()), IAM_MAIL_LOG: '1' }).mailLog);
});

test('mysql URLs are parsed', (t) => {
  const c = loadConfig({ ...base(dir()), IAM_DATABASE_URL: 'mysql://iam:p%40ss@db.internal:3307/iam' });
  t.like(c.database, { kind: 'mysql', host: 'db.internal', port: 3307, user: 'iam', database: 'iam' });
  t.deepEqual(c.database.kind === 'mysql' && c.database.hosts, [{ host: 'db.internal', port: 3307 }]);
});

test('a mysql URL may list several hosts (a Galera cluster), tried in order', (t) => {
  const c = loadConfig({
    ...base(dir()),
    IAM_DATABASE_URL: 'mysql://iam:p%40ss@db1.internal:3307,db2.internal,[::1]:3309/iam?connectTimeout=5000',
  });
  t.like(c.database, { kind: 'mysql', host: 'db1.internal', port: 3307, user: 'iam', database: 'iam' });
  t.deepEqual(c.database.kind === 'mysql' && c.database.hosts, [
    { host: 'db1.internal', port: 3307 },
    { host: 'db2.internal', port: 3306 },
    { host: '::1', port: 3309 },
  ]);
  // TypeORM gets the first host alone, with the rest of the URL as written.
  t.is(c.database.kind === 'mysql' && c.database.url, 'mysql://iam:p%40ss@db1.internal:3307/iam?connectTimeout=5000');
});

const bad: [Record<string, string>, string, RegExp][] = [
  [{ IAM_PORT: 'eighty' }, 'IAM_PORT', /whole number/],
  [{ IAM_PORT: '70000' }, 'IAM_PORT', /between 0 and 65535/],
  [{ IAM_HOST: 'bad host!' }, 'IAM_HOST', /not a host/],
  [{ IAM_ISSUER: 'not a url' }, 'IAM_ISSUER', /not a URL/],
  [{ IAM_ISSUER: 'https://id.example/?x=1' }, 'IAM_ISSUER', /query or fragment/],
  [{ IAM_ISSUER: 'ftp://id.example' }, 'IAM_ISSUER', /http or https/],
  [{ IAM_DATABASE_URL: 'postgres://x/y' }, 'IAM_DATABASE_URL', /sqlite: or mysql:/],
  [{ IAM_DATABASE_URL: 'mysql://u:p@host:3306/' }, 'IAM_DATABASE_URL', /no database name/],
  [{ IAM_DATABASE_URL: 'mysql://u:p@h1:3306,,h3:3306/iam' }, 'IAM_DATABASE_URL', /empty host.*host 2/],
  [{ IAM_DATABASE_URL: 'mysql://u:p@h1:3306,h2:99999/iam' }, 'IAM_DATABASE_URL', /host 2 \("h2:99999"\)/],
  [{ IAM_DATABASE_URL: 'mysql://u:p@h1:3306,h1:3306/iam' }, 'IAM_DATABASE_URL', /same host:port twice/],
  [{ IAM_DATABASE_URL: 'mysql://u:p@h1/iam', IAM_GALERA_SYNC_WAIT: '16' }, 'IAM_GALERA_SYNC_WAIT', /between 0 and 15/],
  [{ IAM_SMTP_URL: 'http://mail' }, 'IAM_SMTP_URL', /smtp/],
  // SMTP on, no IAM_MAIL_FROM, and an issuer host that makes no mail domain.
  [
    { IAM_ISSUER: 'https://id_internal.example', IAM_SMTP_URL: 'smtp://127.0.0.1:2525' },
    'IAM_MAIL_FROM',
    /must be set/,
  ],
  [{ IAM_MAIL_FROM: 'not an address' }, 'IAM_MAIL_FROM', /email address/],
  [{ IAM_MAIL_FROM: 'IAM <no-reply@example.com>' }, 'IAM_MAIL_FROM', /email address/],
  [{ IAM_MAIL_FROM: 'no-reply@example.com\r\nBcc: eve@example.com' }, 'IAM_MAIL_FROM', /email address/],
  [{ IAM_SECRET_KEY: 'short' }, 'IAM_SECRET_KEY', /too short/],
  [{ IAM_LOG_LEVEL: 'loud' }, 'IAM_LOG_LEVEL', /must be one of/],
  [{ IAM_PROVISIONING_MAX_ATTEMPTS: '0' }, 'IAM_PROVISIONING_MAX_ATTEMPTS', /between 1 and 100/],
  [{ IAM_PROVISIONING_MAX_ATTEMPTS: 'many' }, 'IAM_PROVISIONING_MAX_ATTEMPTS', /whole number/],
  [{ IAM_PROVISIONING_RETRY_BASE_MS: '5' }, 'IAM_PROVISIONING_RETRY_BASE_MS', /between 10 and 300000/],
  [{ IAM_PROVISIONING_RETRY_BASE_MS: '300001' }, 'IAM_PROVISIONING_RETRY_BASE_MS', /between 10 and 300000/],
  [{ IAM_SHUTDOWN_TIMEOUT_MS: '-1' }, 'IAM_SHUTDOWN_TIMEOUT_MS', /whole number/],
];
for (const [env, variable, reason] of bad) {
  test(`invalid ${variable}=${Object.values(env)[0]} is refused naming the variable`, (t) => {
    const e = t.throws(() => loadConfig({ ...base(dir()), ...env }), { instanceOf: ConfigError });
    t.is(e.variable, variable);
    t.true(e.message.startsWith(`${variable}: `));
    t.regex(e.message, reason);
    t.false(e.message.includes('\n'));
  });
}

test('the daemon stops on a bad value with one clear line and exit code 78', (t) => {
  const d = dir();
  const r = spawnSync(process.execPath, [DAEMON_MAIN], {
    env: { PATH: process.env.PATH, ...base(d), IAM_PORT: 'http' },
    encoding: 'utf8',
    timeout: 20_000,
  });
  t.is(r.status, 78);
  const lines = r.stderr.trim().split('\n');
  t.is(lines.length, 1);
  t.regex(lines[0], /^iam: configuration error: IAM_PORT: must be a whole number/);
});

test('a process with another secret key than the database was set up with stops with a clear line', async (t) => {
  const { createTestDatabase } = await import('../helpers/db.js');
  const { openServices } = await import('../helpers/seed.js');
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const { ds } = await openServices(db.url, db.dir); // binds the test key
  await ds.destroy();
  const r = spawnSync(process.execPath, [DAEMON_MAIN], {
    env: {
      PATH: process.env.PATH,
      IAM_DATABASE_URL: db.url,
      IAM_DATA_DIR: db.dir,
      IAM_PORT: '0',
      IAM_SECRET_KEY: 'a-different-secret-key-0123456789abcdef',
    },
    encoding: 'utf8',
    timeout: 30_000,
  });
  t.is(r.status, 78);
  t.regex(r.stderr, /^iam: configuration error: IAM_SECRET_KEY: does not match the key this database was set up with/m);
});

test('provisioning backoff doubles per failure from the base and stops at 5 minutes', async (t) => {
  const { provisioningBackoffMs, PROVISIONING_RETRY_MAX_MS } =
    await import('../../shared/services/provisioning/index.js');
  t.deepEqual(
    [1, 2, 3, 4].map((n) => provisioningBackoffMs(n, 5000)),
    [5000, 10_000, 20_000, 40_000],
  );
  t.is(provisioningBackoffMs(20, 5000), PROVISIONING_RETRY_MAX_MS);
  t.is(provisioningBackoffMs(100, 300_000), 300_000);
});

test('the federation poller settings: defaults, bounds, and the poller built from them', (t) => {
  const d = dir();
  const c = loadConfig(base(d));
  t.is(c.federationMetadataDeadlineSeconds, 120);
  t.is(c.federationPollConcurrency, 4);
  t.is(c.federationMaxAutomaticSources, 20);
  const set = loadConfig({
    ...base(d),
    IAM_FEDERATION_METADATA_MAX_BYTES: '4096',
    IAM_FEDERATION_METADATA_DEADLINE_SECONDS: '30',
    IAM_FEDERATION_POLL_CONCURRENCY: '8',
    IAM_FEDERATION_MAX_AUTOMATIC_SOURCES: '0',
  });
  const o = pollerOptionsFromConfig(set, 'test');
  t.is(o.maxBytes, 4096);
  t.is(o.totalTimeoutMs, 30_000);
  t.is(o.concurrency, 8);
  t.is(set.federationMaxAutomaticSources, 0);
  for (const [name, value] of [
    ['IAM_FEDERATION_METADATA_DEADLINE_SECONDS', '4'],
    ['IAM_FEDERATION_METADATA_DEADLINE_SECONDS', '3601'],
    ['IAM_FEDERATION_POLL_CONCURRENCY', '0'],
    ['IAM_FEDERATION_POLL_CONCURRENCY', '33'],
    ['IAM_FEDERATION_MAX_AUTOMATIC_SOURCES', '1001'],
  ])
    t.throws(() => loadConfig({ ...base(d), [name]: value }), { instanceOf: ConfigError, message: new RegExp(name) });
});
