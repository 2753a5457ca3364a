/**
 * SCIM filters (RFC 7644 §3.4.2.2): parsed by `scim2-parse-filter` (its grammar, our errors),
 * every attribute path checked against the resource type's schema and resolved to its
 * canonical spelling, then evaluated here with the attribute's own rules (caseExact, type).
 * A malformed filter or an unknown attribute is 400 invalidFilter (§3.4.2.2, Table 9).
 *
 * `indexedEq` names the part of a filter a repository can answer from an index (an `eq` on
 * `id`, `userName`, `externalId`, alone or as one term of a top-level `and`); the rest of the
 * filter is then checked on the few rows the index returned. Any other filter is evaluated
 * over keyset-paged batches of the tenant's rows (list.ts): bounded memory, a full scan.
 */
import { parse, type Filter } from 'scim2-parse-filter';
import { invalidFilter } from './errors.js';
import { leaf, resolvePath, subAttribute, valuesAt, type ResolvedPath, type ScimResourceType } from './schema.js';

type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';
type Value = string | number | boolean | null;

/** A filter whose paths are resolved (`inner`: relative to one element of a `[...]` value path). */
export type ScimFilter =
  | { op: 'and' | 'or'; filters: ScimFilter[] }
  | { op: 'not'; filter: ScimFilter }
  | { op: 'pr'; path: ResolvedPath; inner: boolean }
  | { op: CompareOp; path: ResolvedPath; inner: boolean; value: Value }
  | { op: '[]'; path: ResolvedPath; filter: ScimFilter };

/** Longer filters are refused (400 invalidFilter) before parsing: a filter is a query, not a program. */
export const MAX_FILTER_LENGTH = 4096;

/** Parses and checks `text` against `rt`; 400 invalidFilter when malformed or naming an unknown attribute. */
export function parseFilter(rt: ScimResourceType, text: string): ScimFilter {
  if (text.length > MAX_FILTER_LENGTH)
    throw invalidFilter(`The filter is longer than ${MAX_FILTER_LENGTH} characters.`);
  let ast: Filter;
  try {
    ast = parse(text);
  } catch (e) {
    throw invalidFilter(`The filter is malformed: ${(e as Error).message}`);
  }
  // `emails[type eq "work"].value co "x"` (a PATCH-style path in a filter): the parser reads
  // it as `emails[type eq "work"] and emails.value co "x"`; it means one element matching both.
  if (text.includes('].')) ast = regroup(ast);
  return compile(rt, ast, undefined);
}

function regroup(f: Filter): Filter {
  if (f.op === 'not') return { op: 'not', filter: regroup(f.filter) };
  if (f.op === '[]') return { ...f, valFilter: regroup(f.valFilter) };
  if (f.op !== 'and' && f.op !== 'or') return f;
  const [a, b] = f.filters;
  if (f.op === 'and' && f.filters.length === 2 && a.op === '[]' && 'attrPath' in b && b.op !== '[]') {
    const prefix = `${a.attrPath}.`;
    if (b.attrPath.toLowerCase().startsWith(prefix.toLowerCase()))
      return {
        op: '[]',
        attrPath: a.attrPath,
        valFilter: { op: 'and', filters: [a.valFilter, { ...b, attrPath: b.attrPath.slice(prefix.length) }] },
      };
  }
  return { op: f.op, filters: f.filters.map(regroup) };
}

function resolve(rt: ScimResourceType, path: string, within: ResolvedPath | undefined): ResolvedPath {
  if (within) {
    const sub = subAttribute(within.attr, path);
    if (!sub) throw invalidFilter(`${within.path} has no sub-attribute ${path}.`);
    return { ...within, sub, path: `${within.attr.name}.${sub.name}` };
  }
  const p = resolvePath(rt, path);
  if (!p) throw invalidFilter(`Unknown attribute ${path} for the resource type ${rt.name}.`);
  return p;
}

function compile(rt: ScimResourceType, f: Filter, within: ResolvedPath | undefined): ScimFilter {
  switch (f.op) {
    case 'and':
    case 'or':
      return { op: f.op, filters: f.filters.map((x) => compile(rt, x, within)) };
    case 'not':
      return { op: 'not', filter: compile(rt, f.filter, within) };
    case '[]': {
      if (within) throw invalidFilter('A value path cannot be nested in another.');
      const path = resolve(rt, f.attrPath, undefined);
      if (path.sub || path.attr.type !== 'complex')
        throw invalidFilter(`${path.path} is not a complex attribute; it takes no [filter].`);
      return { op: '[]', path, filter: compile(rt, f.valFilter, path) };
    }
    case 'pr':
      return { op: 'pr', path: resolve(rt, f.attrPath, within), inner: Boolean(within) };
    default: {
      const op = String(f.op).toLowerCase() as CompareOp;
      let path = resolve(rt, f.attrPath, within);
      // `emails co "x"`: a complex attribute compared as its `value` (RFC 7644 §3.4.2.2).
      if (!path.sub && path.attr.type === 'complex') {
        const value = subAttribute(path.attr, 'value');
        if (!value) throw invalidFilter(`${path.path} is complex: name one of its sub-attributes.`);
        path = { ...path, sub: value, path: `${path.attr.name}.value` };
      }
      return { op, path, inner: Boolean(within), value: checkValue(path, op, f.compValue) };
    }
  }
}

/** The comparison value, checked against the attribute's type (a mismatch is invalidFilter). */
function checkValue(path: ResolvedPath, op: CompareOp, v: Value): Value {
  const a = leaf(path);
  if (v === null) {
    if (op === 'eq' || op === 'ne') return null;
    throw invalidFilter(`${path.path} ${op} null: null compares only with eq and ne.`);
  }
  if (a.type === 'boolean') {
    // RFC 7644 §3.4.2.2: gt/ge/lt/le on a boolean, and co/sw/ew on anything but text, fail.
    if (op !== 'eq' && op !== 'ne') throw invalidFilter(`${path.path} is a boolean: only eq and ne apply.`);
    if (typeof v === 'string' && /^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
    if (typeof v !== 'boolean') throw invalidFilter(`${path.path} is a boolean: compare it with true or false.`);
    return v;
  }
  if (a.type === 'integer' || a.type === 'decimal') {
    if (typeof v !== 'number' || ['co', 'sw', 'ew'].includes(op))
      throw invalidFilter(`${path.path} is a number: compare it with a number, not with ${op}.`);
    return v;
  }
  if (typeof v !== 'string') throw invalidFilter(`${path.path} is a ${a.type}: compare it with a string.`);
  if (a.type === 'dateTime' && Number.isNaN(Date.parse(v)))
    throw invalidFilter(`${path.path} is a dateTime: ${JSON.stringify(v)} is not an xsd:dateTime.`);
  return v;
}

/** Whether `resource` (a SCIM representation) matches the filter. */
export function matches(f: ScimFilter, resource: Record<string, unknown>): boolean {
  return test(f, resource, resource);
}

function test(f: ScimFilter, resource: Record<string, unknown>, element: Record<string, unknown>): boolean {
  switch (f.op) {
    case 'and':
      return f.filters.every((x) => test(x, resource, element));
    case 'or':
      return f.filters.some((x) => test(x, resource, element));
    case 'not':
      return !test(f.filter, resource, element);
    case '[]':
      return valuesAt(resource, f.path).some(
        (el) => el !== null && typeof el === 'object' && test(f.filter, resource, el as Record<string, unknown>),
      );
    default: {
      const values = f.inner ? innerValues(element, f.path) : valuesAt(resource, f.path);
      if (f.op === 'pr') return values.some((v) => v !== '' && !(Array.isArray(v) && v.length === 0));
      const expected = f.value;
      if (expected === null) return f.op === 'eq' ? values.length === 0 : values.length > 0;
      const a = leaf(f.path);
      // ne: no value equals (a missing attribute is "not equal").
      if (f.op === 'ne') return !values.some((v) => compare('eq', a, v, expected));
      return values.some((v) => compare(f.op, a, v, expected));
    }
  }
}

function innerValues(element: Record<string, unknown>, p: ResolvedPath): unknown[] {
  const v = element[p.sub?.name ?? ''];
  return v === undefined || v === null ? [] : Array.isArray(v) ? v : [v];
}

function compare(
  op: CompareOp,
  a: { type: string; caseExact: boolean },
  actual: unknown,
  expected: string | number | boolean,
): boolean {
  if (a.type === 'boolean') {
    const b = typeof actual === 'string' ? actual.toLowerCase() === 'true' : actual === true;
    return op === 'eq' ? b === expected : b !== expected;
  }
  if (typeof expected === 'number') {
    const n = Number(actual);
    return ordered(op, n === expected ? 0 : n < expected ? -1 : 1);
  }
  if (a.type === 'dateTime' && ['eq', 'ne', 'gt', 'ge', 'lt', 'le'].includes(op)) {
    const x = Date.parse(String(actual));
    const y = Date.parse(String(expected));
    if (Number.isNaN(x)) return false;
    return ordered(op, x === y ? 0 : x < y ? -1 : 1);
  }
  let s = String(actual);
  let e = String(expected);
  if (!a.caseExact) {
    s = s.toLowerCase();
    e = e.toLowerCase();
  }
  switch (op) {
    case 'co':
      return s.includes(e);
    case 'sw':
      return s.startsWith(e);
    case 'ew':
      return s.endsWith(e);
    default:
      return ordered(op, s === e ? 0 : s < e ? -1 : 1);
  }
}

function ordered(op: CompareOp, c: number): boolean {
  switch (op) {
    case 'eq':
      return c === 0;
    case 'ne':
      return c !== 0;
    case 'gt':
      return c > 0;
    case 'ge':
      return c >= 0;
    case 'lt':
      return c < 0;
    case 'le':
      return c <= 0;
    default:
      return false;
  }
}

/**
 * The `eq` term an index answers: the filter itself, or one term of a top-level `and`, that
 * compares a core attribute named in `indexed` (e.g. `id`, `userName`, `externalId`) with a
 * string. undefined: the filter needs a scan.
 */
export function indexedEq(f: ScimFilter, indexed: string[]): { attribute: string; value: string } | undefined {
  if (f.op === 'and') {
    for (const x of f.filters) {
      const hit = indexedEq(x, indexed);
      if (hit) return hit;
    }
    return undefined;
  }
  if (f.op !== 'eq' || f.inner || f.path.extension || f.path.sub || typeof f.value !== 'string') return undefined;
  return indexed.includes(f.path.attr.name) ? { attribute: f.path.attr.name, value: f.value } : undefined;
}

/** Whether any term of `f` tests the core attribute `name` (e.g. a User's `groups`). */
export function mentions(f: ScimFilter, name: string): boolean {
  switch (f.op) {
    case 'and':
    case 'or':
      return f.filters.some((x) => mentions(x, name));
    case 'not':
      return mentions(f.filter, name);
    default:
      return !f.path.extension && f.path.attr.name === name;
  }
}
