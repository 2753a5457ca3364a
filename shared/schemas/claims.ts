/**
 * Custom claim schemas (docs/claims.md): the one place that says which claim keys an operator
 * may define (the pattern and the reserved names, shared by create and rename), the create
 * body, and the validation of a user's values against a schema.
 */
import { z } from 'zod';
import { ApiError } from '../errors.js';
import { displayName, email, scopeToken } from './common.js';
import { SCOPE_CLAIMS } from './standard-claims.js';

/**
 * A claim key: lower-case ASCII letter first, then lower-case letters, digits and underscores,
 * at most 64 characters. One spelling per claim, safe as a JSON member name in every consumer,
 * and the same key a relying party reads from the token.
 */
export const FIELD_KEY_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
export const FIELD_KEY_MAX = 64;

/** RFC 7519 §4.1 registered claim names. */
const REGISTERED_JWT_CLAIMS = ['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti'];
/** OpenID Connect Core 1.0 §5.1 standard claims: `sub` and every claim a scope releases (§5.4). */
const OIDC_STANDARD_CLAIMS = ['sub', ...Object.values(SCOPE_CLAIMS).flat()];
/**
 * Claims with a protocol meaning in the tokens this service issues: OIDC Core §2 and §3.1.3.6
 * (auth_time nonce acr amr azp at_hash c_hash), OIDC Front/Back-Channel Logout (sid),
 * RFC 8693 §4 (scope client_id act may_act), RFC 7800 §3 (cnf), RFC 9396 (authorization_details),
 * RFC 8707 §2 (resource, in exchanged tokens), RFC 9493 (sub_id, the issuer and subject of a
 * token exchanged from an ID-JAG, docs/token-exchange.md), the ID-JAG draft's aud_tenant (in the ID-JAGs
 * this service issues), RFC 7662 §2.2 (active and token_type, which
 * the introspection answer puts beside the token's claims), this service's own
 * (tenant_id; tenant and fid in exchanged and refreshed tokens; agent_grant_id and
 * agent_grant_gen in tokens bound to an agent grant, docs/agents.md) and FAPI's s_hash.
 * A claim the service starts to emit belongs here: test/shared/reserved-claims.test.ts
 * collects the names of every token, UserInfo and introspection answer and fails on any that
 * is not reserved.
 */
const PROTOCOL_CLAIMS = [
  'auth_time',
  'nonce',
  'acr',
  'amr',
  'azp',
  'at_hash',
  'c_hash',
  's_hash',
  'sid',
  'scope',
  'client_id',
  'cnf',
  'act',
  'may_act',
  'authorization_details',
  'tenant_id',
  'tenant',
  'fid',
  'resource',
  'active',
  'token_type',
  'agent_grant_id',
  'agent_grant_gen',
  'sub_id',
  'aud_tenant',
];

/** Every claim name a custom claim schema may not take, at create or at rename. */
export const RESERVED_CLAIM_NAMES: ReadonlySet<string> = new Set([
  ...REGISTERED_JWT_CLAIMS,
  ...OIDC_STANDARD_CLAIMS,
  ...PROTOCOL_CLAIMS,
]);

export const isReservedClaimName = (key: string): boolean => RESERVED_CLAIM_NAMES.has(key);

/**
 * Refuses a key an operator may not give a claim: 400 `invalid_claim_key` when it does not
 * match FIELD_KEY_PATTERN, 400 `reserved_claim_key` when it is a reserved name. `field` names
 * the request field in the message (`field_key` at create, `new_field_key` at rename).
 */
export function assertFieldKey(key: unknown, field = 'field_key'): string {
  if (typeof key !== 'string' || !FIELD_KEY_PATTERN.test(key)) {
    throw new ApiError(
      400,
      'invalid_claim_key',
      `${field}: must match ${FIELD_KEY_PATTERN.source} (a lower-case letter, then lower-case letters, ` +
        `digits or underscores; at most ${FIELD_KEY_MAX} characters)`,
      { details: [{ field, message: 'invalid claim key' }] },
    );
  }
  if (isReservedClaimName(key)) {
    throw new ApiError(
      400,
      'reserved_claim_key',
      `${field}: ${JSON.stringify(key)} is a reserved claim name ` +
        '(registered JWT claim, OpenID Connect standard claim or protocol claim)',
      { details: [{ field, message: 'reserved claim name' }] },
    );
  }
  return key;
}

export const FIELD_TYPES = ['string', 'number', 'boolean', 'date', 'email'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
export const CARDINALITIES = ['one', 'many'] as const;
export type Cardinality = (typeof CARDINALITIES)[number];
export const TOKEN_TYPES = ['id_token', 'access_token', 'userinfo'] as const;
export type ClaimTokenType = (typeof TOKEN_TYPES)[number];

export const LIMITS = {
  /** Custom (non-system) schemas per tenant. */
  schemasPerTenant: 200,
  bindings: 10,
  scopesPerBinding: 20,
  /** Items of a `many` value. */
  manyItems: 100,
  /** Characters of one string value. */
  stringLength: 1024,
  /** Claims in one PUT. */
  claimsPerWrite: 200,
} as const;

/**
 * One binding: the claim goes into `token_type` when no `scopes` are named, or when one of them
 * was granted. Extensible: other members are kept and returned.
 */
export const FieldUsageBinding = z.looseObject({
  token_type: z.enum(TOKEN_TYPES, { error: `must be one of: ${TOKEN_TYPES.join(', ')}` }),
  scopes: z.array(scopeToken).min(1).max(LIMITS.scopesPerBinding).optional(),
});
export type FieldUsageBinding = z.infer<typeof FieldUsageBinding>;

/** A flag as the record shows it (0 or 1); true/false are accepted and stored as 1/0. */
const flag = z
  .union([z.literal(0), z.literal(1), z.boolean()], { error: 'must be 0 or 1 (or true/false)' })
  .transform((v) => (v === true || v === 1 ? 1 : 0));

/**
 * POST /api/admin/custom-claims. The key is checked by assertFieldKey (its own error codes)
 * before this schema runs; extensible like the record, so extra members are ignored.
 */
export const CreateCustomClaimInput = z.looseObject({
  field_key: z.string(),
  display_label: displayName,
  field_type: z.enum(FIELD_TYPES, { error: `must be one of: ${FIELD_TYPES.join(', ')}` }),
  cardinality: z.enum(CARDINALITIES, { error: `must be one of: ${CARDINALITIES.join(', ')}` }).default('one'),
  is_pii: flag.default(0),
  is_required: flag.default(0),
  is_active: flag.default(1),
  field_usage_bindings: z.array(FieldUsageBinding).max(LIMITS.bindings).default([]),
});
export type CreateCustomClaimInput = z.infer<typeof CreateCustomClaimInput>;

/**
 * PATCH /api/admin/custom-claims/{id}: what may change after creation. The key changes only by
 * rename; the type and cardinality never (the stored values were validated against them).
 */
export const UpdateCustomClaimInput = z
  .looseObject({
    display_label: displayName.optional(),
    is_pii: flag.optional(),
    is_required: flag.optional(),
    is_active: flag.optional(),
    field_usage_bindings: z.array(FieldUsageBinding).max(LIMITS.bindings).optional(),
  })
  .superRefine((v, ctx) => {
    for (const k of ['field_key', 'field_type', 'cardinality', 'is_system', 'operation_status'] as const) {
      if (k in v) {
        ctx.addIssue({
          code: 'custom',
          path: [k],
          message:
            k === 'field_key'
              ? 'cannot be changed here: a key changes only by rename'
              : 'cannot be changed after the schema is created',
        });
      }
    }
    const changes = ['display_label', 'is_pii', 'is_required', 'is_active', 'field_usage_bindings'];
    if (!changes.some((k) => v[k] !== undefined)) {
      ctx.addIssue({ code: 'custom', message: `name at least one of: ${changes.join(', ')}` });
    }
  });
export type UpdateCustomClaimInput = z.infer<typeof UpdateCustomClaimInput>;

/** The spec's Custom claim schema record, as every endpoint returns it (plus `is_system`). */
export const CustomClaimSchemaRecord = z.looseObject({
  id: z.string(),
  tenant_id: z.string(),
  field_key: z.string(),
  display_label: z.string(),
  field_type: z.string(),
  cardinality: z.string(),
  is_pii: z.number().int(),
  is_required: z.number().int().optional(),
  is_active: z.number().int(),
  is_system: z.number().int().optional(),
  operation_status: z.string().optional(),
  field_usage_bindings: z.array(z.looseObject({})).optional(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});

/** PUT …/users/{id}/claims: `{claims: {key: value}}`; the whole set of the user's custom claim values. */
export const SetUserClaimsInput = z.looseObject({
  claims: z.record(z.string(), z.unknown(), { error: 'must be an object of claim key to value' }),
});

/** A calendar date, ISO 8601 extended form (RFC 3339 full-date): YYYY-MM-DD, a real day. */
export function isIsoDate(v: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

/** Why one scalar is not a valid value of `type`, or undefined; `out` receives the value to store. */
function scalarProblem(type: FieldType, v: unknown, out: (x: unknown) => void): string | undefined {
  switch (type) {
    case 'string':
      if (typeof v !== 'string') return 'must be a string';
      if (v.length > LIMITS.stringLength) return `must be at most ${LIMITS.stringLength} characters`;
      out(v);
      return undefined;
    case 'number':
      if (typeof v !== 'number' || !Number.isFinite(v)) return 'must be a finite number';
      out(v);
      return undefined;
    case 'boolean':
      if (typeof v !== 'boolean') return 'must be true or false';
      out(v);
      return undefined;
    case 'date':
      if (typeof v !== 'string' || !isIsoDate(v)) return 'must be an ISO 8601 date (YYYY-MM-DD)';
      out(v);
      return undefined;
    case 'email': {
      const r = email.safeParse(v);
      if (!r.success) return 'must be an email address';
      out(r.data);
      return undefined;
    }
  }
}

/**
 * Validates one value against a schema's type and cardinality and returns the value to store
 * (email addresses trimmed and lower-cased), or throws 400 `invalid_claim_value` naming the claim.
 * `many` is a JSON array of at most LIMITS.manyItems values of the type.
 */
export function validateClaimValue(
  schema: { field_key: string; field_type: string; cardinality: string },
  value: unknown,
): unknown {
  const type = schema.field_type as FieldType;
  const fail = (msg: string) =>
    new ApiError(400, 'invalid_claim_value', `claims.${schema.field_key}: ${msg}`, {
      details: [{ field: `claims.${schema.field_key}`, message: msg }],
    });
  if (schema.cardinality === 'many') {
    if (!Array.isArray(value)) throw fail(`must be an array of ${type} values (cardinality many)`);
    if (value.length > LIMITS.manyItems) throw fail(`must have at most ${LIMITS.manyItems} items`);
    return value.map((item, i) => {
      let stored: unknown;
      const p = scalarProblem(type, item, (x) => (stored = x));
      if (p) throw fail(`item ${i} ${p}`);
      return stored;
    });
  }
  let stored: unknown;
  const p = scalarProblem(type, value, (x) => (stored = x));
  if (p) throw fail(p);
  return stored;
}
