/**
 * The record of the directory's import and export (docs/directory.md, "Users: import and
 * export"), in its two formats: a JSON object per line (JSONL) and a CSV row under a header.
 * The same record goes into POST /api/admin/tenants/{tenantId}/users/import.
 */
import { z } from 'zod';
import { ApiError } from '../../errors.js';
import type { CustomClaimSchemaRow } from '../../repositories/index.js';
import { LIMITS } from '../../schemas/claims.js';
import { displayName, email } from '../../schemas/common.js';
import { issuesOf } from '../../schemas/validate.js';

export const IMPORT_FORMATS = ['jsonl', 'csv'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** One user: the address names it (idempotence by email); everything else is optional. */
export const ImportRecordInput = z.strictObject({
  email,
  name: displayName.optional(),
  email_verified: z.boolean().optional(),
  /** Custom claim values by key; null clears one (docs/claims.md). */
  claims: z
    .record(z.string(), z.unknown())
    .refine((c) => Object.keys(c).length <= LIMITS.claimsPerWrite, `at most ${LIMITS.claimsPerWrite} claims`)
    .optional(),
  /** A link to an upstream subject (OIDC Core §5.7: iss + sub), the issuer a provider of the tenant. */
  upstream: z
    .strictObject({
      issuer: z.string().trim().min(1).max(2048),
      subject: z.string().min(1).max(255),
    })
    .optional(),
});
export type ImportRecord = z.output<typeof ImportRecordInput>;

/**
 * One record as read, before the tenant's rules: `position` is its line in the file (the CLI)
 * or its index in the batch (the API); `error` why it could not be read. A CSV row's claim
 * cells stay text (`cells`) until the schemas say each one's type.
 */
export interface ReadRecord {
  position: number;
  record?: ImportRecord;
  cells?: Record<string, string>;
  error?: string;
  /** The address as written, to name a refused record by. */
  email?: string;
}

/** Checks one JSON value against the record shape. */
export function readObject(position: number, value: unknown): ReadRecord {
  const r = ImportRecordInput.safeParse(value);
  if (r.success) return { position, record: r.data };
  const first = issuesOf(r.error)[0];
  const address = value && typeof value === 'object' ? (value as { email?: unknown }).email : undefined;
  return {
    position,
    error: `${first.field}: ${first.message}`,
    ...(typeof address === 'string' ? { email: address } : {}),
  };
}

/** Parses one JSONL line (blank lines are skipped by the reader). */
export function readJsonLine(position: number, line: string): ReadRecord {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { position, error: 'not a JSON object' };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { position, error: 'not a JSON object' };
  return readObject(position, value);
}

// ---- CSV ----

export const CSV_FIXED = ['email', 'name', 'email_verified', 'upstream_issuer', 'upstream_subject'] as const;
export const CLAIM_PREFIX = 'claim.';

/** Checks a CSV header: the fixed columns (email required) and `claim.<key>` ones, each once. */
export function checkCsvHeader(header: string[]): void {
  const refuse = (msg: string) => new ApiError(400, 'invalid_import_header', `CSV header: ${msg}`);
  const seen = new Set<string>();
  for (const h of header) {
    if (seen.has(h)) throw refuse(`column ${JSON.stringify(h)} appears twice`);
    seen.add(h);
    if (
      !(CSV_FIXED as readonly string[]).includes(h) &&
      !(h.startsWith(CLAIM_PREFIX) && h.length > CLAIM_PREFIX.length)
    )
      throw refuse(`unknown column ${JSON.stringify(h)} (expected ${CSV_FIXED.join(', ')} or claim.<key>)`);
  }
  if (!seen.has('email')) throw refuse('the email column is required');
  if (seen.has('upstream_issuer') !== seen.has('upstream_subject'))
    throw refuse('upstream_issuer and upstream_subject go together');
}

/** One CSV row (already split, header checked): an empty cell is a field not given. */
export function readCsvRow(position: number, header: string[], row: string[]): ReadRecord {
  if (row.length !== header.length)
    return { position, error: `has ${row.length} fields, the header has ${header.length}` };
  const obj: Record<string, unknown> = {};
  const cells: Record<string, string> = {};
  let issuer = '';
  let subject = '';
  header.forEach((h, i) => {
    const v = row[i];
    if (v === '') return;
    if (h === 'upstream_issuer') issuer = v;
    else if (h === 'upstream_subject') subject = v;
    else if (h === 'email_verified') obj.email_verified = v === 'true' ? true : v === 'false' ? false : v;
    else if (h.startsWith(CLAIM_PREFIX)) cells[h.slice(CLAIM_PREFIX.length)] = v;
    else obj[h] = v;
  });
  if (issuer || subject) obj.upstream = { issuer, subject };
  const r = readObject(position, obj);
  return r.record ? { ...r, cells } : r;
}

/**
 * A CSV claim cell as its schema's value: a `many` claim is a JSON array, a number a decimal,
 * a boolean `true`/`false`; string, date and email values are the text itself. A cell that
 * does not convert is passed on as text for the schema's check to refuse with its message.
 */
export function cellValue(schema: Pick<CustomClaimSchemaRow, 'field_type' | 'cardinality'> | undefined, v: string) {
  if (!schema) return v;
  if (schema.cardinality === 'many') {
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return v;
    }
  }
  if (schema.field_type === 'number') return /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(v.trim()) ? Number(v) : v;
  if (schema.field_type === 'boolean') return v === 'true' ? true : v === 'false' ? false : v;
  return v;
}

/** The inverse of cellValue, for the export. */
export function cellText(schema: Pick<CustomClaimSchemaRow, 'cardinality'>, value: unknown): string {
  if (schema.cardinality === 'many') return JSON.stringify(value);
  return typeof value === 'string' ? value : String(value);
}
