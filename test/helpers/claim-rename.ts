/**
 * Seeding for the custom claim rename tests: many users with a stored claim value, written in
 * a few big transactions (multi-row INSERTs) straight into the database, and the HTTP calls.
 */
import type { Database } from '../../shared/db/index.js';
import { api, type ApiAnswer } from './api.js';
import { until } from './poll.js';

export const actor = { type: 'system' as const, id: 'test' };

/** Zero-padded, so user-id order is numeric order. */
export const userId = (i: number): string => `usr_rn${String(i).padStart(6, '0')}`;
export const valueOf = (i: number): string => JSON.stringify(`value-${i}`);

/** A claim schema row, as the custom claims service writes it. */
export async function insertSchema(
  ds: Database,
  tenantId: string,
  id: string,
  fieldKey: string,
  opts: { system?: boolean; bindings?: Record<string, unknown>[] } = {},
): Promise<void> {
  const now = Date.now();
  await ds.query(
    `INSERT INTO custom_claim_schemas (id, tenant_id, field_key, display_label, field_type, cardinality, is_pii,
      is_required, is_active, is_system, operation_status, field_usage_bindings, created_at, updated_at)
    VALUES (?, ?, ?, ?, 'string', 'one', 0, 0, 1, ?, 'active', ?, ?, ?)`,
    [id, tenantId, fieldKey, fieldKey, opts.system ? 1 : 0, JSON.stringify(opts.bindings ?? []), now, now],
  );
}

/** `count` users (ids userId(from)…) of the tenant, each with `valueOf(i)` under `fieldKey`. */
export async function seedValues(
  ds: Database,
  tenantId: string,
  fieldKey: string,
  count: number,
  from = 0,
): Promise<void> {
  const now = Date.now();
  const CHUNK = 500;
  await ds.transaction(async (tx) => {
    for (let start = from; start < from + count; start += CHUNK) {
      const ids = Array.from({ length: Math.min(CHUNK, from + count - start) }, (_, k) => start + k);
      await tx.query(
        `INSERT INTO users (id, tenant_id, email, name, status, created_at, updated_at) VALUES ${ids
          .map(() => "(?, ?, ?, ?, 'active', ?, ?)")
          .join(', ')}`,
        ids.flatMap((i) => [userId(i), tenantId, `u${i}@rename.example.test`, `User ${i}`, now, now]),
      );
      await tx.query(
        `INSERT INTO custom_claim_values (tenant_id, user_id, field_key, value_json, updated_at) VALUES ${ids
          .map(() => '(?, ?, ?, ?, ?)')
          .join(', ')}`,
        ids.flatMap((i) => [tenantId, userId(i), fieldKey, valueOf(i), now]),
      );
    }
  });
}

/** The stored values under `fieldKey`, by user id. */
export async function valuesUnder(ds: Database, tenantId: string, fieldKey: string): Promise<Map<string, string>> {
  const rows = await ds.query<{ user_id: string; value_json: string }[]>(
    'SELECT user_id, value_json FROM custom_claim_values WHERE tenant_id = ? AND field_key = ?',
    [tenantId, fieldKey],
  );
  return new Map(rows.map((r) => [r.user_id, String(r.value_json)]));
}

export async function renameCall(
  base: string,
  method: 'PATCH' | 'GET',
  token: string | undefined,
  schemaId: string,
  body?: unknown,
  tenantId?: string,
): Promise<ApiAnswer> {
  const q = tenantId ? `?tenant_id=${encodeURIComponent(tenantId)}` : '';
  const path = `/api/admin/custom-claims/${encodeURIComponent(schemaId)}/rename${q}`;
  return api(base, method, path, { token, ...(typeof body === 'string' ? { raw: body } : { body }) });
}

/** Polls GET …/rename until `pred` holds for the answer (or fails after `timeoutMs`). */
export async function pollRename(
  base: string,
  token: string,
  schemaId: string,
  pred: (b: any) => boolean,
  timeoutMs = 60_000,
  everyMs = 50,
): Promise<any> {
  let last: ApiAnswer | undefined;
  await until(
    async () => {
      last = await renameCall(base, 'GET', token, schemaId);
      return last.status === 200 && pred(last.body);
    },
    {
      timeoutMs,
      intervalMs: everyMs,
      what: () => `the rename in the expected state (last answer: ${JSON.stringify(last?.body)})`,
    },
  );
  return last!.body;
}
