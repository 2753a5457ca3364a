/**
 * The tenant's SCIM attribute mapping (docs/scim.md, "Attribute mapping"): the active field-
 * mapping sets of source type `scim` map SCIM attribute paths (`source`: core, enterprise
 * extension or custom schema paths, e.g. `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department`)
 * to custom claims (`claim`) and user fields (`user`); `group` and `role` targets are applied
 * after the write (mapped-memberships.ts). Attributes outside the known schemas that no mapping
 * names are kept or refused as the tenant's SCIM source profile says (its active version's
 * parserOptions `unmappedAttributes`: `store`, the default, or `refuse`).
 */
import { email as emailSchema } from '../../schemas/common.js';
import { StandardClaimsInput } from '../../schemas/standard-claims.js';
import type { ScimUserWrite } from '../../repositories/index.js';
import type { FieldMappingServices } from '../federation/index.js';
import type { FieldMapping } from '../../repositories/index.js';
import { invalidValue } from './errors.js';
import { membershipMappings } from './mapped-memberships.js';
import { resolvePath, USER_TYPE, valuesAt } from './schema.js';

export interface ScimMapping {
  /** The `claim` and `user` mappings, applied here. */
  mappings: FieldMapping[];
  /** The `group` and `role` mappings (mapped-memberships.ts). */
  memberships: FieldMapping[];
  /** Every mapping's source, lower-cased (group and role ones too): what counts as mapped. */
  sources: string[];
  refuseUnmapped: boolean;
}

/** The tenant's active SCIM mappings and unmapped-attribute policy. */
export async function scimMapping(fm: FieldMappingServices, tenantId: string): Promise<ScimMapping> {
  const sets = await fm.mappingSets.activeOf(tenantId, 'scim');
  const all = sets.flatMap((s) => s.mappings);
  const mappings = all.filter((m) => m.targetType === 'claim' || m.targetType === 'user');
  // The profile: the one an active SCIM set names, else the tenant's first active `scim` profile.
  const named = sets.find((s) => s.sourceProfileId)?.sourceProfileId;
  let options: Record<string, unknown> | undefined;
  if (named) options = (await fm.sourceProfiles.get(tenantId, named)).version?.parserOptions;
  else {
    const profiles = await fm.sourceProfiles.list(tenantId, 500);
    options = profiles.find((p) => p.sourceType === 'scim' && p.lifecycleState === 'active')?.version?.parserOptions;
  }
  const sources = all.map((m) => m.source.toLowerCase());
  return {
    mappings,
    memberships: membershipMappings(all),
    sources,
    refuseUnmapped: options?.unmappedAttributes === 'refuse',
  };
}

/** The values at a mapping's `source` in a SCIM representation (custom-schema paths included). */
export function sourceValues(resource: Record<string, unknown>, source: string): unknown[] {
  const known = resolvePath(USER_TYPE, source);
  if (known) return valuesAt(resource, known);
  const lower = source.toLowerCase();
  for (const key of Object.keys(resource)) {
    if (!key.toLowerCase().startsWith('urn:') || !lower.startsWith(`${key.toLowerCase()}:`)) continue;
    let v: unknown = resource[key];
    for (const part of source.slice(key.length + 1).split('.'))
      v = v && typeof v === 'object' ? (v as never)[part] : undefined;
    return v === undefined || v === null ? [] : Array.isArray(v) ? (v as unknown[]) : [v];
  }
  const v = resource[source];
  return v === undefined || v === null ? [] : [v];
}

/** 400 invalidValue naming the unknown attributes no mapping names, when the profile refuses them. */
export function refuseUnmapped(m: ScimMapping, unknown: Record<string, unknown>): void {
  if (!m.refuseUnmapped) return;
  const sources = m.sources;
  const names: string[] = [];
  for (const [k, v] of Object.entries(unknown)) {
    const leaves =
      k.toLowerCase().startsWith('urn:') && v && typeof v === 'object' && !Array.isArray(v)
        ? Object.keys(v).map((sub) => `${k}:${sub}`)
        : [k];
    // A source names the attribute as a path (`claim`, `user`), or inside a filter (`group`,
    // `role`: `urn:…:team eq "blue"`).
    for (const leaf of leaves) {
      const l = leaf.toLowerCase();
      if (!sources.some((s) => s === l || s.startsWith(`${l}.`) || s.startsWith(`${l} `) || s.startsWith(`${l}[`)))
        names.push(leaf);
    }
  }
  if (names.length)
    throw invalidValue(`Attributes outside the known schemas that no SCIM mapping names: ${names.join(', ')}.`);
}

/** A mapping's `transform` (docs/federation.md): on text values; others pass as they are. */
function transformed(transform: string | undefined, v: unknown): unknown {
  if (typeof v !== 'string') return v;
  if (transform === 'lowercase') return v.toLowerCase();
  if (transform === 'uppercase') return v.toUpperCase();
  if (transform === 'trim') return v.trim();
  return v;
}

const USER_CLAIMS = new Set(['given_name', 'family_name', 'preferred_username', 'locale', 'phone_number']);

/**
 * Applies the `user` mappings to `write` (a value that does not fit its field is 400
 * invalidValue naming the mapping) and returns the `claim` mappings' values (null: none).
 */
export function applyMappings(
  m: ScimMapping,
  resource: Record<string, unknown>,
  write: ScimUserWrite,
): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  for (const x of m.mappings) {
    const values = sourceValues(resource, x.source).map((v) => transformed(x.transform, v));
    const value = x.multiValued && x.transform !== 'first' ? (values.length ? values : null) : (values[0] ?? null);
    if (x.targetType === 'claim') {
      claims[x.target] = value;
      continue;
    }
    if (value === null || typeof value !== 'string') continue;
    if (x.target === 'email') {
      const e = emailSchema.safeParse(value);
      if (!e.success) throw invalidValue(`${x.source} (mapped to email) is not an email address.`);
      write.email = e.data;
    } else if (x.target === 'name') write.name = value.slice(0, 200);
    else if (x.target === 'external_id') write.external_id = value.slice(0, 255);
    else if (USER_CLAIMS.has(x.target)) {
      const parsed = StandardClaimsInput[x.target as keyof typeof StandardClaimsInput].safeParse(value);
      if (!parsed.success) throw invalidValue(`${x.source} (mapped to ${x.target}) does not fit that claim.`);
      write.standard_claims = { ...(write.standard_claims ?? {}), [x.target]: parsed.data };
    }
  }
  return claims;
}
