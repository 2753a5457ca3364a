/** How `iam claims …` and `iam users claims …` print a claim schema and a user's values. */
import type { CustomClaimSchema, UserClaims } from '../shared/services/custom-claims.js';
import { TOKEN_TYPES } from '../shared/schemas/claims.js';
import { CliFailure } from './base.js';
import { fields, table, time } from './format.js';

/** `id_token`, or `userinfo[profile,email]` when the binding names scopes. */
export function describeBindings(bindings: readonly Record<string, unknown>[]): string {
  if (!bindings.length) return '(none: not emitted)';
  return bindings
    .map((b) => {
      const scopes = Array.isArray(b.scopes) ? (b.scopes as string[]) : [];
      return scopes.length ? `${String(b.token_type)}[${scopes.join(',')}]` : String(b.token_type);
    })
    .join(' ');
}

const flags = (s: CustomClaimSchema): string =>
  [s.is_system ? 'system' : '', s.is_pii ? 'pii' : '', s.is_required ? 'required' : '', s.is_active ? '' : 'inactive']
    .filter(Boolean)
    .join(',') || '-';

export function schemaFields(s: CustomClaimSchema): string {
  return fields([
    ['id', s.id],
    ['tenant', s.tenant_id],
    ['key', s.field_key],
    ['label', s.display_label],
    ['type', `${s.field_type}${s.cardinality === 'many' ? '[] (many)' : ''}`],
    ['flags', flags(s)],
    ['status', s.operation_status],
    ['bindings', describeBindings(s.field_usage_bindings)],
    ['created', time(s.created_at)],
    ['updated', time(s.updated_at)],
  ]);
}

export function schemaTable(rows: readonly CustomClaimSchema[], tenantId: string): string {
  return table(
    rows,
    [
      { header: 'id', value: (s) => s.id },
      { header: 'key', value: (s) => s.field_key },
      { header: 'type', value: (s) => `${s.field_type}${s.cardinality === 'many' ? '[]' : ''}` },
      { header: 'flags', value: flags },
      { header: 'status', value: (s) => s.operation_status },
      { header: 'bindings', value: (s) => describeBindings(s.field_usage_bindings) },
      { header: 'label', value: (s) => s.display_label },
    ],
    `No claim schemas in tenant ${tenantId}.`,
  );
}

export function userClaimsFields(c: UserClaims): string {
  const pairs: [string, string][] = [['user', c.user_id]];
  for (const [k, v] of Object.entries(c.system_claims)) pairs.push([`${k} (system)`, JSON.stringify(v)]);
  const custom = Object.entries(c.claims);
  for (const [k, v] of custom) pairs.push([k, JSON.stringify(v)]);
  if (!custom.length) pairs.push(['(custom)', 'no values']);
  return fields(pairs);
}

/** `id_token` or `userinfo:profile,email` → a field usage binding. */
export function parseBinding(v: string): Record<string, unknown> {
  const [type, scopes] = v.split(':', 2);
  if (!(TOKEN_TYPES as readonly string[]).includes(type)) {
    throw new CliFailure(
      'invalid_request',
      `invalid --bind ${JSON.stringify(v)}: the token type must be one of ${TOKEN_TYPES.join(', ')}`,
    );
  }
  const list = scopes === undefined ? [] : scopes.split(',').filter(Boolean);
  return { token_type: type, ...(list.length ? { scopes: list } : {}) };
}

/**
 * The value of `--set key=value` (`iam users claims set`) or `--claim key=value` (`iam users
 * update`) as the schema's type reads it: a number or true/false for those types, the text
 * itself for string, email and date; for a `many` schema a JSON array, or comma-separated
 * items each read the same way.
 */
export function readClaimValue(schema: CustomClaimSchema | undefined, key: string, raw: string, flag: string): unknown {
  if (!schema) return raw;
  const one = (s: string): unknown => {
    if (schema.field_type === 'number') return s.trim() === '' ? s : Number.isFinite(Number(s)) ? Number(s) : s;
    if (schema.field_type === 'boolean') return s === 'true' ? true : s === 'false' ? false : s;
    return s;
  };
  if (schema.cardinality !== 'many') return one(raw);
  if (raw.trim().startsWith('[')) {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      throw new CliFailure('invalid_request', `invalid ${flag} ${key}: not a JSON array`);
    }
  }
  return raw === '' ? [] : raw.split(',').map(one);
}
