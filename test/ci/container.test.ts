/**
 * The container files (Dockerfile, .dockerignore, compose.yaml; docs/deployment.md,
 * "Container") checked without a container engine, so that they cannot rot silently: the
 * Dockerfile passes dockerfile-utils' validator (the one VS Code's Docker extension runs) and
 * has the properties the deployment needs; every COPY source exists and reaches the build
 * context; every variable the image and compose.yaml set is one shared/config reads, and the
 * configuration they make loads; compose.yaml runs the service read-only on MariaDB and Mailpit;
 * and the code the image holds imports only production dependencies (it is pruned of the rest).
 *
 * compose.yaml is parsed with the `yaml` package (a development dependency), as Compose reads it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import test from 'ava';
import { validate } from 'dockerfile-utils';
import { loadConfig, parseDatabaseUrl } from '../../shared/config.js';
import { projectRoot, readSources } from '../helpers/architecture.js';
import { TEST_SECRET_KEY } from '../helpers/db.js';

const ROOT = projectRoot(fileURLToPath(import.meta.url));
const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');
const DOCKERFILE = read('Dockerfile');

interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
  name: string | undefined;
  instructions: Instruction[];
}

/**
 * The Dockerfile's build stages and their instructions: continuation lines joined, comment
 * lines (also inside a continued instruction, as Docker drops them) left out.
 */
function stages(text: string): Stage[] {
  const out: Stage[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line)) continue;
    if (line.endsWith('\\')) {
      pending += line.slice(0, -1) + ' ';
      continue;
    }
    const whole = (pending + line).trim();
    pending = '';
    if (!whole) continue;
    const [, keyword, args] = /^(\S+)\s*(.*)$/.exec(whole)!;
    const ins = { keyword: keyword.toUpperCase(), args: args.replace(/\s+/g, ' ').trim() };
    if (ins.keyword === 'FROM') out.push({ name: / AS (\S+)$/i.exec(ins.args)?.[1], instructions: [] });
    out.at(-1)?.instructions.push(ins);
  }
  return out;
}

const all = (s: Stage, keyword: string) => s.instructions.filter((i) => i.keyword === keyword);
/** ENV KEY=value pairs (values here have no spaces or quotes). */
const envOf = (s: Stage): Record<string, string> =>
  Object.fromEntries(all(s, 'ENV').flatMap((i) => i.args.split(' ').map((kv) => kv.split(/=(.*)/s).slice(0, 2))));

/** COPY's sources (every word but the flags and the last), with its --from stage if any. */
function copies(s: Stage): { from: string | undefined; sources: string[] }[] {
  return all(s, 'COPY').map((i) => {
    const words = i.args.split(' ');
    const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
    return { from, sources: words.filter((w) => !w.startsWith('--')).slice(0, -1) };
  });
}

/** Every IAM_* name the service's configuration reads (shared/config.ts and shared/config/). */
function variablesRead(): Set<string> {
  const files = ['shared/config.ts', ...readdirSync(join(ROOT, 'shared/config')).map((f) => `shared/config/${f}`)];
  return new Set(files.flatMap((f) => read(f).match(/\bIAM_[A-Z0-9_]+\b/g) ?? []));
}

interface ComposeService {
  image?: string;
  build?: unknown;
  read_only?: boolean;
  tmpfs?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

function compose(): { services: Record<string, ComposeService>; volumes: Record<string, unknown> } {
  return parseYaml(read('compose.yaml')) as ReturnType<typeof compose>;
}

/** Compose's `${NAME:-default}` / `${NAME}` interpolation with nothing set: the defaults. */
const interpolate = (v: string) => v.replace(/\$\{([A-Z0-9_]+)(?::-([^}]*))?\}/g, (_, _n, def?: string) => def ?? '');

test('the Dockerfile passes dockerfile-utils validation with no problems (and the validator flags a broken one)', (t) => {
  t.deepEqual(
    validate(DOCKERFILE).map((d) => `line ${d.range.start.line + 1}: ${JSON.stringify(d.message)}`),
    [],
  );
  // The validator is alive: a duration without its unit and an unknown instruction are problems.
  t.true(validate('FROM node:20\nHEALTHCHECK --interval=30 CMD true\nFETCH x\n').length >= 2);
});

test('the Dockerfile: multi-stage, a non-root final user, HEALTHCHECK on /readyz, the data directory a VOLUME, listening on all interfaces', (t) => {
  const s = stages(DOCKERFILE);
  t.true(s.length >= 2, 'a build stage and a runtime stage');
  const final = s.at(-1)!;
  const user = all(final, 'USER').at(-1)?.args;
  t.truthy(user, 'the final stage sets USER');
  t.false(['root', '0'].includes(user!.split(':')[0]), `USER ${user}`);

  const health = all(final, 'HEALTHCHECK');
  t.is(health.length, 1);
  t.regex(health[0].args, /\bCMD\b/);
  t.regex(health[0].args, /\/readyz\b/);

  const env = envOf(final);
  t.is(env.IAM_HOST, '0.0.0.0');
  const dataDir = env.IAM_DATA_DIR;
  t.truthy(dataDir);
  const volumes = all(final, 'VOLUME').flatMap((i) => JSON.parse(i.args) as string[]);
  t.deepEqual(volumes, [dataDir]);
  // The SQLite file is in the volume too: with a read-only root that is the one writable place.
  const db = parseDatabaseUrl(env.IAM_DATABASE_URL, '/');
  t.is(db.kind, 'sqlite');
  if (db.kind === 'sqlite') t.true(db.path.startsWith(`${dataDir}/`), db.path);
  t.deepEqual(
    all(final, 'EXPOSE').map((i) => i.args),
    [env.IAM_PORT],
  );
  // The runtime stage has no compiler: only the build stage installs one.
  t.false(final.instructions.some((i) => /\bg\+\+|\bnpm (ci|install)\b/.test(i.args)));
});

test('every COPY source exists and passes .dockerignore; every variable the image and compose.yaml set is one shared/config reads, and the configuration loads', (t) => {
  const s = stages(DOCKERFILE);
  const byName = new Map(s.map((st) => [st.name, st]));
  const allowed = new Set(
    read('.dockerignore')
      .split('\n')
      .filter((l) => l.startsWith('!'))
      .map((l) => l.slice(1).replace(/\/$/, '')),
  );
  t.true(read('.dockerignore').split('\n').includes('*'), '.dockerignore is an allowlist');
  for (const st of s) {
    for (const c of copies(st)) {
      for (const src of c.sources) {
        if (c.from === undefined) {
          // From the build context: it must exist here and not be ignored.
          t.true(existsSync(join(ROOT, src)), `COPY ${src}: missing`);
          t.true(allowed.has(src.replace(/\/$/, '')), `COPY ${src}: not let through .dockerignore`);
        } else {
          // From another stage: under its WORKDIR, what `npm ci` and `npm run build` made there,
          // which this checkout has too (the tests run from its build).
          const from = byName.get(c.from);
          t.truthy(from, `COPY --from=${c.from}: no such stage`);
          const workdir = all(from!, 'WORKDIR').at(-1)!.args;
          t.true(src.startsWith(`${workdir}/`), `COPY --from=${c.from} ${src}: outside ${workdir}`);
          t.true(existsSync(join(ROOT, src.slice(workdir.length + 1))), `COPY --from=${c.from} ${src}: not built`);
        }
      }
    }
  }

  const read_ = variablesRead();
  const imageEnv = envOf(s.at(-1)!);
  const iam = compose().services.iam;
  const composeEnv = Object.fromEntries(Object.entries(iam.environment ?? {}).map(([k, v]) => [k, interpolate(v)]));
  for (const name of [...Object.keys(imageEnv), ...Object.keys(composeEnv)]) {
    t.true(read_.has(name), `${name} is set but shared/config does not read it`);
  }
  // What the service would start with: the image's ENV, then compose's. A secret key is given
  // so that loading writes no secret.key here.
  for (const env of [imageEnv, { ...imageEnv, ...composeEnv }]) {
    const config = loadConfig({ ...env, IAM_SECRET_KEY: env.IAM_SECRET_KEY || TEST_SECRET_KEY }, '/');
    t.is(config.host, '0.0.0.0');
    t.is(config.dataDir, imageEnv.IAM_DATA_DIR);
  }
});

test('compose.yaml: the service read-only with /tmp a tmpfs and the data volume, on MariaDB and Mailpit, its database and SMTP URLs pointing at them', (t) => {
  const c = compose();
  const iam = c.services.iam;
  t.truthy(iam.build, 'built from this Dockerfile');
  t.is(iam.read_only, true);
  t.deepEqual(iam.tmpfs, ['/tmp']);
  const dataDir = envOf(stages(DOCKERFILE).at(-1)!).IAM_DATA_DIR;
  const dataVolume = iam.volumes?.find((v) => v.endsWith(`:${dataDir}`))?.split(':')[0];
  t.truthy(dataVolume, `a volume at ${dataDir}`);
  t.true(dataVolume! in c.volumes, 'a named volume');

  const [dbName, mariadb] = Object.entries(c.services).find(([, s]) => s.image?.startsWith('mariadb:'))!;
  t.truthy(mariadb, 'a MariaDB service (official image)');
  t.truthy(mariadb.healthcheck?.test.length);
  t.is(iam.depends_on?.[dbName]?.condition, 'service_healthy');
  const [mailName] = Object.entries(c.services).find(([, s]) => s.image?.startsWith('axllent/mailpit:'))!;
  t.truthy(mailName, 'a Mailpit service');
  t.truthy(iam.depends_on?.[mailName]);

  const env = iam.environment!;
  const db = parseDatabaseUrl(interpolate(env.IAM_DATABASE_URL));
  t.is(db.kind, 'mysql');
  const m = mariadb.environment!;
  if (db.kind === 'mysql') {
    t.deepEqual(db.hosts, [{ host: dbName, port: 3306 }]);
    t.is(db.database, m.MARIADB_DATABASE);
    t.is(db.user, m.MARIADB_USER);
    // The same password expression on both sides, so that one .env value sets both.
    t.is(decodeURIComponent(new URL(db.url).password), interpolate(m.MARIADB_PASSWORD));
    t.true(env.IAM_DATABASE_URL.includes(m.MARIADB_PASSWORD), 'the same ${…} password on both services');
  }
  const smtp = new URL(interpolate(env.IAM_SMTP_URL));
  t.is(smtp.protocol, 'smtp:');
  t.is(smtp.hostname, mailName);
  t.is(smtp.port, '1025'); // Mailpit's SMTP port
});

test('the code the image holds imports only production dependencies (the image prunes the development ones)', (t) => {
  const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
  const copied = new Set(
    copies(stages(DOCKERFILE).at(-1)!)
      .flatMap((c) => c.sources)
      .map((src) => /\/(?:dist\/)?(daemon|cli|shared|migrations)$/.exec(src)?.[1])
      .filter((d) => d !== undefined),
  );
  t.deepEqual([...copied].sort(), ['cli', 'daemon', 'migrations', 'shared']);
  // Value imports (`import type` is erased by the compiler), dynamic imports, require() and
  // createRequire(import.meta.url)('…').
  const statement = /^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?'([^'.][^']*)'/.source;
  const call = /(?:\bimport|\brequire|\))\('([^'.][^']*)'\)/.source;
  const spec = new RegExp(`${statement}|${call}`, 'gm');
  const outside: string[] = [];
  const seen = new Set<string>();
  for (const [file, text] of readSources(ROOT, [...copied])) {
    for (const m of text.matchAll(spec)) {
      const name = (m[1] ?? m[2]).match(/^(@[^/]+\/[^/]+|[^/]+)/)![1];
      seen.add(name);
      if (!name.startsWith('node:') && !(name in pkg.dependencies)) outside.push(`${file}: ${name}`);
    }
  }
  t.deepEqual(outside, []);
  // The scan sees what it should: static, type-free and createRequire'd imports.
  for (const name of ['koa', 'typeorm', 'zod', 'mysql2', '@oclif/core']) t.true(seen.has(name), name);
});
