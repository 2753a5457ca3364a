/** How `iam claims …` and `iam users claims …` print a claim schema and a user's values. */
import type { CustomClaimSchema, UserClaims } from '../shared/services/custom-claims.js';
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
