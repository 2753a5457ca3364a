#!/usr/bin/env node
// Licence check of the runtime dependencies (`npm run licenses`; .ci/run runs it).
//
// Reads package-lock.json (or the lockfile named as the first argument) and checks every
// package that is installed in production (not `dev`) against an allow-list of permissive
// licences. An SPDX expression passes when, for OR, one side passes and, for AND, both do.
// A copyleft licence (GPL, AGPL, LGPL, SSPL, …), a proprietary one or a missing licence
// fails: the service is an Apache-2.0 network service that companies must be able to ship.
// Exit code 0 when every runtime package passes, 1 otherwise (the offenders are listed).
import { readFileSync } from 'node:fs';

/** Permissive licences (SPDX ids). */
const ALLOWED = new Set([
  'MIT',
  'MIT-0',
  'ISC',
  'Apache-2.0',
  'BSD-2-Clause',
  'BSD-3-Clause',
  '0BSD',
  'BlueOak-1.0.0',
  'CC0-1.0',
  'Unlicense',
  'Zlib',
  'Python-2.0',
  'WTFPL',
]);

/** Whether an SPDX expression is satisfied by the allow-list. */
function permitted(expression) {
  const tokens = String(expression).match(/\(|\)|[^\s()]+/g) ?? [];
  let i = 0;
  const primary = () => {
    const t = tokens[i++];
    if (t === '(') {
      const v = or();
      i++; // ')'
      return v;
    }
    return ALLOWED.has(String(t).replace(/\+$/, ''));
  };
  const and = () => {
    let v = primary();
    while (tokens[i] === 'AND') {
      i++;
      v = primary() && v;
    }
    return v;
  };
  const or = () => {
    let v = and();
    while (tokens[i] === 'OR') {
      i++;
      v = and() || v;
    }
    return v;
  };
  return tokens.length > 0 && or() && i === tokens.length;
}

/** The runtime packages of a lockfile whose licence is not permitted, as `name@version (licence)`. */
function offenders(lock) {
  const out = [];
  for (const [path, pkg] of Object.entries(lock.packages ?? {})) {
    if (path === '' || pkg.dev || pkg.link) continue;
    const licence = pkg.license;
    if (typeof licence !== 'string' || !permitted(licence)) {
      out.push(`${path.replace(/.*node_modules\//, '')}@${pkg.version ?? '?'} (${licence ?? 'no licence stated'})`);
    }
  }
  return out;
}

const file = process.argv[2] ?? 'package-lock.json';
const lock = JSON.parse(readFileSync(file, 'utf8'));
const bad = offenders(lock);
const runtime = Object.entries(lock.packages ?? {}).filter(([p, v]) => p !== '' && !v.dev && !v.link).length;
if (bad.length) {
  console.error(`licences: ${bad.length} of ${runtime} runtime packages are not under a permissive licence:`);
  for (const b of bad) console.error(`  ${b}`);
  process.exit(1);
}
console.log(`licences: all ${runtime} runtime packages are under permissive licences`);
