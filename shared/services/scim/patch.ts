/**
 * PATCH (RFC 7644 §3.5.2): the operations checked against the resource type's schema, then
 * applied by `scim-patch` to the resource's current SCIM representation. The caller validates
 * and stores the result (values.ts, then its repository), in one transaction, so a refused
 * operation writes nothing.
 *
 * - `op` is compared without case: Entra ID sends "Replace", "Add", "Remove".
 * - Each path (`title`, `name.givenName`, `emails[type eq "work"].value`, a URN-qualified
 *   one) is resolved to its canonical spelling; an unknown attribute is 400 invalidPath, a
 *   malformed value filter in it 400 invalidFilter.
 * - A path, or a key of a path-less value, naming a readOnly attribute (id, meta, a user's
 *   groups) is 400 mutability (RFC 7643 §2.2).
 * - scim-patch's own refusals map to their scimType: noTarget (a value filter that matched
 *   nothing, a remove without path), invalidSyntax, invalidValue, invalidPath.
 */
import { scimPatch, ScimError, type ScimPatchOperation } from 'scim-patch';
import { ApiError } from '../../errors.js';
import { invalidPath, invalidSyntax, mutability, scimError, type ScimType } from './errors.js';
import { parseFilter, type ScimFilter } from './filter.js';
import type { ScimResource } from './render.js';
import { resolvePath, SCHEMA_PATCH, splitUrn, type ResolvedPath, type ScimResourceType } from './schema.js';

/** Operations per request: more is 400 invalidValue (a PATCH is an edit, not a bulk load). */
export const MAX_PATCH_OPERATIONS = 1000;

interface Op {
  op: 'add' | 'replace' | 'remove';
  path?: string;
  value?: unknown;
}

const SCIM_TYPES = new Set<ScimType>(['invalidSyntax', 'invalidPath', 'noTarget', 'invalidValue', 'invalidFilter']);

/** Checks a PatchOp body's shape (§3.5.2): schemas, Operations, each op's name, path and value. */
export function parsePatchBody(body: unknown): Op[] {
  const b = body as { schemas?: unknown; Operations?: unknown } | undefined;
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw invalidSyntax('The body must be a PatchOp object.');
  if (!Array.isArray(b.schemas) || !b.schemas.includes(SCHEMA_PATCH))
    throw invalidSyntax(`schemas must contain ${SCHEMA_PATCH}.`);
  const ops = b.Operations;
  if (!Array.isArray(ops) || ops.length === 0) throw invalidSyntax('Operations must be a non-empty array.');
  if (ops.length > MAX_PATCH_OPERATIONS)
    throw scimError(400, 'invalidValue', `At most ${MAX_PATCH_OPERATIONS} operations per PATCH.`);
  return ops.map((o: unknown, i) => {
    const x = o as { op?: unknown; path?: unknown; value?: unknown };
    if (!x || typeof x !== 'object') throw invalidSyntax(`Operations[${i}] must be an object.`);
    const op = typeof x.op === 'string' ? x.op.toLowerCase() : '';
    if (op !== 'add' && op !== 'replace' && op !== 'remove')
      throw invalidSyntax(`Operations[${i}].op must be add, replace or remove.`);
    if (x.path !== undefined && (typeof x.path !== 'string' || x.path.trim() === ''))
      throw invalidPath(`Operations[${i}].path must be a non-empty string.`);
    if (op !== 'remove' && !('value' in x)) throw invalidSyntax(`Operations[${i}] (${op}) needs a value.`);
    if (op === 'remove' && x.path === undefined)
      throw scimError(400, 'noTarget', `Operations[${i}]: remove needs a path (RFC 7644 §3.5.2.2).`);
    return { op, ...(x.path !== undefined ? { path: x.path.trim() } : {}), value: x.value };
  });
}

/** A resolved PATCH path: the canonical text scim-patch gets, the attribute it reaches, its value filter. */
export interface PatchPath {
  text: string;
  target: ResolvedPath;
  /**
   * `members[value eq "u1"]`: the value filter, compiled; test one element `el` with
   * `matches(filter, { [target.attr.name]: [el] })`.
   */
  filter?: ScimFilter;
}

function resolvePatchPath(rt: ScimResourceType, path: string): PatchPath {
  const { schema, extension, rest } = splitUrn(rt, path);
  const m = /^([^[\]]+)(?:\[(.+)\])?(?:\.([^[\].]+))?$/.exec(rest);
  if (!m) throw invalidPath(`The path ${path} is malformed.`);
  const [, attrPart, filterText, subAfter] = m;
  if (filterText !== undefined && attrPart.includes('.')) throw invalidPath(`The path ${path} is malformed.`);
  const prefix = extension ? `${schema.id}:` : '';
  const base = resolvePath(rt, `${prefix}${attrPart}`);
  if (!base) throw invalidPath(`Unknown attribute ${attrPart} in the path ${path}.`);
  if (filterText === undefined) return { text: `${prefix}${base.path}`, target: base };
  if (base.attr.type !== 'complex' || !base.attr.multiValued)
    throw invalidPath(`${base.path} is not multi-valued; it takes no [filter].`);
  // The value filter is checked like a list filter (its attributes are sub-attributes).
  const filter = parseFilter(rt, `${prefix}${base.attr.name}[${filterText}]`);
  const target = subAfter ? resolvePath(rt, `${prefix}${base.attr.name}.${subAfter}`) : base;
  if (!target) throw invalidPath(`${base.attr.name} has no sub-attribute ${subAfter}.`);
  const text = `${prefix}${base.attr.name}[${filterText}]${target.sub ? `.${target.sub.name}` : ''}`;
  return { text, target, filter };
}

const readOnly = (p: ResolvedPath) => p.attr.mutability === 'readOnly' || p.sub?.mutability === 'readOnly';

/**
 * A path-less add/replace value (§3.5.2.1, §3.5.2.3): its keys resolved to canonical names,
 * dotted keys (`name.givenName`, as some clients send) expanded into their complex attribute,
 * and readOnly ones refused.
 */
function canonicalValue(
  rt: ScimResourceType,
  value: unknown,
  current: Record<string, unknown>,
): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw scimError(400, 'invalidValue', 'An operation without path needs an object value.');
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const ext = rt.extensions.find((e) => e.schema.id.toLowerCase() === k.toLowerCase());
    if (ext) {
      const inner = canonicalValue(
        { ...rt, schema: ext.schema, extensions: [] },
        v,
        (current[ext.schema.id] as Record<string, unknown> | undefined) ?? {},
      );
      out[ext.schema.id] = { ...(out[ext.schema.id] ?? {}), ...inner };
      continue;
    }
    if (k.toLowerCase() === 'schemas') continue;
    const p = resolvePath(rt, k);
    if (!p) {
      out[k] = v; // not in the schema: the resource decides (store or refuse, values.ts)
      continue;
    }
    if (readOnly(p)) {
      // A client echoing a readOnly value unchanged (the id, in a whole-resource replace) changes nothing.
      if (!p.sub && !p.extension && JSON.stringify(current[p.attr.name]) === JSON.stringify(v)) continue;
      throw mutability(`${p.path} is readOnly (RFC 7643 §2.2).`);
    }
    const target = p.extension ? ((out[p.schema] ??= {}) as Record<string, unknown>) : out;
    if (p.sub) {
      const parent = (target[p.attr.name] ??= {}) as Record<string, unknown>;
      parent[p.sub.name] = v;
    } else target[p.attr.name] = v;
  }
  return out;
}

/** One operation, checked and resolved: what a resource that applies operations itself reads. */
export interface ResolvedPatchOp {
  op: 'add' | 'replace' | 'remove';
  /** Absent: a path-less add/replace whose `value` holds canonical attribute names. */
  path?: PatchPath;
  value?: unknown;
}

/**
 * Checks a PatchOp body and resolves each operation's path (invalidPath, invalidFilter,
 * mutability), without applying anything: for a resource that applies some operations
 * itself (a group's `members` add/remove on 50,000 members, without rendering them all).
 * `current` is needed only to let a path-less value echo an unchanged readOnly attribute.
 */
export function resolvePatchOps(
  rt: ScimResourceType,
  body: unknown,
  current: Record<string, unknown> = {},
): ResolvedPatchOp[] {
  return parsePatchBody(body).map((o) => {
    if (o.path === undefined) return { op: o.op, value: canonicalValue(rt, o.value, current) };
    const path = resolvePatchPath(rt, o.path);
    if (readOnly(path.target)) throw mutability(`${path.target.path} is readOnly (RFC 7643 §2.2).`);
    return { op: o.op, path, ...(o.op === 'remove' && o.value === undefined ? {} : { value: o.value }) };
  });
}

/**
 * Applies the operations to a copy of `current` (its SCIM representation, as GET renders it)
 * and returns the patched copy; `meta` and the other readOnly attributes are put back as they
 * were. The caller validates the result's values before storing it.
 */
export function applyPatch(rt: ScimResourceType, current: ScimResource, body: unknown): ScimResource {
  const prepared = resolvePatchOps(rt, body, current).map((o) => {
    if (!o.path) return { op: o.op, value: o.value } as ScimPatchOperation;
    const text = o.path.text;
    return {
      op: o.op,
      path: text,
      ...(o.op === 'remove' && o.value === undefined ? {} : { value: o.value }),
    };
  });
  const { meta, ...rest } = current;
  let patched: Record<string, unknown>;
  try {
    patched = scimPatch({ ...rest, meta: { ...(meta as object) } } as never, prepared, {
      mutateDocument: false,
      treatMissingAsAdd: true,
    });
  } catch (e) {
    if (e instanceof ApiError) throw e;
    if (e instanceof ScimError) {
      const code = SCIM_TYPES.has(e.scimCode as ScimType) ? (e.scimCode as ScimType) : 'invalidValue';
      const name = e.constructor.name;
      const t: ScimType =
        name === 'NoTarget' || name.startsWith('FilterArrayTarget')
          ? 'noTarget'
          : name === 'InvalidScimPatchOp' || name === 'FilterOnEmptyArray' || name === 'InvalidRemoveOpPath'
            ? 'noTarget'
            : code;
      throw scimError(400, t, e.message || 'The PATCH cannot be applied.');
    }
    throw scimError(400, 'invalidValue', `The PATCH cannot be applied: ${(e as Error).message}`);
  }
  for (const a of rt.schema.attributes) if (a.mutability === 'readOnly') delete patched[a.name];
  for (const a of rt.schema.attributes)
    if (a.mutability === 'readOnly' && current[a.name] !== undefined) patched[a.name] = current[a.name];
  return { ...patched, id: current.id, schemas: current.schemas, meta };
}
