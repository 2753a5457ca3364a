/**
 * The checks of a user's custom claim values against the tenant's schemas, shared by the PUT,
 * the PATCH's merge (custom-claims.ts) and the import (docs/directory.md, "Users: import and
 * export"). Pure: the caller reads the schemas and writes the rows.
 */
import { ApiError } from '../errors.js';
import type { CustomClaimSchemaRow, CustomClaimValueRow } from '../repositories/index.js';
import { validateClaimValue } from '../schemas/claims.js';

/**
 * Each of `claims`' keys must name an active custom schema (unknown_claim, system_claim,
 * inactive_claim) and each non-null value fit it (invalid_claim_value): the rows to store.
 */
export function checkValues(schemas: ReadonlyMap<string, CustomClaimSchemaRow>, claims: Record<string, unknown>) {
  const rows: CustomClaimValueRow[] = [];
  const stored: Record<string, unknown> = {};
  for (const key of Object.keys(claims)) {
    const s = schemas.get(key);
    if (!s) throw claimRefusal('unknown_claim', key, 'is not a claim schema of this tenant');
    if (s.is_system === 1) throw claimRefusal('system_claim', key, "is a system claim; its value is the user record's");
    if (s.is_active === 0) throw claimRefusal('inactive_claim', key, 'is an inactive claim schema');
    if (claims[key] === null) continue;
    const value = validateClaimValue(s, claims[key]);
    stored[key] = value;
    rows.push({ field_key: key, value_json: JSON.stringify(value) });
  }
  return { rows, stored };
}

export function claimRefusal(code: string, key: string, what: string): ApiError {
  return new ApiError(400, code, `claims.${key}: ${JSON.stringify(key)} ${what}.`, {
    details: [{ field: `claims.${key}`, message: what }],
  });
}

/**
 * An imported record's values, checked as a PUT checks them but merged: only the keys given
 * change, a null clears one. A new user (`creating`) must have every active required schema.
 */
export function importedValues(
  schemas: ReadonlyMap<string, CustomClaimSchemaRow>,
  claims: Record<string, unknown>,
  creating: boolean,
): { rows: CustomClaimValueRow[]; cleared: string[] } {
  const rows: CustomClaimValueRow[] = [];
  const cleared: string[] = [];
  for (const [key, value] of Object.entries(claims)) {
    const s = schemas.get(key);
    if (!s) throw claimRefusal('unknown_claim', key, 'is not a claim schema of this tenant');
    if (s.is_system === 1) throw claimRefusal('system_claim', key, "is a system claim; its value is the user record's");
    if (s.is_active === 0) throw claimRefusal('inactive_claim', key, 'is an inactive claim schema');
    if (value === null) {
      if (s.is_required === 1) throw claimRefusal('missing_required_claim', key, 'is required');
      cleared.push(key);
    } else rows.push({ field_key: key, value_json: JSON.stringify(validateClaimValue(s, value)) });
  }
  for (const s of creating ? schemas.values() : []) {
    if (s.is_system === 0 && s.is_active === 1 && s.is_required === 1 && !rows.some((r) => r.field_key === s.field_key))
      throw claimRefusal('missing_required_claim', s.field_key, 'is required');
  }
  return { rows, cleared };
}
