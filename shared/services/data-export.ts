/**
 * Personal data exports (docs/data-export.md). An export of at most INLINE_ROW_LIMIT rows is
 * built during the request; a larger one is stored as a pending `data_exports` row and built
 * by the `data-export` job. Either way the rows are read a page at a time by (time, id) keyset
 * and serialised straight into text parts, so no more than one page of row objects is alive at
 * once. Only the user's own rows, scoped by tenant and user, and never a secret, hash or
 * session identifier. The statements are in shared/repositories/exports.ts; this file decides
 * what a section's columns are called and how the export is written.
 */
import { newId } from '../crypto.js';
import { retryTransient, type Database, type Db } from '../db/index.js';
import type { MailQueue } from './auth/codes.js';
import { publicPasskeyRecord } from './auth/passkeys.js';
import { MailTemplateService, type MailComposer } from './mail-templates.js';
import { ExportHousekeeping, Lookups, TenantScope, type PagedExportSection } from '../repositories/index.js';

export const EXPORT_SECTIONS = [
  'profile',
  'consents',
  'sessions',
  'auth_history',
  'custom_claims',
  'passkeys',
] as const;
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
  /** Column names in output order (the CSV header and the JSON keys). */
  columns: string[];
  map: (r: Row) => unknown[];
}

/** A column's value as text: rows hold strings and numbers (anything else is written as JSON). */
const text = (v: unknown): string =>
  typeof v === 'string'
    ? v
    : typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean'
      ? String(v)
      : JSON.stringify(v);
const str = (v: unknown): string | null => (v === null || v === undefined ? null : text(v));
const n = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

const PAGED: Record<PagedExportSection, PagedSection> = {
  consents: {
    columns: ['clientId', 'clientName', 'scopes', 'grantedAt', 'expiresAt', 'revokedAt'],
    map: (r) => [str(r.client_id), str(r.client_name), r.scopes, n(r.granted_at), n(r.expires_at), n(r.revoked_at)],
  },
  sessions: {
    // The session id is the hash of the cookie: never exported.
    columns: ['created_at', 'last_seen_at', 'expires_at', 'revoked_at', 'user_agent', 'ip'],
    map: (r) => [n(r.created_at), n(r.last_seen_at), n(r.expires_at), n(r.revoked_at), str(r.user_agent), str(r.ip)],
  },
  auth_history: {
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

/** The `custom_claims` section: one row per claim value the user holds (docs/claims.md). */
const CUSTOM_CLAIM_COLUMNS = ['key', 'label', 'active', 'value'] as const;
async function customClaimRows(scope: TenantScope, userId: string) {
  return (await scope.customClaims.exportRows(userId)).map((r) => ({
    key: r.field_key,
    label: r.display_label,
    active: r.is_active === 1,
    value: JSON.parse(r.value_json) as unknown,
  }));
}

/**
 * The `passkeys` section: the user's passkeys, public data only (docs/passkeys.md). Never the
 * public key, the signature counter or the user handle: they identify the credential to the
 * service and are of no use to the user.
 */
const PASSKEY_COLUMNS = [
  'id',
  'name',
  'credential_id',
  'device_type',
  'backed_up',
  'transports',
  'aaguid',
  'created_at',
  'last_used_at',
] as const;
async function passkeyRows(scope: TenantScope, userId: string) {
  return (await scope.passkeys.listByUser(userId)).map(publicPasskeyRecord);
}

/** Rows the export would contain: what decides inline or pending. */
export async function countExportRows(
  db: Db,
  tenantId: string,
  userId: string,
  sections: readonly ExportSection[],
): Promise<number> {
  const scope = new TenantScope(db, tenantId);
  let total = 0;
  for (const s of sections) {
    if (s === 'profile') total += 1;
    else if (s === 'custom_claims') total += (await scope.customClaims.exportRows(userId)).length;
    else if (s === 'passkeys') total += (await scope.passkeys.listByUser(userId)).length;
    else total += await scope.exports.countRows(s, userId);
  }
  return total;
}

/** Pages through one section's rows by (time, id); `fn` gets each page's mapped rows. */
async function pages(
  scope: TenantScope,
  section: PagedExportSection,
  userId: string,
  fn: (rows: unknown[][]) => void,
  signal?: AbortSignal,
): Promise<void> {
  let after: { t: number; id: string } | undefined;
  do {
    if (signal?.aborted) throw new Error('export aborted');
    const page = await scope.exports.sectionPage(section, userId, PAGE_SIZE, after);
    if (!page.rows.length) return;
    fn(page.rows.map(PAGED[section].map));
    after = page.next;
  } while (after);
}

/** Neutralises spreadsheet formulas (CSV injection): a leading `'` before = + - @ tab CR. */
export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  let s = Array.isArray(v) ? v.join(' ') : text(v);
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
  const scope = new TenantScope(db, tenantId);
  const profileRow = sections.includes('profile') ? await scope.exports.profile(userId) : undefined;
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
        parts.push(csvLine([...CUSTOM_CLAIM_COLUMNS]));
        for (const r of await customClaimRows(scope, userId))
          parts.push(csvLine(CUSTOM_CLAIM_COLUMNS.map((c) => r[c])));
      } else if (s === 'passkeys') {
        parts.push(csvLine([...PASSKEY_COLUMNS]));
        for (const r of await passkeyRows(scope, userId)) parts.push(csvLine(PASSKEY_COLUMNS.map((c) => r[c])));
      } else {
        parts.push(csvLine(PAGED[s].columns));
        await pages(
          scope,
          s,
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
        parts.push(JSON.stringify(await customClaimRows(scope, userId)));
      } else if (s === 'passkeys') {
        parts.push(JSON.stringify(await passkeyRows(scope, userId)));
      } else {
        const cols = PAGED[s].columns;
        let first = true;
        parts.push('[');
        await pages(
          scope,
          s,
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
  return (
    `{"status":"completed","requestId":${JSON.stringify(requestId)},"format":${JSON.stringify(format)},` +
    `"data":${data},"exportedAt":${exportedAt}}`
  );
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

/** Stores a pending export for the `data-export` job to build; returns its id. */
export async function createPendingExport(
  db: Db,
  p: { tenantId: string; userId: string; sections: readonly ExportSection[]; format: ExportFormat; now?: number },
): Promise<string> {
  const id = newId('dex');
  const now = p.now ?? Date.now();
  await new TenantScope(db, p.tenantId).exports.insertPending({
    id,
    userId: p.userId,
    format: p.format,
    sections: p.sections,
    createdAt: now,
    expiresAt: now + EXPORT_RETENTION_MS,
  });
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
  const r = await new TenantScope(db, tenantId).exports.find(userId, id, now);
  if (!r) return undefined;
  return {
    id: r.id,
    status: r.status as ExportRecord['status'],
    format: r.format as ExportFormat,
    result: r.result,
    created_at: r.created_at,
    completed_at: r.completed_at,
  };
}

/**
 * The `data-export` job's work: builds pending exports one at a time, oldest first, of any
 * tenant. Returns how many were built. A failure marks the row `failed` (the user asks again).
 */
/**
 * Tells a user their background export is ready: one mail through the outbox, written in the
 * transaction that completes the export. That UPDATE is conditional on the export still being
 * pending, so an export built twice (its builder killed after the build, before the commit, or
 * racing another daemon) completes, and mails, once; the outbox delivers the mail after commit,
 * and a crash then leaves the row to be delivered by the next daemon (shared/services/outbox.ts).
 */
export interface ExportNotifier {
  mail: Pick<MailQueue, 'enqueueEmail' | 'kick'>;
  /** Composes the mail (the container's; without one, unbranded defaults). */
  templates?: MailComposer;
}

/** How long completing an export keeps retrying through lock contention (SQLite's jobs connection). */
const COMPLETE_RETRY_MS = 30_000;

/**
 * The `data-export` job's work: builds pending exports, oldest first, at most `max` per run.
 * Returns how many were completed. A builder that dies mid-build leaves the export pending; the
 * next run (this daemon's or another's, once the job's lease has passed) builds it again from
 * the start: a build writes nothing until it completes.
 */
export async function buildPendingExports(
  db: Database,
  signal?: AbortSignal,
  max = 20,
  notify?: ExportNotifier,
): Promise<number> {
  const lookups = new Lookups(db);
  let done = 0;
  for (let i = 0; i < max && !signal?.aborted; i++) {
    const r = await lookups.oldestPendingExport();
    if (!r) break;
    const scope = new TenantScope(db, r.tenant_id);
    try {
      const data = await buildExport(
        db,
        r.tenant_id,
        r.user_id,
        r.sections as ExportSection[],
        r.format as ExportFormat,
        signal,
      );
      const now = Date.now();
      // Composed before the transaction (it needs nothing from it). The user's locale is not
      // known to the export: English (docs/email.md).
      const templates = notify?.templates ?? new MailTemplateService(db, { issuerHost: '' });
      const message = notify
        ? await templates.compose({ tenantId: r.tenant_id, kind: 'data_export_ready', vars: { export_id: r.id } })
        : undefined;
      const mailed = await retryTransient(
        () =>
          db.transaction(async (tx) => {
            const s = new TenantScope(tx, r.tenant_id);
            if ((await s.exports.complete(r.id, data, now, now + EXPORT_RETENTION_MS)) !== 1) return false;
            const user = notify ? await s.users.withTenantState(r.user_id) : undefined;
            if (!notify || !user || !message) return false;
            await notify.mail.enqueueEmail(tx, {
              tenantId: r.tenant_id,
              to: user.email,
              ...message,
            });
            return true;
          }),
        COMPLETE_RETRY_MS,
      );
      if (mailed) notify?.mail.kick();
      done++;
    } catch (e) {
      if (signal?.aborted) throw e;
      await scope.exports.fail(r.id, Date.now());
      throw e;
    }
  }
  return done;
}

/** The `data-export-purge` job's work: deletes exports past their retention; returns how many. */
export function purgeExpiredExports(db: Database, signal?: AbortSignal, now = Date.now()): Promise<number> {
  return new ExportHousekeeping(db).expired(now, signal);
}
