/**
 * The layering rules of docs/architecture.md as a check over source text, so that a test can
 * run it on the tree and, to show that it bites, on a few made-up files.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { checkFileSize } from './architecture-file-size.js';

import { checkOutbound } from './architecture-outbound.js';
import { checkMiddlewarePaths } from './architecture-middleware-paths.js';
import { checkServiceConstruction } from './architecture-container.js';

export interface Violation {
  file: string;
  rule: string;
  detail: string;
}

/** Where SQL text may appear: the data layer and the migrations (tests are not checked). */
const SQL_HOMES = ['shared/db/', 'shared/repositories/', 'migrations/'];
/** The data layer itself, which may use TypeORM and the SQL helpers. */
const DATA_LAYER = ['shared/db/', 'shared/repositories/'];
/** What code above the data layer may import from shared/db/. */
const DB_PUBLIC = new Set(['shared/db/index.ts', 'shared/db/data-source.ts']);
/** shared/db/entities.ts declares row types; above the data layer only its types may be used. */
const DB_TYPES_ONLY = new Set(['shared/db/entities.ts']);

/** Statements, not prose: upper-case keywords as the code writes them. */
const SQL = [
  /\bSELECT\b[\s\S]{0,400}?\bFROM\s+[a-z_]+/,
  /\bSELECT\s+(1|GET_LOCK|RELEASE_LOCK)\b/,
  /\bINSERT\s+INTO\s+[a-z_]+/,
  /\bUPDATE\s+[a-z_]+\s+SET\b/,
  /\bDELETE\s+FROM\s+[a-z_]+/,
  /\b(CREATE|ALTER|DROP)\s+(TABLE|INDEX|TRIGGER)\b/,
  /\b(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|PRAGMA)\b\s*['"`;]/,
];

const under = (file: string, dirs: string[]) => dirs.some((d) => file.startsWith(d));

/** Comments removed (roughly: enough that a comment quoting SQL is not taken for SQL). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

interface Import {
  spec: string;
  typeOnly: boolean;
}

function importsOf(text: string): Import[] {
  const out: Import[] = [];
  const re = /^\s*(import|export)\s+(type\s+)?([^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const clause = m[3] ?? '';
    // `import { type A, type B } from` is type-only too.
    const names = /\{([^}]*)\}/.exec(clause)?.[1];
    const allTypes =
      !!names && names.split(',').every((n) => !n.trim() || /^type\s/.test(n.trim())) && !/^\s*\w+\s*,/.test(clause);
    out.push({ spec: m[4], typeOnly: !!m[2] || allTypes });
  }
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push({ spec: m[1], typeOnly: false });
  return out;
}

/** The repository-relative path an import names, for relative imports of .js files. */
function resolve(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  return posix.normalize(posix.join(posix.dirname(from), spec)).replace(/\.js$/, '.ts');
}

/** Checks every file (repository-relative path → text). */
export function checkArchitecture(files: Map<string, string>): Violation[] {
  const v: Violation[] = [];
  const graph = new Map<string, string[]>();
  for (const [file, text] of files) {
    const src = code(text);
    v.push(...checkMiddlewarePaths(file, src));
    if (!under(file, SQL_HOMES)) {
      for (const re of SQL) {
        const m = re.exec(src);
        if (m) {
          v.push({ file, rule: 'sql-outside-data-layer', detail: m[0].replace(/\s+/g, ' ').slice(0, 80) });
          break;
        }
      }
    }
    const edges: string[] = [];
    for (const imp of importsOf(text)) {
      const target = resolve(file, imp.spec);
      if (!under(file, [...DATA_LAYER, 'migrations/'])) {
        if (imp.spec === 'typeorm' && !imp.typeOnly) {
          v.push({ file, rule: 'typeorm-outside-data-layer', detail: "imports 'typeorm'" });
        }
        if (imp.spec === 'typeorm' && imp.typeOnly && !file.startsWith('test/')) {
          v.push({
            file,
            rule: 'typeorm-outside-data-layer',
            detail: "imports types from 'typeorm' (use shared/db/index.ts)",
          });
        }
        if (
          target?.startsWith('shared/db/') &&
          !DB_PUBLIC.has(target) &&
          !(DB_TYPES_ONLY.has(target) && imp.typeOnly)
        ) {
          v.push({ file, rule: 'data-layer-internals', detail: `imports ${target}` });
        }
      }
      if ((file.startsWith('daemon/') || file.startsWith('cli/')) && target?.startsWith('shared/repositories/')) {
        v.push({ file, rule: 'repository-from-daemon-or-cli', detail: `imports ${target} (call a service)` });
      }
      if (target) edges.push(target);
    }
    graph.set(file, edges);
  }
  v.push(...checkOutbound(files));
  v.push(...checkServiceConstruction(files));
  for (const cycle of cycles(graph)) {
    v.push({ file: cycle[0], rule: 'import-cycle', detail: cycle.join(' -> ') });
  }
  v.push(...checkFileSize(files));
  return v;
}

/** Each import cycle once (Tarjan's strongly connected components, then one path through each). */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (n: string) => {
    idx.set(n, index);
    low.set(n, index++);
    stack.push(n);
    on.add(n);
    for (const m of graph.get(n) ?? []) {
      if (!graph.has(m)) continue;
      if (!idx.has(m)) {
        visit(m);
        low.set(n, Math.min(low.get(n)!, low.get(m)!));
      } else if (on.has(m)) low.set(n, Math.min(low.get(n)!, idx.get(m)!));
    }
    if (low.get(n) === idx.get(n)) {
      const comp: string[] = [];
      let m: string;
      do {
        m = stack.pop()!;
        on.delete(m);
        comp.push(m);
      } while (m !== n);
      if (comp.length > 1) out.push([...comp.sort(), comp[0]]);
    }
  };
  for (const n of graph.keys()) if (!idx.has(n)) visit(n);
  return out;
}

/** The project's TypeScript sources under `dirs`, keyed by repository-relative path. */
export function readSources(root: string, dirs: string[]): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) {
        files.set(relative(root, p).split('\\').join('/'), readFileSync(p, 'utf8'));
      }
    }
  };
  for (const d of dirs) walk(join(root, d));
  return files;
}

/** The repository root, from a compiled file under dist/. */
export function projectRoot(compiledFile: string): string {
  let d = dirname(compiledFile);
  while (!/[\\/]dist$/.test(d)) d = dirname(d);
  return dirname(d);
}
