/**
 * Personal data exports (docs/data-export.md). An export of at most INLINE_ROW_LIMIT rows is
 * built during the request; a larger one is stored as a pending `data_exports` row and built
 * by the `data-export` job. Either way the rows are read a page at a time by (time, id) keyset
 * and serialised straight into text parts, so no more than one page of row objects is alive at
 * once. Only the user's own rows, scoped by tenant and user, and never a secret, hash or
 * session identifier.
 */
import type { DataSource } from 'typeorm';
import { newId } from '../crypto.js';
import { all, exec, json, num, one, type Db } from '../db/sql.js';

export const EXPORT_SECTIONS = ['profile', 'consents', 'sessions', 'auth_history', 'custom_claims'] as const;
export type ExportSection = (typeof EXPORT_SECTIONS)[number];
export type ExportFormat = 'json' | 'csv';

/** Exports with at most this many rows (profile counts as one) are answered inline. */
export const INLINE_ROW_LIMIT = 1_000;
/** How long a pending or built export is kept (and pollable) before the purge job deletes it. */
export const EXPORT_RETENTION_MS = 24 * 3_600_000;
/** Rows read per query while building. */
export const PAGE_SIZE = 1_000;

type Row = Record<string, unknown>;

interface PagedSection {
  table: string;
  time: string;
  select: string;
  /** Column names in output order (the CSV header and the JSON keys). */
  columns: string[];
  map(r: Row): unknown[];
}

const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const n = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));

const PAGED: Record<'consents' | 'sessions' | 'auth_history', PagedSection> = {
  consents: {
    table: 'consents',
    time: 'granted_at',
    select:
      'c.id, c.granted_at, c.client_id, cl.name AS client_name, c.scopes, c.expires_at, c.revoked_at FROM consents c LEFT JOIN clients cl ON cl.tenant_id = c.tenant_id AND cl.client_id = c.client_id',
    columns: ['clientId', 'clientName', 'scopes', 'grantedAt', 'expiresAt', 'revokedAt'],
    map: (r) => [
      str(r.client_id),
      str(r.client_name),
      json<string[]>(r.scopes),
      n(r.granted_at),
      n(r.expires_at),
      n(r.revoked_at),
    ],
  },
  sessions: {
    // The session id is the hash of the cookie: never exported.
    table: 'sessions',
    time: 'created_at',
    select: 'c.id, c.created_at, c.last_seen_at, c.expires_at, c.revoked_at, c.user_agent, c.ip FROM sessions c',
    columns: ['created_at', 'last_seen_at', 'expires_at', 'revoked_at', 'user_agent', 'ip'],
    map: (r) => [n(r.created_at), n(r.last_seen_at), n(r.expires_at), n(r.revoked_at), str(r.user_agent), str(r.ip)],
  },
  auth_history: {
    table: 'auth_history',
    time: 'created_at',
    select: 'c.id, c.created_at, c.event, c.outcome, c.reason, c.client_id, c.ip, c.user_agent FROM auth_history c',
    columns: ['event', 'outcome', 'reason', 'client_id', 'ip', 'user_agent', 'created_at'],
    map: (r) => [
      str(r.event),
      str(r.outcome),
      str(r.reason),
      str(r.client_id),
      str(r.ip),
      str(r.user_agent),
      n(r.created_at),
    ],
  },
};

const PROFILE_COLUMNS = ['id', 'email', 'name', 'status', 'created_at'];

/** Rows the export would contain: what decides inline or pending. */
export async function countExportRows(
  db: Db,
  tenantId: string,
  userId: string,
  sections: readonly ExportSection[],
): Promise<number> {
  let total = 0;
  for (const s of sections) {
    if (s === 'profile') total += 1;
    else if (s === 'custom_claims') total += 0;
    else {
      const r = await one<{ n: unknown }>(
        db,
        `SELECT COUNT(*) AS n FROM ${PAGED[s].table} WHERE tenant_id = ? AND user_id = ?`,
        [tenantId, userId],
      );
      total += num(r?.n ?? 0);
    }
  }
  return total;
}

/** Pages through one section's rows by (time, id); `fn` gets each page's mapped rows. */
async function pages(
  db: Db,
  s: PagedSection,
  tenantId: string,
  userId: string,
  fn: (rows: unknown[][]) => void,
  signal?: AbortSignal,
): Promise<void> {
  let after: { t: number; id: string } | undefined;
  for (;;) {
    if (signal?.aborted) throw new Error('export aborted');
    const rows = await all<Row>(
      db,
      `SELECT ${s.select} WHERE c.tenant_id = ? AND c.user_id = ?${after ? ` AND (c.${s.time} > ? OR (c.${s.time} = ? AND c.id > ?))` : ''} ORDER BY c.${s.time}, c.id LIMIT ?`,
      after ? [tenantId, userId, after.t, after.t, after.id, PAGE_SIZE] : [tenantId, userId, PAGE_SIZE],
    );
    if (!rows.length) return;
    fn(rows.map(s.map));
    const last = rows[rows.length - 1];
    after = { t: num(last[s.time]), id: String(last.id) };
    if (rows.length < PAGE_SIZE) return;
  }
}

/** Neutralises spreadsheet formulas (CSV injection): a leading `'` before = + - @ tab CR. */
export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  let s = Array.isArray(v) ? v.join(' ') : String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const csvLine = (cells: unknown[]): string => cells.map(csvCell).join(',') + '\r\n';

/**
 * Builds the export's `data` as JSON text: for `json` an object keyed by section, for `csv`
 * `{ contentType: 'text/csv', csv }`. Returned as text so a stored export is served without
 * being parsed again.
 */
export async function buildExport(
  db: Db,
  tenantId: string,
  userId: string,
  sections: readonly ExportSection[],
  format: ExportFormat,
  signal?: AbortSignal,
): Promise<string> {
  const parts: string[] = [];
  const profileRow = sections.includes('profile')
    ? await one<Row>(db, 'SELECT id, email, name, status, created_at FROM users WHERE tenant_id = ? AND id = ?', [
        tenantId,
        userId,
      ])
    : undefined;
  const profile = profileRow
    ? [
        str(profileRow.id),
        str(profileRow.email),
        str(profileRow.name),
        str(profileRow.status),
        n(profileRow.created_at),
      ]
    : undefined;
  for (const s of EXPORT_SECTIONS) {
    if (!sections.includes(s)) continue;
    if (format === 'csv') {
      parts.push(csvLine([`# ${s}`]));
      if (s === 'profile') {
        parts.push(csvLine(PROFILE_COLUMNS));
        if (profile) parts.push(csvLine(profile));
      } else if (s === 'custom_claims') {
        parts.push(csvLine(['key', 'value']));
      } else {
        parts.push(csvLine(PAGED[s].columns));
        await pages(
          db,
          PAGED[s],
          tenantId,
          userId,
          (rows) => {
            parts.push(rows.map(csvLine).join(''));
          },
          signal,
        );
      }
    } else {
      parts.push(parts.length ? ',' : '{', JSON.stringify(s), ':');
      if (s === 'profile') {
        parts.push(JSON.stringify(profile ? Object.fromEntries(PROFILE_COLUMNS.map((c, i) => [c, profile[i]])) : null));
      } else if (s === 'custom_claims') {
        parts.push('[]');
      } else {
        const cols = PAGED[s].columns;
        let first = true;
        parts.push('[');
        await pages(
          db,
          PAGED[s],
          tenantId,
          userId,
          (rows) => {
            const text = rows.map((r) => JSON.stringify(Object.fromEntries(cols.map((c, i) => [c, r[i]])))).join(',');
            parts.push(first ? text : ',' + text);
            first = false;
          },
          signal,
        );
        parts.push(']');
      }
    }
  }
  if (format === 'csv') return JSON.stringify({ contentType: 'text/csv', csv: parts.join('') });
  if (!parts.length) return '{}';
  parts.push('}');
  return parts.join('');
}

/** The completed shape, composed as text around the stored `data`. */
export function completedBody(requestId: string, format: ExportFormat, data: string, exportedAt: number): string {
  return `{"status":"completed","requestId":${JSON.stringify(requestId)},"format":${JSON.stringify(format)},"data":${data},"exportedAt":${exportedAt}}`;
}

export function pendingBody(requestId: string, estimatedWaitSeconds: number) {
  return {
    status: 'pending' as const,
    requestId,
    message: `poll GET /api/user/data-export/${requestId}`,
    estimatedWaitSeconds,
  };
}

/** A rough guess: the job runs every 2 s and builds tens of thousands of rows a second. */
export const estimateWaitSeconds = (rows: number): number => Math.max(2, Math.ceil(2 + rows / 20_000));

export async function createPendingExport(
  db: Db,
  p: { tenantId: string; userId: string; sections: readonly ExportSection[]; format: ExportFormat; now?: number },
): Promise<string> {
  const id = newId('dex');
  const now = p.now ?? Date.now();
  await exec(
    db,
    'INSERT INTO data_exports (id, tenant_id, user_id, status, format, sections, result, created_at, completed_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, NULL, ?)',
    [id, p.tenantId, p.userId, 'pending', p.format, JSON.stringify(p.sections), now, now + EXPORT_RETENTION_MS],
  );
  return id;
}

export interface ExportRecord {
  id: string;
  status: 'pending' | 'completed' | 'failed';
  format: ExportFormat;
  result: string | null;
  created_at: number;
  completed_at: number | null;
  rows?: number;
}

/** The caller's own, unexpired export, or undefined (another user's id looks unknown). */
export async function findExport(
  db: Db,
  tenantId: string,
  userId: string,
  id: string,
  now = Date.now(),
): Promise<ExportRecord | undefined> {
  const r = await one<Row>(
    db,
    'SELECT id, status, format, result, created_at, completed_at FROM data_exports WHERE id = ? AND tenant_id = ? AND user_id = ? AND expires_at > ?',
    [id, tenantId, userId, now],
  );
  if (!r) return undefined;
  return {
    id: String(r.id),
    status: r.status as ExportRecord['status'],
    format: r.format as ExportFormat,
    result: str(r.result),
    created_at: num(r.created_at),
    completed_at: n(r.completed_at),
  };
}

/**
 * The `data-export` job's work: builds pending exports one at a time, oldest first. Returns
 * how many were built. A failure marks the row `failed` (the user asks again).
 */
export async function buildPendingExports(ds: DataSource, signal?: AbortSignal, max = 20): Promise<number> {
  let done = 0;
  for (let i = 0; i < max && !signal?.aborted; i++) {
    const r = await one<Row>(
      ds,
      'SELECT id, tenant_id, user_id, format, sections FROM data_exports WHERE status = ? ORDER BY created_at, id LIMIT 1',
      ['pending'],
    );
    if (!r) break;
    const id = String(r.id);
    try {
      const data = await buildExport(
        ds,
        String(r.tenant_id),
        String(r.user_id),
        json<ExportSection[]>(r.sections),
        r.format as ExportFormat,
        signal,
      );
      const now = Date.now();
      await exec(
        ds,
        'UPDATE data_exports SET status = ?, result = ?, completed_at = ?, expires_at = ? WHERE id = ? AND status = ?',
        ['completed', data, now, now + EXPORT_RETENTION_MS, id, 'pending'],
      );
      done++;
    } catch (e) {
      if (signal?.aborted) throw e;
      await exec(ds, 'UPDATE data_exports SET status = ?, completed_at = ? WHERE id = ? AND status = ?', [
        'failed',
        Date.now(),
        id,
        'pending',
      ]);
      throw e;
    }
  }
  return done;
}
