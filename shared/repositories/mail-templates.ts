/**
 * A tenant's mail template overrides (migration 0040, docs/email.md "Templates"): one row per
 * (kind, locale), each part NULL when the tenant keeps the default; `last_error` records the
 * last send that could not use the row.
 */
import { all, exec, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

type Row = Record<string, unknown>;

export interface MailTemplateRow {
  kind: string;
  locale: string;
  subject: string | null;
  text_body: string | null;
  html_body: string | null;
  last_error: string | null;
  last_error_at: number | null;
  created_at: number;
  updated_at: number;
}

const COLS = 'kind, locale, subject, text_body, html_body, last_error, last_error_at, created_at, updated_at';

/** A TEXT column: a string on both drivers, or NULL. */
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

const toRow = (r: Row): MailTemplateRow => ({
  kind: String(r.kind),
  locale: String(r.locale),
  subject: str(r.subject),
  text_body: str(r.text_body),
  html_body: str(r.html_body),
  last_error: str(r.last_error),
  last_error_at: r.last_error_at === null || r.last_error_at === undefined ? null : num(r.last_error_at),
  created_at: num(r.created_at),
  updated_at: num(r.updated_at),
});

export interface MailTemplateWrite {
  kind: string;
  locale: string;
  subject: string | null;
  textBody: string | null;
  htmlBody: string | null;
  now: number;
}

export class ScopedMailTemplates {
  constructor(private readonly s: ScopeRef) {}

  /** Every override of the tenant, by kind then locale. */
  async list(): Promise<MailTemplateRow[]> {
    const rows = await all<Row>(
      this.s.db,
      `SELECT ${COLS} FROM mail_templates WHERE tenant_id = ? ORDER BY kind, locale`,
      [this.s.tenantId],
    );
    return rows.map(toRow);
  }

  async get(kind: string, locale: string): Promise<MailTemplateRow | undefined> {
    const r = await one<Row>(
      this.s.db,
      `SELECT ${COLS} FROM mail_templates WHERE tenant_id = ? AND kind = ? AND locale = ?`,
      [this.s.tenantId, kind, locale],
    );
    return r ? toRow(r) : undefined;
  }

  /** Replaces the override's parts (clearing its last error); returns whether it updated a row. */
  async update(w: MailTemplateWrite): Promise<boolean> {
    const n = await exec(
      this.s.db,
      `UPDATE mail_templates SET subject = ?, text_body = ?, html_body = ?, last_error = NULL, last_error_at = NULL,
         updated_at = ? WHERE tenant_id = ? AND kind = ? AND locale = ?`,
      [w.subject, w.textBody, w.htmlBody, w.now, this.s.tenantId, w.kind, w.locale],
    );
    return n > 0;
  }

  /** A new override; a unique violation means one was written meanwhile (the caller updates it). */
  async insert(w: MailTemplateWrite): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO mail_templates (tenant_id, ${COLS}) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?)`,
      [this.s.tenantId, w.kind, w.locale, w.subject, w.textBody, w.htmlBody, w.now, w.now],
    );
  }

  /** Deletes the override; returns whether there was one. */
  async delete(kind: string, locale: string): Promise<boolean> {
    const n = await exec(this.s.db, 'DELETE FROM mail_templates WHERE tenant_id = ? AND kind = ? AND locale = ?', [
      this.s.tenantId,
      kind,
      locale,
    ]);
    return n > 0;
  }

  /** Records (or, with null, clears) the last failure to use the override at send time. */
  async setError(kind: string, locale: string, error: string | null, now: number): Promise<void> {
    await exec(
      this.s.db,
      'UPDATE mail_templates SET last_error = ?, last_error_at = ? WHERE tenant_id = ? AND kind = ? AND locale = ?',
      [error === null ? null : error.slice(0, 500), error === null ? null : now, this.s.tenantId, kind, locale],
    );
  }
}
