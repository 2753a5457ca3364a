/**
 * Discovery (RFC 7644 §4, RFC 7643 §5–§7): /ServiceProviderConfig, /ResourceTypes, /Schemas,
 * rendered from the same definitions the endpoints enforce (schema.ts, list.ts, patch.ts).
 */
import { MAX_COUNT } from './list.js';
import { listResponse, type ScimResource } from './render.js';
import { RESOURCE_TYPES, SCHEMA_LIST, type ScimAttribute, type ScimSchema } from './schema.js';

const SPC = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
const RT = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
const SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';
const DOCS = 'https://datatracker.ietf.org/doc/html/rfc7644';

/** RFC 7643 §5: what this service supports. `base` is `<issuer>/scim/v2`. */
export function serviceProviderConfig(base: string) {
  return {
    schemas: [SPC],
    documentationUri: DOCS,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_COUNT },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description:
          'An access token (RFC 6750) of a client_credentials client holding the scope "scim"; ' +
          "the tenant is the token's",
        specUri: 'https://www.rfc-editor.org/info/rfc6750',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

/** RFC 7643 §6: one resource type. */
function resourceType(base: string, name: string): ScimResource | undefined {
  const rt = RESOURCE_TYPES.find((r) => r.name === name);
  if (!rt) return undefined;
  return {
    schemas: [RT],
    id: rt.name,
    name: rt.name,
    endpoint: rt.endpoint,
    description: rt.description,
    schema: rt.schema.id,
    ...(rt.extensions.length
      ? { schemaExtensions: rt.extensions.map((e) => ({ schema: e.schema.id, required: e.required })) }
      : {}),
    meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/${rt.name}` },
  };
}

export function resourceTypes(base: string) {
  const all = RESOURCE_TYPES.map((r) => resourceType(base, r.name)!);
  return listResponse(all, all.length, 1);
}

export const oneResourceType = resourceType;

function attributeView(a: ScimAttribute): Record<string, unknown> {
  const { subAttributes, ...rest } = a;
  return { ...rest, ...(subAttributes ? { subAttributes: subAttributes.map(attributeView) } : {}) };
}

function schemaView(base: string, s: ScimSchema): ScimResource {
  return {
    schemas: [SCHEMA],
    id: s.id,
    name: s.name,
    description: s.description,
    attributes: s.attributes.map(attributeView),
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${s.id}` },
  };
}

function allSchemas(): ScimSchema[] {
  const seen = new Map<string, ScimSchema>();
  for (const rt of RESOURCE_TYPES)
    for (const s of [rt.schema, ...rt.extensions.map((e) => e.schema)]) seen.set(s.id, s);
  return [...seen.values()];
}

/** RFC 7643 §7, §8.7.1: every schema of every resource type. */
export function schemas(base: string) {
  const all = allSchemas().map((s) => schemaView(base, s));
  return { ...listResponse(all, all.length, 1), schemas: [SCHEMA_LIST] };
}

export function oneSchema(base: string, id: string): ScimResource | undefined {
  const s = allSchemas().find((x) => x.id.toLowerCase() === id.toLowerCase());
  return s ? schemaView(base, s) : undefined;
}
