/**
 * SCIM attribute definitions (RFC 7643 §2, §7) and the resource types built from them: what a
 * filter, a projection, a PATCH path and a body are checked against. An attribute path is
 * resolved case-insensitively (RFC 7643 §2.1) to its canonical spelling, with or without the
 * schema URN prefix (`urn:ietf:params:scim:schemas:core:2.0:User:userName`, RFC 7644 §3.10).
 */

export type ScimAttrType = 'string' | 'boolean' | 'decimal' | 'integer' | 'dateTime' | 'reference' | 'complex';
export type Mutability = 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
export type Returned = 'always' | 'never' | 'default' | 'request';

/** One attribute (RFC 7643 §7): the characteristics the service enforces and /Schemas publishes. */
export interface ScimAttribute {
  name: string;
  type: ScimAttrType;
  multiValued: boolean;
  description: string;
  required: boolean;
  caseExact: boolean;
  mutability: Mutability;
  returned: Returned;
  uniqueness: 'none' | 'server' | 'global';
  canonicalValues?: string[];
  referenceTypes?: string[];
  subAttributes?: ScimAttribute[];
}

/** A schema (RFC 7643 §7): its URN and attributes. */
export interface ScimSchema {
  id: string;
  name: string;
  description: string;
  attributes: ScimAttribute[];
}

/** A resource type (RFC 7643 §6): its endpoint, core schema and extensions. */
export interface ScimResourceType {
  /** `User`, `Group`: meta.resourceType. */
  name: string;
  /** `/Users`, relative to /scim/v2. */
  endpoint: string;
  description: string;
  schema: ScimSchema;
  extensions: { schema: ScimSchema; required: boolean }[];
}

type AttrOpts = Partial<Omit<ScimAttribute, 'name' | 'type'>>;

/** An attribute with RFC 7643 §2.2's defaults (single-valued, readWrite, returned by default). */
export function attr(name: string, type: ScimAttrType, opts: AttrOpts = {}): ScimAttribute {
  return {
    name,
    type,
    multiValued: false,
    description: opts.description ?? name,
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    ...opts,
    ...(type === 'reference' && !opts.referenceTypes ? { referenceTypes: ['external'] } : {}),
  };
}

/** A multi-valued complex attribute with the usual value/display/type/primary sub-attributes. */
export function multi(name: string, types: string[], more: ScimAttribute[] = [], opts: AttrOpts = {}): ScimAttribute {
  return attr(name, 'complex', {
    multiValued: true,
    subAttributes: [
      attr('value', 'string'),
      attr('display', 'string'),
      attr('type', 'string', { canonicalValues: types }),
      attr('primary', 'boolean'),
      ...more,
    ],
    ...opts,
  });
}

export const SCHEMA_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const SCHEMA_ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const SCHEMA_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const SCHEMA_LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const SCHEMA_PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const SCHEMA_SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

/** The common attributes of every resource (RFC 7643 §3.1): not listed in /Schemas. */
export const COMMON_ATTRIBUTES: ScimAttribute[] = [
  attr('id', 'string', { caseExact: true, mutability: 'readOnly', returned: 'always', uniqueness: 'server' }),
  attr('externalId', 'string', { caseExact: true }),
  attr('schemas', 'reference', { multiValued: true, caseExact: true, returned: 'always', referenceTypes: ['uri'] }),
  attr('meta', 'complex', {
    mutability: 'readOnly',
    returned: 'always',
    subAttributes: [
      attr('resourceType', 'string', { caseExact: true, mutability: 'readOnly' }),
      attr('created', 'dateTime', { mutability: 'readOnly' }),
      attr('lastModified', 'dateTime', { mutability: 'readOnly' }),
      attr('location', 'reference', { mutability: 'readOnly', referenceTypes: ['uri'] }),
      attr('version', 'string', { caseExact: true, mutability: 'readOnly' }),
    ],
  }),
];

const ref = (types: string[], opts: AttrOpts = {}) => attr('$ref', 'reference', { referenceTypes: types, ...opts });

/** RFC 7643 §4.1, §8.7.1. */
export const USER_SCHEMA: ScimSchema = {
  id: SCHEMA_USER,
  name: 'User',
  description: 'User Account',
  attributes: [
    attr('userName', 'string', { required: true, uniqueness: 'server', description: 'Unique identifier for the User' }),
    attr('name', 'complex', {
      subAttributes: ['formatted', 'familyName', 'givenName', 'middleName', 'honorificPrefix', 'honorificSuffix'].map(
        (n) => attr(n, 'string'),
      ),
    }),
    ...['displayName', 'nickName'].map((n) => attr(n, 'string')),
    attr('profileUrl', 'reference'),
    ...['title', 'userType', 'preferredLanguage', 'locale', 'timezone'].map((n) => attr(n, 'string')),
    attr('active', 'boolean'),
    attr('password', 'string', { mutability: 'writeOnly', returned: 'never' }),
    multi('emails', ['work', 'home', 'other']),
    multi('phoneNumbers', ['work', 'home', 'mobile', 'fax', 'pager', 'other']),
    multi('ims', ['aim', 'gtalk', 'icq', 'xmpp', 'msn', 'skype', 'qq', 'yahoo']),
    multi('photos', ['photo', 'thumbnail']),
    attr('addresses', 'complex', {
      multiValued: true,
      subAttributes: [
        ...['formatted', 'streetAddress', 'locality', 'region', 'postalCode', 'country'].map((n) => attr(n, 'string')),
        attr('type', 'string', { canonicalValues: ['work', 'home', 'other'] }),
        attr('primary', 'boolean'),
      ],
    }),
    multi('groups', ['direct', 'indirect'], [ref(['Group'], { mutability: 'readOnly' })], { mutability: 'readOnly' }),
    multi('entitlements', []),
    multi('roles', []),
    multi('x509Certificates', []),
  ],
};

/** RFC 7643 §4.3. */
export const ENTERPRISE_USER_SCHEMA: ScimSchema = {
  id: SCHEMA_ENTERPRISE,
  name: 'EnterpriseUser',
  description: 'Enterprise User',
  attributes: [
    ...['employeeNumber', 'costCenter', 'organization', 'division', 'department'].map((n) => attr(n, 'string')),
    attr('manager', 'complex', {
      subAttributes: [
        attr('value', 'string'),
        ref(['User']),
        attr('displayName', 'string', { mutability: 'readOnly' }),
      ],
    }),
  ],
};

/** RFC 7643 §4.2, §8.7.1: flat groups of users (members of type User only, docs/scim.md). */
export const GROUP_SCHEMA: ScimSchema = {
  id: SCHEMA_GROUP,
  name: 'Group',
  description: 'Group',
  attributes: [
    attr('displayName', 'string', { required: true, uniqueness: 'server' }),
    attr('members', 'complex', {
      multiValued: true,
      subAttributes: [
        attr('value', 'string', { caseExact: true, mutability: 'immutable' }),
        ref(['User'], { mutability: 'immutable' }),
        attr('display', 'string', { mutability: 'readOnly' }),
        attr('type', 'string', { canonicalValues: ['User'], mutability: 'immutable' }),
      ],
    }),
  ],
};

export const USER_TYPE: ScimResourceType = {
  name: 'User',
  endpoint: '/Users',
  description: 'User Account',
  schema: USER_SCHEMA,
  extensions: [{ schema: ENTERPRISE_USER_SCHEMA, required: false }],
};

export const GROUP_TYPE: ScimResourceType = {
  name: 'Group',
  endpoint: '/Groups',
  description: 'Group',
  schema: GROUP_SCHEMA,
  extensions: [],
};

/** Every resource type /ResourceTypes and /Schemas publish. */
export const RESOURCE_TYPES: ScimResourceType[] = [USER_TYPE, GROUP_TYPE];

/** A path resolved against a resource type: the schema it lives in and its canonical names. */
export interface ResolvedPath {
  /** The schema URN; the core schema's attributes sit at the resource's top level. */
  schema: string;
  /** True for an extension: the attribute sits under resource[schema]. */
  extension: boolean;
  attr: ScimAttribute;
  sub?: ScimAttribute;
  /** `name.givenName`, canonical spelling, without the URN. */
  path: string;
}

const findAttr = (list: ScimAttribute[] | undefined, name: string) =>
  list?.find((a) => a.name.toLowerCase() === name.toLowerCase());

/** Splits a URN-qualified path into its schema and the rest; the URN compared without case. */
export function splitUrn(rt: ScimResourceType, path: string): { schema: ScimSchema; extension: boolean; rest: string } {
  const all = [{ schema: rt.schema, extension: false }, ...rt.extensions.map((e) => ({ ...e, extension: true }))];
  const lower = path.toLowerCase();
  for (const s of all) {
    const urn = s.schema.id.toLowerCase();
    if (lower === urn) return { schema: s.schema, extension: s.extension, rest: '' };
    if (lower.startsWith(`${urn}:`))
      return { schema: s.schema, extension: s.extension, rest: path.slice(urn.length + 1) };
  }
  return { schema: rt.schema, extension: false, rest: path };
}

/**
 * Resolves `path` (`userName`, `name.givenName`, `emails.value`, a URN-qualified one) to its
 * definition, or undefined when the resource type has no such attribute.
 */
export function resolvePath(rt: ScimResourceType, path: string): ResolvedPath | undefined {
  const { schema, extension, rest } = splitUrn(rt, path);
  const parts = rest.split('.');
  if (parts.length > 2 || parts.some((p) => !p)) return undefined;
  const a = findAttr(schema.attributes, parts[0]) ?? (extension ? undefined : findAttr(COMMON_ATTRIBUTES, parts[0]));
  if (!a) return undefined;
  if (parts.length === 1) return { schema: schema.id, extension, attr: a, path: a.name };
  const sub = findAttr(a.subAttributes, parts[1]);
  if (!sub) return undefined;
  return { schema: schema.id, extension, attr: a, sub, path: `${a.name}.${sub.name}` };
}

/** The sub-attribute `name` of a complex attribute, canonical, or undefined. */
export function subAttribute(a: ScimAttribute, name: string): ScimAttribute | undefined {
  return findAttr(a.subAttributes, name);
}

/** The attribute a filter or PATCH path finally compares or writes: the sub-attribute if any. */
export const leaf = (p: ResolvedPath): ScimAttribute => p.sub ?? p.attr;

/** The value at a resolved path of a resource (arrays of a multi-valued attribute flattened). */
export function valuesAt(resource: Record<string, unknown>, p: ResolvedPath): unknown[] {
  const base = p.extension ? (resource[p.schema] as Record<string, unknown> | undefined) : resource;
  const top = base?.[p.attr.name];
  const items: unknown[] = top === undefined || top === null ? [] : Array.isArray(top) ? top : [top];
  if (!p.sub) return items;
  return items.flatMap((i): unknown[] => {
    const v = i && typeof i === 'object' ? (i as Record<string, unknown>)[p.sub!.name] : undefined;
    return v === undefined || v === null ? [] : Array.isArray(v) ? (v as unknown[]) : [v];
  });
}
