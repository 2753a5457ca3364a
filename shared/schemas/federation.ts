/**
 * Request and response shapes of field mapping and SAML federation (docs/federation.md):
 * source profiles, field-mapping sets, federation trust sources, operational notification
 * states. Records the interface specification marks extensible tolerate extra properties.
 * Every bound of the specification's Limits table is here, with a message that names it.
 */
import { z } from 'zod';

export const LIMITS = {
  intervalSeconds: { min: 900, max: 604_800 },
  priority: { min: -1000, max: 1000 },
  registrationAuthorities: 100,
  rules: 100,
  metadataUrlPatterns: 20,
  certificates: 10,
  url: 2048,
  description: 1000,
  displayName: 200,
  key: 128,
  mappings: 500,
} as const;

export const SOURCE_PROFILE_TYPES = ['csv', 'scim', 'saml', 'directory'] as const;
export const TRUST_SOURCE_TYPES = ['saml_aggregate', 'saml_metadata', 'saml_federation'] as const;
/** `active` is the only value the specification names; `disabled` stops polling and resolution. */
export const LIFECYCLE_STATES = ['active', 'disabled'] as const;
export const POLICIES = ['strict', 'warn', 'disabled'] as const;
export const POLLING_MODES = ['automatic', 'manual'] as const;
export const RESOLUTION_MODES = ['inventory_only', 'automatic'] as const;
export const ROLES = ['saml_idp', 'saml_sp'] as const;
export const ATTRIBUTE_PRESETS = [
  'basic.v1',
  'academic_publisher.v1',
  'enterprise_saas.v1',
  'research_federation.v1',
] as const;
export const DECISIONS = ['allow', 'deny'] as const;
export const SOURCE_STATES = ['healthy', 'stale', 'error', 'expired', 'missing', 'identity_change_pending'] as const;
/** Polling interval of a source created without one: hourly, as federation operators ask. */
export const DEFAULT_INTERVAL_SECONDS = 3600;

const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, {
    error: (iss) =>
      `must be one of: ${values.join(', ')}${iss.input === undefined ? '' : ` (got ${JSON.stringify(iss.input)})`}`,
  });

const int = (min: number, max: number) =>
  z
    .number({ error: 'must be an integer' })
    .int(`must be a whole number from ${min} to ${max}`)
    .min(min, `must be between ${min} and ${max}`)
    .max(max, `must be between ${min} and ${max}`);

const text = (max: number, min = 0) =>
  z
    .string({ error: 'must be a string' })
    .min(min, min === 1 ? 'must not be empty' : `must be at least ${min} characters`)
    .max(max, `must be at most ${max} characters`);

/** Identifiers an operator chooses (profileKey, setKey, sourceKey): URL-safe, 1 to 128 characters. */
export const operatorKey = text(LIMITS.key, 1).regex(
  /^[A-Za-z0-9._~-]+$/,
  'must use only letters, digits and . _ ~ - (1 to 128 characters)',
);

const uniqueStrings = (max: number, what: string) =>
  z
    .array(text(512, 1), { error: 'must be an array of strings' })
    .max(max, `must list at most ${max} ${what}`)
    .refine((a) => new Set(a).size === a.length, { message: `must not list a ${what.replace(/s$/, '')} twice` });

const freeObject = z.record(z.string(), z.unknown(), { error: 'must be an object' });

// ---- source profiles -----------------------------------------------------------------------

export const SourceProfileCreateInput = z.looseObject({
  sourceType: oneOf(SOURCE_PROFILE_TYPES),
  profileKey: operatorKey,
  displayName: text(LIMITS.displayName, 1),
  versionLabel: text(LIMITS.key, 1).optional(),
  parseDraftId: text(LIMITS.key, 1).optional(),
  schema: freeObject.optional(),
  parserOptions: freeObject.optional(),
  warningSummary: freeObject.optional(),
  sourceMetadata: freeObject.optional(),
});
export type SourceProfileCreateInput = z.output<typeof SourceProfileCreateInput>;

/** A new version of a profile's schema: the schema is required, the label unique per profile. */
export const SourceProfileVersionInput = z.looseObject({
  versionLabel: text(LIMITS.key, 1),
  parseDraftId: text(LIMITS.key, 1).optional(),
  schema: freeObject,
  parserOptions: freeObject.optional(),
  warningSummary: freeObject.optional(),
  sourceMetadata: freeObject.optional(),
});

export const SourceProfileVersionView = z.looseObject({
  id: z.string(),
  versionLabel: z.string(),
  lifecycleState: z.string(),
  schemaHash: z.string(),
  schema: freeObject,
  warningSummary: freeObject,
});

export const SourceProfileResult = z.looseObject({
  id: z.string(),
  tenantId: z.string(),
  profileKey: z.string(),
  displayName: z.string(),
  lifecycleState: z.string(),
  sourceType: z.enum(SOURCE_PROFILE_TYPES),
  activeVersionId: z.string().nullable(),
  version: SourceProfileVersionView.optional(),
});

// ---- field-mapping sets --------------------------------------------------------------------

export const FieldMappingInput = z.looseObject({
  source: text(512, 1).describe(
    'The source attribute: a SAML attribute name, SCIM path, CSV column or directory attribute.',
  ),
  targetType: oneOf(['user', 'claim', 'group', 'role'] as const).describe(
    '`user`: a user field; `claim`: a custom claim key; `group`, `role`: a group display name or ' +
      'role name, held while `source` (a SCIM filter) matches the provisioned user.',
  ),
  target: text(LIMITS.key, 1),
  required: z.boolean({ error: 'must be a boolean' }).optional(),
  multiValued: z.boolean({ error: 'must be a boolean' }).optional(),
  transform: oneOf(['none', 'lowercase', 'uppercase', 'trim', 'first'] as const).optional(),
});

export const FieldMappingSetInput = z.looseObject({
  setKey: operatorKey,
  displayName: text(LIMITS.displayName, 1),
  description: text(LIMITS.description).nullable().optional(),
  sourceType: oneOf(SOURCE_PROFILE_TYPES),
  sourceProfileId: text(64, 1).nullable().optional(),
  lifecycleState: oneOf(LIFECYCLE_STATES).optional(),
  mappings: z
    .array(FieldMappingInput, { error: 'must be an array' })
    .max(LIMITS.mappings, `must list at most ${LIMITS.mappings} mappings`),
});
export type FieldMappingSetInput = z.output<typeof FieldMappingSetInput>;

/** An update replaces the set's fields; its key stays. */
export const FieldMappingSetUpdateInput = FieldMappingSetInput.omit({ setKey: true });
export type FieldMappingSetUpdateInput = z.output<typeof FieldMappingSetUpdateInput>;

export const FieldMappingSetView = z.looseObject({
  id: z.string(),
  tenantId: z.string(),
  setKey: z.string(),
  displayName: z.string(),
  description: z.string().nullable(),
  sourceType: z.string(),
  sourceProfileId: z.string().nullable(),
  lifecycleState: z.string(),
  mappings: z.array(z.looseObject({ source: z.string(), targetType: z.string(), target: z.string() })),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
});

// ---- federation trust sources --------------------------------------------------------------

export const EntityCategoryRuleInput = z.looseObject({
  entityCategory: text(512, 1),
  decision: oneOf(DECISIONS),
  attributePresetId: oneOf(ATTRIBUTE_PRESETS).optional(),
});

export const RuntimeResolutionInput = z.looseObject(
  {
    mode: oneOf(RESOLUTION_MODES),
    roles: z
      .array(oneOf(ROLES), { error: 'must be an array of roles' })
      .refine((a) => new Set(a).size === a.length, { message: 'must not list a role twice' }),
    priority: int(LIMITS.priority.min, LIMITS.priority.max).default(0),
    idpFieldMappingSetId: text(64, 1).optional(),
    spFieldMappingSetId: text(64, 1).optional(),
    defaultAttributePresetId: oneOf(ATTRIBUTE_PRESETS).optional(),
    registrationAuthorities: uniqueStrings(LIMITS.registrationAuthorities, 'registration authorities').optional(),
    entityCategoryPolicy: z
      .looseObject(
        {
          defaultDecision: oneOf(DECISIONS),
          rules: z
            .array(EntityCategoryRuleInput, { error: 'must be an array' })
            .max(LIMITS.rules, `must list at most ${LIMITS.rules} rules`),
        },
        { error: 'must be an object' },
      )
      .optional(),
  },
  { error: 'must be an object' },
);
export type RuntimeResolutionInput = z.output<typeof RuntimeResolutionInput>;

/**
 * The operator's part of `polling`. The poller's fields (nextRefreshAt, etag, sourceState, …)
 * may be sent back as they were read (a GET then PUT round trip) and are ignored: they are the
 * poller's, and an update resets them.
 */
export const PollingInput = z.looseObject(
  {
    mode: oneOf(POLLING_MODES),
    intervalSeconds: int(LIMITS.intervalSeconds.min, LIMITS.intervalSeconds.max),
  },
  { error: 'must be an object' },
);

export const ProtocolPayloadInput = z.looseObject(
  {
    description: text(LIMITS.description).nullable().optional(),
    metadataUrl: text(LIMITS.url, 1).nullable().optional(),
    metadataUrlPatterns: z
      .array(text(LIMITS.url, 1), { error: 'must be an array of strings' })
      .max(LIMITS.metadataUrlPatterns, `must list at most ${LIMITS.metadataUrlPatterns} patterns`)
      .optional(),
    policy: oneOf(POLICIES).optional(),
    polling: PollingInput.optional(),
    runtimeResolution: RuntimeResolutionInput.optional(),
  },
  { error: 'must be an object' },
);
export type ProtocolPayloadInput = z.output<typeof ProtocolPayloadInput>;

/** A pinned signing certificate: a PEM string, or an object with `pem` (what GET returns). */
export const CertificateInput = z.union([text(20_000, 1), z.looseObject({ pem: text(20_000, 1) })], {
  error: 'must be a PEM certificate or an object with pem',
});

export const TrustSourceCreateInput = z.looseObject({
  sourceType: oneOf(TRUST_SOURCE_TYPES),
  sourceKey: operatorKey,
  displayName: text(LIMITS.displayName, 1),
  lifecycleState: oneOf(LIFECYCLE_STATES).optional(),
  protocolPayload: ProtocolPayloadInput.optional(),
  certificates: z
    .array(CertificateInput, { error: 'must be an array' })
    .max(LIMITS.certificates, `must list at most ${LIMITS.certificates} certificates`)
    .optional(),
});
export type TrustSourceCreateInput = z.output<typeof TrustSourceCreateInput>;

/** PUT: `expectedUpdatedAt` and any of the create fields; what is omitted keeps its value. */
export const TrustSourceUpdateInput = TrustSourceCreateInput.partial().extend({
  expectedUpdatedAt: z.number({ error: 'is required: the updatedAt you last read' }).int('must be an integer'),
});
export type TrustSourceUpdateInput = z.output<typeof TrustSourceUpdateInput>;

export const PollingView = z.looseObject({
  mode: z.enum(POLLING_MODES),
  intervalSeconds: z.number().int(),
  nextRefreshAt: z.number().int().optional(),
  lastAttemptAt: z.number().int().optional(),
  lastSuccessAt: z.number().int().optional(),
  consecutiveFailures: z.number().int().optional(),
  sourceState: z.enum(SOURCE_STATES).optional(),
  lastErrorCode: z.string().optional(),
  etag: z.string().optional(),
  lastModified: z.string().optional(),
  validatorSourceUrl: z.string().optional(),
  acceptedValidUntil: z.string().optional(),
  suspendedByMetadataSync: z.boolean().optional(),
});

export const TrustSourceView = z.looseObject({
  id: z.string(),
  tenantId: z.string(),
  sourceType: z.enum(TRUST_SOURCE_TYPES),
  sourceKey: z.string(),
  displayName: z.string(),
  lifecycleState: z.string(),
  protocolPayload: z
    .looseObject({
      description: z.string().nullable().optional(),
      metadataUrl: z.string().nullable().optional(),
      metadataUrlPatterns: z.array(z.string()).optional(),
      policy: z.enum(POLICIES).optional(),
      polling: PollingView.optional(),
      runtimeResolution: z.looseObject({ mode: z.enum(RESOLUTION_MODES), roles: z.array(z.enum(ROLES)) }).optional(),
    })
    .optional(),
  certificates: z.array(z.looseObject({})).optional(),
  createdAt: z.number().int().optional(),
  updatedAt: z.number().int().optional(),
  snapshotHash: z.string().optional(),
});

// ---- operational notification states -------------------------------------------------------

export const ResolveNotificationInput = z.looseObject({
  assignedTo: text(200, 1).nullable().optional(),
});

export const NotificationTransitionResult = z.looseObject({
  result: z.looseObject({
    id: z.string(),
    previousState: z.string().optional(),
    state: z.string(),
    idempotent: z.boolean().optional(),
  }),
});

/** A state as the API and the CLI show it: the one declaration (its service view is the type inferred here). */
const NotificationStateFields = z.object({
  id: z.string(),
  tenantId: z.string(),
  condition: z.string(),
  subjectType: z.string(),
  subjectId: z.string(),
  state: z.string(),
  details: freeObject,
  assignedTo: z.string().nullable(),
  resolution: z.string().nullable(),
  occurrences: z.number().int(),
  raisedAt: z.number().int(),
  updatedAt: z.number().int(),
  resolvedAt: z.number().int().nullable(),
});
export const NotificationStateView = NotificationStateFields.loose();
export type NotificationStateView = z.output<typeof NotificationStateFields>;
