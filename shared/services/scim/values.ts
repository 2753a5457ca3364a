/**
 * The values of a resource body (POST, PUT, the result of a PATCH) checked against the
 * schema (RFC 7643 §2.3 data types): each known attribute has its type, or the request is
 * 400 invalidValue naming it. Booleans also accept the strings "True" / "False" in any case,
 * which Microsoft Entra ID sends (`"active": "False"`). Attribute names are matched without
 * case and returned in their canonical spelling; readOnly attributes are dropped (the server
 * sets them, RFC 7643 §2.2); attributes no schema names are returned apart, for the resource
 * to store or refuse.
 */
import { invalidValue } from './errors.js';
import { COMMON_ATTRIBUTES, type ScimAttribute, type ScimResourceType } from './schema.js';

export interface CheckedBody {
  /** Core attributes, canonical names, typed. */
  core: Record<string, unknown>;
  /** Per extension URN (canonical): its attributes, typed. */
  extensions: Record<string, Record<string, unknown>>;
  /** Attributes outside every known schema: top-level unknown names, and custom-schema URN objects. */
  unknown: Record<string, unknown>;
}

const find = (defs: ScimAttribute[], k: string) => defs.find((a) => a.name.toLowerCase() === k.toLowerCase());

/** Checks one value against its attribute's type; returns it normalised. */
export function checkType(a: ScimAttribute, v: unknown, where: string): unknown {
  if (v === null) return null;
  if (a.multiValued) {
    // A single complex value where a list is due: some clients send one; read as a list of one.
    const list = Array.isArray(v) ? v : a.type === 'complex' && typeof v === 'object' ? [v] : undefined;
    if (!list) throw invalidValue(`${where} must be an array.`);
    return list.map((x, i) => checkSingle(a, x, `${where}[${i}]`));
  }
  return checkSingle(a, v, where);
}

function checkSingle(a: ScimAttribute, v: unknown, where: string): unknown {
  switch (a.type) {
    case 'boolean':
      if (typeof v === 'boolean') return v;
      if (typeof v === 'string' && /^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
      throw invalidValue(`${where} must be a boolean.`);
    case 'integer':
      if (typeof v === 'number' && Number.isInteger(v)) return v;
      throw invalidValue(`${where} must be an integer.`);
    case 'decimal':
      if (typeof v === 'number' && Number.isFinite(v)) return v;
      throw invalidValue(`${where} must be a number.`);
    case 'dateTime':
      if (typeof v === 'string' && !Number.isNaN(Date.parse(v))) return v;
      throw invalidValue(`${where} must be an xsd:dateTime string.`);
    case 'complex': {
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw invalidValue(`${where} must be an object.`);
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        const sub = find(a.subAttributes ?? [], k);
        if (!sub) throw invalidValue(`${where}.${k} is not a sub-attribute of ${a.name}.`);
        if (x === null || x === undefined || sub.mutability === 'readOnly') continue;
        out[sub.name] = checkSingle(sub, x, `${where}.${sub.name}`);
      }
      return out;
    }
    default:
      if (typeof v !== 'string') throw invalidValue(`${where} must be a string.`);
      if (v.length > 4096) throw invalidValue(`${where} is longer than 4096 characters.`);
      return v;
  }
}

/** Splits and checks a resource body (the common attributes id, meta, schemas are the server's). */
export function checkBody(rt: ScimResourceType, body: unknown): CheckedBody {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw invalidValue('The body must be a JSON object (a SCIM resource).');
  const out: CheckedBody = { core: {}, extensions: {}, unknown: {} };
  const coreDefs = [...COMMON_ATTRIBUTES, ...rt.schema.attributes];
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (v === undefined) continue;
    const ext = rt.extensions.find((e) => e.schema.id.toLowerCase() === k.toLowerCase());
    if (ext) {
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw invalidValue(`${ext.schema.id} must be an object.`);
      const e: Record<string, unknown> = {};
      for (const [ek, ev] of Object.entries(v as Record<string, unknown>)) {
        const a = find(ext.schema.attributes, ek);
        if (!a) {
          out.unknown[`${ext.schema.id}:${ek}`] = ev;
          continue;
        }
        if (ev === null || a.mutability === 'readOnly') continue;
        e[a.name] = checkType(a, ev, `${ext.schema.id}:${a.name}`);
      }
      out.extensions[ext.schema.id] = e;
      continue;
    }
    if (k.toLowerCase() === rt.schema.id.toLowerCase()) {
      // The core schema's attributes wrapped in its URN (allowed by RFC 7643 §3): unwrap.
      const inner = checkBody({ ...rt, extensions: [] }, v);
      Object.assign(out.core, inner.core);
      Object.assign(out.unknown, inner.unknown);
      continue;
    }
    const a = find(coreDefs, k);
    if (!a) {
      out.unknown[k] = v;
      continue;
    }
    if (a.mutability === 'readOnly' || a.name === 'schemas' || v === null) continue;
    out.core[a.name] = checkType(a, v, a.name);
  }
  for (const a of rt.schema.attributes)
    if (a.required && (out.core[a.name] === undefined || out.core[a.name] === ''))
      throw invalidValue(`${a.name} is required.`);
  return out;
}
