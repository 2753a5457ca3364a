/**
 * `iam users import` and `iam users export`, run as the real executable: JSONL and CSV,
 * dry run, rejected records reported per line, idempotent re-run, claims and upstream links,
 * the export → import round trip, and an import killed (SIGKILL) mid-way then re-run.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { iam } from '../helpers/cli.js';
import { CLI_BIN } from '../helpers/daemon.js';
import { TEST_SECRET_KEY, testDatabase } from '../helpers/db.js';
import { until } from '../helpers/poll.js';
import { openServices } from '../helpers/seed.js';
import { directoryOf, importTenant, UPSTREAM_ISSUER } from '../helpers/user-transfer.js';

const JSONL = [
  {
    email: 'Ada@Example.com',
    name: 'Ada Lovelace',
    email_verified: true,
    claims: { department: 'R&D', roles: ['admin', 'dev'], level: 3 },
  },
  { email: 'grace@example.com', name: 'Grace Hopper', upstream: { issuer: UPSTREAM_ISSUER, subject: 'kc-grace' } },
  { email: 'not-an-address', name: 'Nobody' },
  { email: 'linus@example.com', claims: { level: 'high' } },
  { email: 'ken@example.com', upstream: { issuer: 'https://elsewhere.example.test', subject: 'x' } },
  { email: 'dennis@example.com', name: 'Dennis', claims: { department: 'Unix' } },
]
  .map((r) => JSON.stringify(r))
  .join('\n')
  .concat('\n{"email": "broken"\n');

test('JSONL and CSV import, dry run, rejected lines, idempotent re-run, export → import round trip', async (t) => {
  const db = await testDatabase(t);
  const { ds, provisioning } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const a = await importTenant(ds, provisioning, 'Import A');
  const b = await importTenant(ds, provisioning, 'Import B');
  const file = join(db.dir, 'users.jsonl');
  writeFileSync(file, JSONL);

  const dry = await iam(db, ['users', 'import', '--tenant', a, '--file', file, '--dry-run', '--json']);
  t.is(dry.code, 1, dry.stderr);
  t.like(JSON.parse(dry.stdout), { dry_run: true, created: 3, updated: 0, unchanged: 0, rejected: 4 });
  t.deepEqual(await directoryOf(ds, a), [], 'a dry run writes nothing');

  const run = await iam(db, ['users', 'import', '--tenant', a, '--file', file, '--json']);
  t.is(run.code, 1);
  const summary = JSON.parse(run.stdout);
  t.like(summary, { dry_run: false, created: 3, updated: 0, unchanged: 0, rejected: 4 });
  t.deepEqual(
    summary.rejected_records.map((r: { line: number }) => r.line),
    [3, 4, 5, 7],
  );
  const lines = run.stderr.trim().split('\n');
  t.is(lines.length, 4, run.stderr);
  t.regex(lines[0], /^line 3: not-an-address: email: must be an email address$/);
  t.regex(lines[1], /^line 4: linus@example\.com: claims\.level: /);
  t.regex(lines[2], /^line 5: ken@example\.com: upstream\.issuer: .* not the issuer of an upstream identity provider/);
  t.regex(lines[3], /^line 7: not a JSON object$/);
  const imported = await directoryOf(ds, a);
  t.deepEqual(imported, [
    {
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      email_verified: true,
      claims: { department: 'R&D', roles: ['admin', 'dev'], level: 3 },
      links: [],
    },
    { email: 'dennis@example.com', name: 'Dennis', email_verified: false, claims: { department: 'Unix' }, links: [] },
    {
      email: 'grace@example.com',
      name: 'Grace Hopper',
      email_verified: false,
      claims: {},
      links: [`${UPSTREAM_ISSUER} kc-grace`],
    },
  ]);

  // Again: nothing new, nothing duplicated. A CSV then updates one field of one user.
  const again = JSON.parse((await iam(db, ['users', 'import', '--tenant', a, '--file', file, '--json'])).stdout);
  t.like(again, { created: 0, updated: 0, unchanged: 3, rejected: 4 });
  const csv = join(db.dir, 'update.csv');
  writeFileSync(
    csv,
    'email,name,claim.level,claim.roles\r\nDENNIS@example.com,Dennis Ritchie,7,"[""c""]"\r\nada@example.com,,,\r\n',
  );
  const update = await iam(db, ['users', 'import', '--tenant', a, '--file', csv]);
  t.is(update.code, 0, update.stderr);
  t.regex(update.stdout, /0 created, 1 updated, 1 unchanged, 0 rejected/);
  const dennis = (await directoryOf(ds, a)).find((u) => u.email === 'dennis@example.com');
  t.deepEqual(dennis, {
    email: 'dennis@example.com',
    name: 'Dennis Ritchie',
    email_verified: false,
    claims: { department: 'Unix', level: 7, roles: ['c'] },
    links: [],
  });

  // Export A as CSV, import it into the empty tenant B: the same users. JSONL export, the same records.
  const out = join(db.dir, 'a.csv');
  const exported = await iam(db, ['users', 'export', '--tenant', a, '--format', 'csv', '--output', out]);
  t.is(exported.code, 0, exported.stderr);
  const text = readFileSync(out, 'utf8');
  t.true(
    text.startsWith(
      'email,name,email_verified,upstream_issuer,upstream_subject,claim.department,claim.level,claim.roles\n',
    ),
  );
  t.notRegex(text, /sealed|usr_/);
  const into = await iam(db, ['users', 'import', '--tenant', b, '--file', out]);
  t.is(into.code, 0, into.stderr);
  t.deepEqual(await directoryOf(ds, b), await directoryOf(ds, a));
  const jsonl = await iam(db, ['users', 'export', '--tenant', b, '--format', 'jsonl']);
  t.is(jsonl.code, 0);
  t.deepEqual(
    jsonl.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).email)
      .sort(),
    ['ada@example.com', 'dennis@example.com', 'grace@example.com'],
  );

  const usage = await iam(db, ['users', 'import', '--tenant', a, '--file', join(db.dir, 'users.txt')]);
  t.is(usage.code, 2);
});

test('an import killed by SIGKILL and run again gives exactly the records of the file', async (t) => {
  const db = await testDatabase(t);
  const { ds, provisioning } = await openServices(db.url, db.dir);
  t.teardown(() => ds.destroy());
  const tenant = await importTenant(ds, provisioning, 'Import crash');
  const N = 2000;
  const records = Array.from({ length: N }, (_, i) => ({
    email: `user${i}@example.com`,
    name: `User ${i}`,
    email_verified: i % 2 === 0,
    claims: { department: `d${i % 7}`, level: i },
    ...(i % 3 === 0 ? { upstream: { issuer: UPSTREAM_ISSUER, subject: `sub-${i}` } } : {}),
  }));
  const file = join(db.dir, 'many.jsonl');
  writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');

  const env = {
    PATH: process.env.PATH,
    IAM_DATABASE_URL: db.url,
    IAM_SECRET_KEY: TEST_SECRET_KEY,
    IAM_DATA_DIR: db.dir,
  };
  const proc = spawn(process.execPath, [CLI_BIN, 'users', 'import', '--tenant', tenant, '--file', file], {
    env,
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => proc.on('exit', resolve));
  const count = async () =>
    Number((await ds.query<{ n: number }[]>('SELECT COUNT(*) AS n FROM users WHERE tenant_id = ?', [tenant]))[0].n);
  await until(async () => (await count()) > 0 || proc.exitCode !== null, { timeoutMs: 60_000 });
  proc.kill('SIGKILL');
  await exited;
  const partial = await count();
  t.true(partial < N, `the import was killed before it ended (${partial} of ${N})`);

  const rerun = await iam(db, ['users', 'import', '--tenant', tenant, '--file', file, '--json']);
  t.is(rerun.code, 0, rerun.stderr);
  t.like(JSON.parse(rerun.stdout), { created: N - partial, rejected: 0 });
  const expected = records
    .map((r) => ({
      email: r.email,
      name: r.name,
      email_verified: r.email_verified,
      claims: r.claims,
      links: r.upstream ? [`${UPSTREAM_ISSUER} ${r.upstream.subject}`] : [],
    }))
    .sort((x, y) => (x.email < y.email ? -1 : 1));
  t.deepEqual(await directoryOf(ds, tenant), expected);
});
