/**
 * What a newcomer meets in the first hour with `iam` (docs/cli.md): a typo suggests the nearest
 * command; shell completion is a command; --json times are ISO 8601; a validation message is
 * printed once; a local command pointed at a database that does not exist refuses instead of
 * creating one, and `db migrate --create` creates it. The real executable, without a terminal
 * (stdin is not a TTY), as in CI or a script.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { z } from 'zod';
import { isoTimes, keepsEpochTimes } from '../../cli/json-times.js';
import { email } from '../../shared/schemas/common.js';
import { issuesOf } from '../../shared/schemas/validate.js';
import { iam } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';

/** oclif wraps long error lines at 80 columns (with a ` ›` margin): compare the words. */
const words = (s: string) => s.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' ');
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function scratchDir(t: { teardown(fn: () => void): void }, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('a mistyped command suggests the nearest one in space syntax, once, and exits 2 without prompting', async (t) => {
  const db = { url: 'sqlite:/nonexistent/never-opened.db', dir: '/nonexistent' };
  const r = await iam(db, ['tenant', 'list']);
  t.is(r.code, 2, r.stderr);
  t.is(r.stdout, '');
  const said = words(r.stderr);
  t.true(said.includes('`iam tenant list` is not an iam command. Did you mean `iam tenants list`?'), said);
  t.is(said.split('Did you mean').length, 2, 'the suggestion once');
  t.false(said.includes('tenant:list'), 'no colon syntax');
  t.false(said.includes('(Y/n)'), 'no prompt without a terminal');
});

test('`iam autocomplete bash` prints the setup, writing only its cache under the oclif cache dir', async (t) => {
  const home = scratchDir(t, 'iam-home-');
  const cache = join(home, 'cache');
  const db = { url: 'sqlite:/nonexistent/never-opened.db', dir: '/nonexistent' };
  const r = await iam(db, ['autocomplete', 'bash'], { HOME: home, XDG_CACHE_HOME: cache });
  t.is(r.code, 0, r.stderr);
  t.true(r.stdout.includes('iam autocomplete script bash'), r.stdout);
  t.deepEqual(readdirSync(home), ['cache'], 'nothing written outside the cache dir (no shell profile edited)');
  t.true(existsSync(join(cache, 'iam', 'autocomplete', 'functions', 'bash', 'iam.bash')));
});

test('a validation message is printed once, on stderr; --json times are ISO 8601', async (t) => {
  const db = await testDatabase(t);
  const { ds, provisioning } = await openServices(db.url, db.dir);
  const tenant = await activeTenant(provisioning, { name: 'First hour' }, { type: 'system', id: 'test' });
  await ds.destroy();
  const base = ['users', 'create', '--tenant', tenant.id, '--name', 'Ann'];

  const bad = await iam(db, [...base, '--email', 'not-an-address']);
  t.is(bad.code, 1);
  t.is(bad.stdout, '');
  t.is(bad.stderr, 'Error: invalid --email "not-an-address": must be an email address\n');

  const badJson = await iam(db, [...base, '--email', 'not-an-address', '--json']);
  t.is(badJson.code, 1);
  t.is(badJson.stderr, '');
  t.deepEqual(JSON.parse(badJson.stdout), {
    error: 'invalid_request',
    message: 'invalid --email "not-an-address": must be an email address',
    details: [{ field: 'email', message: 'must be an email address' }],
  });

  const before = Date.now();
  const ok = await iam(db, [...base, '--email', 'ann@example.com', '--json']);
  t.is(ok.code, 0, ok.stderr);
  const user = JSON.parse(ok.stdout) as { created_at: string; updated_at: string };
  t.regex(user.created_at, ISO);
  t.regex(user.updated_at, ISO);
  t.true(Date.parse(user.created_at) >= before - 1000 && Date.parse(user.created_at) <= Date.now());
});

test('the --json time rule: *_at, *At, expires and purge_after; not durations, user data or spec-fixed commands', (t) => {
  const ms = Date.UTC(2026, 10, 22, 3, 0, 0, 123);
  const iso = '2026-11-22T03:00:00.123Z';
  t.deepEqual(
    isoTimes({
      created_at: ms,
      nextRefreshAt: ms,
      expires: ms,
      purge_after: ms,
      retire_at: null,
      expires_in: 3600,
      duration_ms: 5,
      steps: [{ started_at: ms }],
      claims: { hired_at: ms },
    }),
    {
      created_at: iso,
      nextRefreshAt: iso,
      expires: iso,
      purge_after: iso,
      retire_at: null,
      expires_in: 3600,
      duration_ms: 5,
      steps: [{ started_at: iso }],
      claims: { hired_at: ms },
    },
  );
  t.true(keepsEpochTimes('provisioning:show'));
  t.true(keepsEpochTimes('tenants:suspend'));
  t.false(keepsEpochTimes('tenants:list'));
  // The email schema's two checks fail alike; the detail is given once (the API's answer too).
  const r = z.object({ email }).safeParse({ email: 'x' });
  t.deepEqual(issuesOf(r.error!), [{ field: 'email', message: 'must be an email address' }]);
});

test('a local command on a missing SQLite database refuses, names the path and creates nothing; db migrate --create creates it', async (t) => {
  const dir = scratchDir(t, 'iam-elsewhere-');
  const path = join(dir, 'var', 'iam.db');
  const db = { url: `sqlite:${path}`, dir: '' };
  // No IAM_SECRET_KEY and the default data dir: a run that went on would write var/secret.key.
  const env = { IAM_SECRET_KEY: '', IAM_DATA_DIR: '' };

  const r = await iam(db, ['users', 'list', '--tenant', 'ten_x'], env);
  t.is(r.code, 1);
  t.is(r.stdout, '');
  t.is(r.stderr.split('\n').filter(Boolean).length, 1, `one line: ${r.stderr}`);
  t.true(r.stderr.startsWith(`Error: no database at ${path} (named by IAM_DATABASE_URL).`), r.stderr);
  t.true(r.stderr.includes('IAM_DATABASE_URL') && r.stderr.includes('`iam db migrate --create`'), r.stderr);

  const migrate = await iam(db, ['db', 'migrate', '--json'], env);
  t.is(migrate.code, 1);
  t.is(JSON.parse(migrate.stdout).error, 'database_not_found');
  t.deepEqual(readdirSync(dir), [], 'no database, no directory, no secret key');

  const created = await iam(db, ['db', 'migrate', '--create', '--json'], env);
  t.is(created.code, 0, created.stderr);
  t.true(JSON.parse(created.stdout).current);
  t.true(existsSync(path));
  t.true(existsSync(join(dir, 'var', 'secret.key')));
});
