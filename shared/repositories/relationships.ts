/**
 * The access graph (docs/approvals.md): typed edges between two users of one tenant, reached
 * through TenantScope (`relationships`). A listed edge carries the other party's display
 * fields, joined from `users` of the same tenant. The approval service reads the graph to find
 * who may approve a request (a target's managers); the requests themselves are in approvals.ts.
 */
import { all, exec, num, one } from '../db/sql.js';
import type { ScopeRef } from './common.js';

export interface RelationshipRow {
  id: string;
  subject_id: string;
  related_subject_id: string;
  relationship_type: string;
  expires_at: number | null;
  created_at: number;
}

/** An edge with the other party's display fields (`other_email`, `other_name`). */
export interface RelationshipListRow extends RelationshipRow {
  other_email: string;
  other_name: string;
}

const nullableNum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

const relRow = (r: Record<string, unknown>): RelationshipRow => ({
  id: String(r.id),
  subject_id: String(r.subject_id),
  related_subject_id: String(r.related_subject_id),
  relationship_type: String(r.relationship_type),
  expires_at: nullableNum(r.expires_at),
  created_at: num(r.created_at),
});

export class ScopedRelationships {
  constructor(private readonly s: ScopeRef) {}

  async insert(r: RelationshipRow): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO user_relationships
         (id, tenant_id, subject_id, related_subject_id, relationship_type, expires_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      [r.id, this.s.tenantId, r.subject_id, r.related_subject_id, r.relationship_type, r.expires_at, r.created_at],
    );
  }

  async get(id: string): Promise<RelationshipRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT id, subject_id, related_subject_id, relationship_type, expires_at, created_at
         FROM user_relationships WHERE tenant_id = ? AND id = ?`,
      [this.s.tenantId, id],
    );
    return r && relRow(r);
  }

  async findEdge(subjectId: string, relatedId: string, type: string): Promise<RelationshipRow | undefined> {
    const r = await one<Record<string, unknown>>(
      this.s.db,
      `SELECT id, subject_id, related_subject_id, relationship_type, expires_at, created_at FROM user_relationships
        WHERE tenant_id = ? AND subject_id = ? AND related_subject_id = ? AND relationship_type = ?`,
      [this.s.tenantId, subjectId, relatedId, type],
    );
    return r && relRow(r);
  }

  delete(id: string): Promise<number> {
    return exec(this.s.db, 'DELETE FROM user_relationships WHERE tenant_id = ? AND id = ?', [this.s.tenantId, id]);
  }

  /**
   * Edges of `userId` still in force at `now`: `outgoing` where the user is the subject (the
   * other party is the related user), `incoming` where the user is the related one.
   */
  async list(userId: string, direction: 'outgoing' | 'incoming', now: number): Promise<RelationshipListRow[]> {
    const mine = direction === 'outgoing' ? 'subject_id' : 'related_subject_id';
    const other = direction === 'outgoing' ? 'related_subject_id' : 'subject_id';
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT r.id, r.subject_id, r.related_subject_id, r.relationship_type, r.expires_at, r.created_at,
              u.email AS other_email, u.name AS other_name
         FROM user_relationships r
         JOIN users u ON u.tenant_id = r.tenant_id AND u.id = r.${other}
        WHERE r.tenant_id = ? AND r.${mine} = ? AND (r.expires_at IS NULL OR r.expires_at > ?)
        ORDER BY r.created_at, r.id`,
      [this.s.tenantId, userId, now],
    );
    return rows.map((r) => ({ ...relRow(r), other_email: String(r.other_email), other_name: String(r.other_name) }));
  }

  /** Subjects holding an edge of `type` toward `relatedId` in force at `now` (e.g. the target's managers). */
  async subjectsToward(relatedId: string, type: string, now: number): Promise<string[]> {
    const rows = await all<{ subject_id: string }>(
      this.s.db,
      `SELECT subject_id FROM user_relationships
        WHERE tenant_id = ? AND related_subject_id = ? AND relationship_type = ?
          AND (expires_at IS NULL OR expires_at > ?)
        ORDER BY created_at, id`,
      [this.s.tenantId, relatedId, type, now],
    );
    return rows.map((r) => r.subject_id);
  }
}
