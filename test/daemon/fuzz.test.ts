/**
 * A fuzzer over /openapi.json, so a route added later is fuzzed without touching this file. As
 * a platform admin (the widest reach of the bearer API), it sends every operation:
 * - for every operation with a JSON body: objects whose keys are the names JavaScript objects
 *   inherit (`__proto__`, `constructor`, `prototype`, `toString`, `hasOwnProperty`,
 *   `valueOf`), at top level and in every nested object and free-form record the schema has;
 *   bodies shaped like the schema with those names as every string, enum and `type` value
 *   (`authorization_details[].type` among them) and as every record key; and bodies nested
 *   5,000 and 100,000 levels deep, whole and inside the first field;
 * - for every operation: those names as each path parameter and as every query parameter.
 * Each answer must be below 500, and every error must be the error object (docs/errors.md):
 * bad input is a 4xx, never a crash. The walk must cover enough operations to prove something.
 *
 * The daemon gets a 1 MiB body limit, so that the 100,000-level bodies (200 KB and more) reach
 * the parser instead of the 413 of the default 100 KiB.
 */
import test from 'ava';
import { createTestDatabase, type TestDb } from '../helpers/db.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { registerUpstream } from '../helpers/refresh-links.js';
import { activeTenant, clientCredentialsToken, openServices, seed, type Seeded } from '../helpers/seed.js';

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
}
interface Operation {
  parameters?: Parameter[];
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
}
type Doc = { paths: Record<string, Record<string, Operation>> };

const NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'] as const;
/**
 * The names used as keys in the bodies shaped like a schema. The parser refuses any body with a
 * `__proto__` member (400, docs/errors.md), so a shaped body carrying one would never reach the
 * route: those get bodies of their own (`poisoned keys`, `__proto__ deep inside`), and the
 * shaped ones use the other names as keys (and `__proto__` as values) to get past validation.
 */
const KEYS = NAMES.filter((n) => n !== '__proto__');

let db: TestDb;
let d: Daemon;
let s: Seeded;
let token: string;
/** The tenant the fuzzed requests act on, apart from the seed tenant whose client authenticates. */
let target: string;
/** Its upstream identity provider: the external token refresh bridge, and an `idpId` that exists. */
let idp: string;

test.before(async () => {
  db = await createTestDatabase();
  s = await seed(db.url, db.dir);
  const services = await openServices(db.url, db.dir);
  try {
    target = (await activeTenant(services.provisioning, { name: 'Fuzz target' }, { type: 'system', id: 'fuzz' })).id;
    idp = await registerUpstream(services.ds, target, {
      issuer: 'https://upstream.example.com',
      clientId: 'fuzz',
      clientSecret: 'fuzz-secret',
    });
  } finally {
    await services.ds.destroy();
  }
  d = await startDaemon(db.url, db.dir, { IAM_BODY_LIMIT_BYTES: String(1024 * 1024) });
  token = await clientCredentialsToken(d.url, s.platform.clientId, s.platform.secret);
});
test.after.always(async () => {
  await d?.stop();
  await db?.drop();
});

/** An own, enumerable property, even `__proto__` (an assignment would set the prototype instead). */
function put(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Every inherited name as a key (`names`), each with a small object or string under it. */
function poisoned(names: readonly string[] = NAMES): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const n of names) {
    const inner: Record<string, unknown> = {};
    put(inner, 'polluted', true);
    put(inner, n, 'x');
    put(o, n, n === '__proto__' || n === 'constructor' ? inner : n);
  }
  return o;
}

/**
 * A string a field of `schema` may well accept: its const or first enum value, an https URL,
 * an address, or `x` repeated to its least length. `key` names the field (ids, timestamps).
 */
function plausibleString(schema: Schema, key: string): string {
  const fixed = schema.const ?? (schema.enum as unknown[] | undefined)?.[0];
  if (typeof fixed === 'string') return fixed;
  if (schema.format === 'uri' || /url|uri|issuer|audience/i.test(key)) return 'https://fuzz.example.com/x';
  if (schema.format === 'email' || /email/i.test(key)) return 'fuzz@example.com';
  return 'x'.repeat(Math.max(1, Number(schema.minLength ?? 1)));
}

/**
 * A value shaped like `schema`. In mode `everywhere`, `name` is every string (enum and const
 * values included); in modes `keys` and `types`, strings are plausible and `name` is only every
 * `type` member (`authorization_details[].type`, a reference's type) and every free-form value.
 * In `everywhere` and `keys`, the inherited names are the keys of every free-form record and are
 * added to every object; in `types`, records get one ordinary key, so that a lookup of `name`
 * in one (an agent grant's ceiling) finds no member of its own. Bounded in depth: the schemas
 * are not recursive, but a generator must not rely on it.
 */
function shaped(
  schema: Schema | undefined,
  name: string,
  mode: 'everywhere' | 'keys' | 'types',
  key = '',
  depth = 0,
): unknown {
  if (!schema || depth > 12) return name;
  const alts = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alts?.length) return shaped(alts.find((a) => a.type !== 'null') ?? alts[0], name, mode, key, depth + 1);
  const types = ([] as unknown[]).concat(schema.type ?? []).filter((t) => t !== 'null');
  const type = types[0] ?? (schema.properties ? 'object' : schema.items ? 'array' : undefined);
  if (key === 'type' || (mode === 'everywhere' && (schema.enum !== undefined || schema.const !== undefined)))
    return name;
  switch (type) {
    case 'object': {
      const o: Record<string, unknown> = {};
      for (const [k, v] of Object.entries((schema.properties ?? {}) as Record<string, Schema>))
        put(o, k, shaped(v, name, mode, k, depth + 1));
      const extra = schema.additionalProperties;
      // A free-form record, or an object that takes more members: the names as keys.
      if (mode === 'types') {
        if (extra !== false && (extra !== undefined || schema.propertyNames !== undefined || !schema.properties))
          put(o, 'x', shaped(typeof extra === 'object' ? (extra as Schema) : undefined, name, mode, 'x', depth + 1));
      } else if (extra !== false && (extra !== undefined || schema.propertyNames !== undefined || !schema.properties))
        for (const n of KEYS)
          put(o, n, shaped(typeof extra === 'object' ? (extra as Schema) : undefined, name, mode, n, depth + 1));
      else for (const [k, v] of Object.entries(poisoned(KEYS))) if (!(k in o)) put(o, k, v);
      return o;
    }
    case 'array':
      return [shaped(schema.items as Schema | undefined, name, mode, key, depth + 1)];
    case 'integer':
    case 'number':
      // A time a few days ahead where one is expected (expiries must lie in the future).
      if (/_at$|At$/.test(key)) return Date.now() + 3 * 86_400_000;
      return Math.max(1, Number(schema.minimum ?? 1));
    case 'boolean':
      return true;
    case 'string':
      return mode === 'everywhere' ? name : plausibleString(schema, key);
    default:
      // `{}` (any value): an object with the names as keys.
      return mode === 'everywhere' ? poisoned(KEYS) : name;
  }
}

const nestedArrays = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
const nestedObjects = (levels: number) => `${'{"a":'.repeat(levels)}{}${'}'.repeat(levels)}`;

/** The bodies sent to an operation taking `schema`, as JSON text. */
function bodies(schema: Schema | undefined): [string, string][] {
  const out: [string, string][] = [['poisoned keys', JSON.stringify(poisoned())]];
  for (const n of NAMES) {
    out.push([`${n} everywhere`, JSON.stringify(shaped(schema, n, 'everywhere'))]);
    out.push([`${n} as keys and types`, JSON.stringify(shaped(schema, n, 'keys'))]);
    out.push([`${n} as types only`, JSON.stringify(shaped(schema, n, 'types'))]);
  }
  const first = Object.keys(schema?.properties ?? {})[0] ?? 'a';
  for (const levels of [5_000, 100_000]) {
    out.push([`${levels} nested arrays`, nestedArrays(levels)]);
    out.push([`${levels} nested arrays in ${first}`, `{${JSON.stringify(first)}:${nestedArrays(levels)}}`]);
  }
  out.push(['__proto__ deep inside', `{${JSON.stringify(first)}:[{"a":{"__proto__":{"polluted":true}}}]}`]);
  out.push(['5000 nested objects', nestedObjects(5_000)]);
  out.push(['__proto__ under 100000 objects', `${'{"a":'.repeat(100_000)}{"__proto__":{}}${'}'.repeat(100_000)}`]);
  out.push([`100000 nested objects in ${first}`, `{${JSON.stringify(first)}:${nestedObjects(100_000)}}`]);
  return out;
}

/** A plausible path parameter, so a request gets past routing to the handler; `tenant` params name the target. */
function plausible(path: string, name: string): string {
  if (/tenant/i.test(name) || (name === 'id' && /\/tenants\/\{id\}/.test(path))) return target;
  if (/operation/i.test(name)) return 'rop_0000000000000000';
  if (name === 'idpId') return idp;
  if (name === 'id' && path.includes('/plugins/')) return 'audit-webhook';
  return 'dummy_1';
}

function url(path: string, op: Operation, fill: (name: string) => string, query: (p: Parameter) => string | undefined) {
  const p = path.replace(/\{([A-Za-z_]+)\}/g, (_, n: string) => encodeURIComponent(fill(n)));
  const q = new URLSearchParams();
  for (const param of op.parameters ?? []) {
    if (param.in !== 'query') continue;
    const v = query(param);
    if (v !== undefined) q.set(param.name, v);
  }
  const qs = q.toString();
  return `${d.url}${p}${qs ? `?${qs}` : ''}`;
}

/** A query value that passes: the target tenant, an enum's first value, else absent unless required. */
function plausibleQuery(p: Parameter): string | undefined {
  if (p.name === 'tenant_id') return target;
  const e = p.schema?.enum as unknown[] | undefined;
  if (e?.length) return String(e[0]);
  return p.required ? 'x' : undefined;
}

interface Outcome {
  what: string;
  status: number;
  body: string;
}

async function send(what: string, method: string, target: string, body?: string): Promise<Outcome> {
  const res = await fetch(target, {
    method: method.toUpperCase(),
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body }),
    redirect: 'manual',
  });
  return { what, status: res.status, body: await res.text() };
}

/** Below 500, and an error is the error object: `error` and a description as strings. */
function wrong(o: Outcome): string | undefined {
  if (o.status >= 500) return `${o.what}: ${o.status} ${o.body.slice(0, 200)}`;
  if (o.status < 400) return undefined;
  let b: Record<string, unknown>;
  try {
    b = JSON.parse(o.body) as Record<string, unknown>;
  } catch {
    return `${o.what}: ${o.status} is not JSON: ${o.body.slice(0, 120)}`;
  }
  const described = typeof b.error_description === 'string' || typeof b.message === 'string';
  // Under /scim/v2 the error object is RFC 7644 §3.12's: schemas, status (a string), detail.
  const scim =
    Array.isArray(b.schemas) &&
    b.schemas.includes('urn:ietf:params:scim:api:messages:2.0:Error') &&
    b.status === String(o.status) &&
    typeof b.detail === 'string';
  if (!scim && (typeof b.error !== 'string' || !described))
    return `${o.what}: ${o.status} not the error object: ${o.body.slice(0, 120)}`;
  if (/call stack|RangeError|TypeError|Cannot read prop/i.test(o.body))
    return `${o.what}: ${o.status} leaks ${o.body.slice(0, 160)}`;
  return undefined;
}

/** Unhandled errors the daemon logged so far (the tests run one after the other). */
const unhandled = () => d.logs.filter((l) => l.msg === 'unhandled error').length;

const document = async (): Promise<Doc> => (await (await fetch(`${d.url}/openapi.json`)).json()) as Doc;

test.serial(
  'every operation with a JSON body: inherited names as keys and values, and deep nesting, never get a 5xx',
  async (t) => {
    t.timeout(600_000);
    const before = unhandled();
    const doc = await document();
    const failures: string[] = [];
    let operations = 0;
    let pastAuthentication = 0;
    let requests = 0;
    for (const [path, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops)) {
        const json = op.requestBody?.content['application/json'];
        if (!json) continue;
        operations++;
        let authenticated = false;
        for (const [name, body] of bodies(json.schema)) {
          const o = await send(
            `${method.toUpperCase()} ${path} (${name})`,
            method,
            url(path, op, (n) => plausible(path, n), plausibleQuery),
            body,
          );
          requests++;
          if (o.status !== 401) authenticated = true;
          const bad = wrong(o);
          if (bad) failures.push(bad);
        }
        if (authenticated && path.startsWith('/api/admin/')) pastAuthentication++;
      }
    t.log(`${operations} operations with a JSON body, ${requests} requests`);
    // The walk must reach the surfaces it is meant to cover, or it proves nothing.
    t.true(operations >= 40, `only ${operations} operations with a JSON body in the document`);
    t.true(pastAuthentication >= 30, `only ${pastAuthentication} admin operations got past authentication`);
    t.deepEqual(failures, []);
    t.is(unhandled() - before, 0, 'no unhandled error logged');
  },
);

test.serial(
  'every operation: inherited names as path parameters and as query parameters never get a 5xx',
  async (t) => {
    t.timeout(600_000);
    const before = unhandled();
    const doc = await document();
    const failures: string[] = [];
    let operations = 0;
    let withParams = 0;
    let requests = 0;
    for (const [path, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops)) {
        operations++;
        const pathParams = [...path.matchAll(/\{([A-Za-z_]+)\}/g)].map((m) => m[1]);
        const queryParams = (op.parameters ?? []).filter((p) => p.in === 'query');
        if (pathParams.length || queryParams.length) withParams++;
        const body = op.requestBody?.content['application/json'] ? '{}' : undefined;
        for (const n of NAMES) {
          for (const param of pathParams) {
            const o = await send(
              `${method.toUpperCase()} ${path} ({${param}} = ${n})`,
              method,
              url(path, op, (p) => (p === param ? n : plausible(path, p)), plausibleQuery),
              body,
            );
            requests++;
            const bad = wrong(o);
            if (bad) failures.push(bad);
          }
          if (queryParams.length) {
            const o = await send(
              `${method.toUpperCase()} ${path} (every query parameter = ${n})`,
              method,
              url(
                path,
                op,
                (p) => plausible(path, p),
                () => n,
              ),
              body,
            );
            requests++;
            const bad = wrong(o);
            if (bad) failures.push(bad);
          }
        }
      }
    t.log(`${operations} operations, ${requests} requests`);
    t.true(operations >= 90, `only ${operations} operations in the document`);
    t.true(withParams >= 50, `only ${withParams} operations take parameters`);
    t.deepEqual(failures, []);
    t.is(unhandled(), before, 'the daemon logged no unhandled error');
  },
);
