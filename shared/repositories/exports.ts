/**
 * Personal data exports: the `data_exports` rows of exports too large to build inline, and the
 * reads the export builder makes, one section at a time. A section is read a page at a time
 * by (time, id) keyset, so no more than one page of rows is alive at once; the columns are
 * the user's own data only, never a secret, a hash or a session identifier.
 *
 * The `data-export` job finds the oldest pending export of any tenant through lookups.ts and
 * builds and records it through that tenant's scope; expired exports of every tenant are
 * deleted by {@link ExportHousekeeping}.
 */
import type { Db } from '../db/index.js';
import { deleteInChunks } from '../db/purge.js';
import { all, exec, json, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

type Row = Record<string, unknown>;

/** The sections read a page at a time. */
export type PagedExportSection = 'consents' | 'sessions' | 'auth_history';

/** Where the next page of a section starts: after this (time, id). */
export interface ExportCursor {
  t: number;
  id: string;
}

interface SectionQuery {
  table: string;
  /** The section's time column, first key of its order. */
  time: string;
  select: string;
  /** Columns handed back as numbers (mysql2 may return BIGINT as a string) and parsed JSON. */
  numbers: string[];
  json?: string[];
}

const SECTIONS: Record<PagedExportSection, SectionQuery> = {
  consents: {
    table: 'consents',
    time: 'granted_at',
    select: `c.id, c.granted_at, c.client_id, cl.name AS client_name, c.scopes, c.expires_at, c.revoked_at
      FROM consents c LEFT JOIN clients cl ON cl.tenant_id = c.tenant_id AND cl.client_id = c.client_id`,
    numbers: ['granted_at', 'expires_at', 'revoked_at'],
    json: ['scopes'],
  },
  sessions: {
    // c.id orders the pages only: the session id is the hash of the cookie, never exported.
    table: 'sessions',
    time: 'created_at',
    select: 'c.id, c.created_at, c.last_seen_at, c.expires_at, c.revoked_at, c.user_agent, c.ip FROM sessions c',
    numbers: ['created_at', 'last_seen_at', 'expires_at', 'revoked_at'],
  },
  auth_history: {
    table: 'auth_history',
    time: 'created_at',
    select: 'c.id, c.created_at, c.event, c.outcome, c.reason, c.client_id, c.ip, c.user_agent FROM auth_history c',
    numbers: ['created_at'],
  },
};

/** A stored export as its owner polls it. */
export interface ExportRow {
  id: string;
  status: string;
  format: string;
  result: string | null;
  created_at: number;
  completed_at: number | null;
}

/** A pending export as the job takes it (lookups.ts). */
export interface PendingExportRow {
  id: string;
  tenant_id: string;
  user_id: string;
  format: string;
  sections: string[];
}

/** Maps the pending export lookup's row (lookups.ts). */
export function toPendingExportRow(r: Row): PendingExportRow {
  return {
    id: String(r.id),
    tenant_id: String(r.tenant_id),
    user_id: String(r.user_id),
    format: String(r.format),
    sections: json<string[]>(r.sections),
  };
}

/** A tenant's stored exports, and the section reads of the export builder. */
export class ScopedExports {
  constructor(private readonly s: ScopeRef) {}

  /** How many rows of the user's a section holds. */
  async countRows(section: PagedExportSection, userId: string): Promise<number> {
    const r = await one<{ n: unknown }>(
      this.s.db,
      `SELECT COUNT(*) AS n FROM ${SECTIONS[section].table} WHERE tenant_id = ? AND user_id = ?`,
      [this.s.tenantId, userId],
    );
    return num(r?.n ?? 0);
  }

  /**
   * One page of a section's rows of the user, in (time, id) order after `after`, and where the
   * next page starts (undefined after a short page: there is none). Time columns are numbers
   * (or null), JSON columns parsed.
   */
  async sectionPage(
    section: PagedExportSection,
    userId: string,
    limit: number,
    after?: ExportCursor,
  ): Promise<{ rows: Row[]; next?: ExportCursor }> {
    const q = SECTIONS[section];
    const rows = await all<Row>(
      this.s.db,
      `SELECT ${q.select} WHERE c.tenant_id = ? AND c.user_id = ?${
        after ? ` AND (c.${q.time} > ? OR (c.${q.time} = ? AND c.id > ?))` : ''
      } ORDER BY c.${q.time}, c.id LIMIT ?`,
      after ? [this.s.tenantId, userId, after.t, after.t, after.id, limit] : [this.s.tenantId, userId, limit],
    );
    for (const r of rows) {
      for (const c of q.numbers) if (r[c] !== null && r[c] !== undefined) r[c] = num(r[c]);
      for (const c of q.json ?? []) r[c] = json<unknown>(r[c]);
    }
    const last = rows[rows.length - 1];
    return {
      rows,
      next: rows.length < limit || !last ? undefined : { t: Number(last[q.time]), id: String(last.id) },
    };
  }

  /** The user's profile row, or undefined. */
  profile(userId: string): Promise<Row | undefined> {
    return one<Row>(this.s.db, 'SELECT id, email, name, status, created_at FROM users WHERE tenant_id = ? AND id = ?', [
      this.s.tenantId,
      userId,
    ]);
  }

  async insertPending(e: {
    id: string;
    userId: string;
    format: string;
    sections: readonly string[];
    createdAt: number;
    expiresAt: number;
  }): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO data_exports (id, tenant_id, user_id, status, format, sections, result, created_at, completed_at,
         expires_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, NULL, ?)`,
      [e.id, this.s.tenantId, e.userId, 'pending', e.format, JSON.stringify(e.sections), e.createdAt, e.expiresAt],
    );
  }

  /** The user's own export `id` that has not expired by `now`, or undefined. */
  async find(userId: string, id: string, now: number): Promise<ExportRow | undefined> {
    const r = await one<Row>(
      this.s.db,
      `SELECT id, status, format, result, created_at, completed_at FROM data_exports
        WHERE id = ? AND tenant_id = ? AND user_id = ? AND expires_at > ?`,
      [id, this.s.tenantId, userId, now],
    );
    if (!r) return undefined;
    return {
      id: String(r.id),
      status: String(r.status),
      format: String(r.format),
      result: (r.result as string | null | undefined) ?? null,
      created_at: num(r.created_at),
      completed_at: r.completed_at === null || r.completed_at === undefined ? null : num(r.completed_at),
    };
  }

  /** Stores a pending export's result; 0 when it is no longer pending (or not this tenant's). */
  complete(id: string, result: string, now: number, expiresAt: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE data_exports SET status = ?, result = ?, completed_at = ?, expires_at = ?
        WHERE tenant_id = ? AND id = ? AND status = ?`,
      ['completed', result, now, expiresAt, this.s.tenantId, id, 'pending'],
    );
  }

  /** Marks a pending export failed; 0 when it is no longer pending (or not this tenant's). */
  fail(id: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      'UPDATE data_exports SET status = ?, completed_at = ? WHERE tenant_id = ? AND id = ? AND status = ?',
      ['failed', now, this.s.tenantId, id, 'pending'],
    );
  }
}

/** Deletes the exports of every tenant past their retention (the data-export-purge job). */
export class ExportHousekeeping {
  constructor(private readonly db: Db) {}

  /** Exports whose `expires_at` is before `before`; returns how many were deleted. */
  expired(before: number, signal?: AbortSignal): Promise<number> {
    return deleteInChunks(this.db, {
      table: 'data_exports',
      key: 'id',
      where: 'expires_at < ?',
      params: [before],
      signal,
    });
  }
}
