/**
 * Rendering: a resource's meta and weak ETag (RFC 7644 §3.14), the attribute projection of
 * `attributes` / `excludedAttributes` (§3.4.2.5, RFC 7643 §7 `returned`), the ListResponse
 * (§3.4.2), and the If-Match / If-None-Match checks.
 */
import { createHash } from 'node:crypto';
import { invalidValue, preconditionFailed } from './errors.js';
import {
  COMMON_ATTRIBUTES,
  resolvePath,
  SCHEMA_LIST,
  type ResolvedPath,
  type ScimAttribute,
  type ScimResourceType,
} from './schema.js';

export type ScimResource = Record<string, unknown> & { id: string; schemas: string[] };

/** A weak entity tag (RFC 7644 §3.14, RFC 9110 §8.8.3) from a version token (a counter, a timestamp, a hash). */
export function weakEtag(version: string | number): string {
  return `W/"${String(version)}"`;
}

/** A version token for a resource that has no counter: a hash of its representation (meta left out). */
export function contentVersion(resource: Record<string, unknown>): string {
  const { meta: _meta, ...rest } = resource;
  return createHash('sha256').update(stableJson(rest)).digest('base64url').slice(0, 22);
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/**
 * Sets `meta` (RFC 7643 §3.1): resourceType, created, lastModified, location
 * (`<base>/Users/<id>`), version (the weak ETag, which the route also sends as ETag).
 */
export function withMeta(
  rt: ScimResourceType,
  resource: ScimResource,
  m: { base: string; created: number; lastModified: number; version?: string | number },
): ScimResource {
  const version = weakEtag(m.version ?? contentVersion(resource));
  return {
    ...resource,
    meta: {
      resourceType: rt.name,
      created: new Date(m.created).toISOString(),
      lastModified: new Date(m.lastModified).toISOString(),
      location: `${m.base}${rt.endpoint}/${encodeURIComponent(resource.id)}`,
      version,
    },
  };
}

/** The ETag of a rendered resource: its meta.version. */
export const etagOf = (r: ScimResource): string => String((r.meta as { version: string }).version);

const opaque = (tag: string) => tag.trim().replace(/^W\//, '');

/** The entity tags of an If-Match / If-None-Match header; `*` as itself. */
function tagsOf(header: string): string[] {
  return header
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

/**
 * If-Match (RFC 7644 §3.14, RFC 9110 §13.1.1), compared on the opaque tag since SCIM's tags
 * are weak: absent passes; `*` passes for an existing resource; a mismatch is 412.
 */
export function checkIfMatch(header: string | undefined, etag: string): void {
  if (!header) return;
  const tags = tagsOf(header);
  if (tags.includes('*')) return;
  if (!tags.some((t) => opaque(t) === opaque(etag))) throw preconditionFailed();
}

/** If-None-Match on GET (RFC 9110 §13.1.2, weak comparison): true when the client's copy is current (304). */
export function notModified(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const tags = tagsOf(header);
  return tags.includes('*') || tags.some((t) => opaque(t) === opaque(etag));
}

/** A parsed `attributes` / `excludedAttributes` list (comma-separated attribute paths). */
export interface Projection {
  attributes?: ResolvedPath[];
  excluded?: ResolvedPath[];
}

/** Parses the two parameters against `rt`; an unknown attribute is 400 invalidValue. */
export function parseProjection(rt: ScimResourceType, attributes?: string, excluded?: string): Projection {
  const list = (s: string | undefined, name: string) =>
    s === undefined || s.trim() === ''
      ? undefined
      : s.split(',').flatMap((p) => {
          // An extension's URN alone names all of its attributes.
          const ext = rt.extensions.find((e) => e.schema.id.toLowerCase() === p.trim().toLowerCase());
          if (ext) return ext.schema.attributes.map((a) => resolvePath(rt, `${ext.schema.id}:${a.name}`)!);
          const r = resolvePath(rt, p.trim());
          if (!r) throw invalidValue(`${name}: unknown attribute ${p.trim()}.`);
          return [r];
        });
  return { attributes: list(attributes, 'attributes'), excluded: list(excluded, 'excludedAttributes') };
}

/** Always returned whatever the projection (RFC 7643 §7 `returned: always`; meta by our choice). */
const ALWAYS = new Set(['id', 'schemas', 'meta']);

/**
 * The resource as the client asked to see it (RFC 7644 §3.4.2.5): `attributes` keeps only the
 * named ones (and id, schemas, meta), `excludedAttributes` drops the named ones; `returned:
 * never` attributes (password) are never sent, `request` ones only when named.
 */
export function project(rt: ScimResourceType, r: ScimResource, p: Projection = {}): ScimResource {
  const out: Record<string, unknown> = {};
  const defs = (schema: string): ScimAttribute[] =>
    schema === rt.schema.id
      ? [...COMMON_ATTRIBUTES, ...rt.schema.attributes]
      : (rt.extensions.find((e) => e.schema.id === schema)?.schema.attributes ?? []);
  const keep = (schema: string, a: ScimAttribute, sub?: ScimAttribute): boolean => {
    const named = (l?: ResolvedPath[]) =>
      l?.some((x) => x.schema === schema && x.attr.name === a.name && (!x.sub || !sub || x.sub.name === sub.name));
    const wholeNamed = (l?: ResolvedPath[]) =>
      l?.some((x) => x.schema === schema && x.attr.name === a.name && (!x.sub || x.sub.name === sub?.name));
    const def = sub ?? a;
    if (ALWAYS.has(a.name) && schema === rt.schema.id) return true;
    if (def.returned === 'never') return false;
    if (p.attributes) return Boolean(named(p.attributes));
    if (p.excluded && wholeNamed(p.excluded)) return false;
    return def.returned !== 'request';
  };
  const copy = (schema: string, src: Record<string, unknown>, dst: Record<string, unknown>) => {
    for (const a of defs(schema)) {
      const v = src[a.name];
      if (v === undefined || v === null || !keep(schema, a)) continue;
      if (a.type !== 'complex' || !a.subAttributes) {
        dst[a.name] = v;
        continue;
      }
      const pick = (o: unknown) => {
        if (!o || typeof o !== 'object') return o;
        const x: Record<string, unknown> = {};
        for (const s of a.subAttributes!) {
          const sv = (o as Record<string, unknown>)[s.name];
          if (sv !== undefined && keep(schema, a, s)) x[s.name] = sv;
        }
        return x;
      };
      const picked = Array.isArray(v) ? v.map(pick) : pick(v);
      if (Array.isArray(picked) ? picked.length : picked && Object.keys(picked).length) dst[a.name] = picked;
    }
  };
  copy(rt.schema.id, r, out);
  for (const e of rt.extensions) {
    const ext = r[e.schema.id];
    if (!ext || typeof ext !== 'object') continue;
    const x: Record<string, unknown> = {};
    copy(e.schema.id, ext as Record<string, unknown>, x);
    if (Object.keys(x).length) out[e.schema.id] = x;
  }
  // Attributes of custom schemas (kept as the provisioning client sent them): returned as
  // stored unless excluded by their URN or a projection names others.
  for (const [k, v] of Object.entries(r)) {
    if (!k.toLowerCase().startsWith('urn:') || k === rt.schema.id || rt.extensions.some((e) => e.schema.id === k))
      continue;
    if (p.attributes) continue;
    out[k] = v;
  }
  out.schemas = (r.schemas ?? []).filter(
    (s) => s === rt.schema.id || out[s] !== undefined || !rt.extensions.some((e) => e.schema.id === s),
  );
  return out as ScimResource;
}

/** A ListResponse (RFC 7644 §3.4.2): totalResults, 1-based startIndex, itemsPerPage, Resources. */
export function listResponse(resources: ScimResource[], totalResults: number, startIndex: number) {
  return {
    schemas: [SCHEMA_LIST],
    totalResults,
    startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}
