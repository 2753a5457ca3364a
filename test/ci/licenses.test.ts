/**
 * `npm run licenses` (.ci/licenses.js): fails on a copyleft or unknown licence among the runtime
 * dependencies of a lockfile, passes on permissive ones and ignores dev dependencies. Run on
 * made-up lockfiles, and on the project's own.
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectRoot } from '../helpers/architecture.js';

const root = projectRoot(fileURLToPath(import.meta.url));
const script = join(root, '.ci', 'licenses.js');

function check(packages: Record<string, { version?: string; license?: string; dev?: boolean }>) {
  const dir = mkdtempSync(join(tmpdir(), 'iam-lic-'));
  try {
    const file = join(dir, 'package-lock.json');
    writeFileSync(file, JSON.stringify({ lockfileVersion: 3, packages: { '': { name: 'x' }, ...packages } }));
    const r = spawnSync(process.execPath, [script, file], { encoding: 'utf8' });
    return { status: r.status, out: r.stdout + r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('an AGPL runtime dependency fails the check, and is named', (t) => {
  const r = check({
    'node_modules/koa': { version: '3.0.0', license: 'MIT' },
    'node_modules/ua-parser-js': { version: '2.0.10', license: 'AGPL-3.0-or-later' },
  });
  t.is(r.status, 1);
  t.regex(r.out, /ua-parser-js@2\.0\.10 \(AGPL-3\.0-or-later\)/);
  t.notRegex(r.out, /koa@/);
});

test('GPL, LGPL, SSPL, a missing licence and an AND with a copyleft side fail', (t) => {
  for (const license of [
    'GPL-3.0-only',
    'LGPL-2.1-or-later',
    'SSPL-1.0',
    undefined,
    'MIT AND GPL-2.0-only',
    'UNLICENSED',
  ]) {
    t.is(check({ 'node_modules/p': { version: '1.0.0', license } }).status, 1, String(license));
  }
});

test('permissive licences and OR-expressions with a permissive side pass; dev dependencies are not checked', (t) => {
  const r = check({
    'node_modules/a': { version: '1.0.0', license: 'MIT' },
    'node_modules/b': { version: '1.0.0', license: 'Apache-2.0' },
    'node_modules/c': { version: '1.0.0', license: '(BSD-2-Clause OR MIT OR Apache-2.0)' },
    'node_modules/d': { version: '1.0.0', license: '(MIT OR GPL-3.0-only)' },
    'node_modules/e': { version: '1.0.0', license: 'ISC' },
    'node_modules/tool': { version: '1.0.0', license: 'GPL-3.0-only', dev: true },
  });
  t.is(r.status, 0, r.out);
});

test("the project's own runtime dependencies pass", (t) => {
  const out = execFileSync(process.execPath, [script], { cwd: root, encoding: 'utf8' });
  t.regex(out, /all \d+ runtime packages are under permissive licences/);
});
