/**
 * The access graph: typed, optionally expiring relationships between two users of one tenant
 * (docs/approvals.md). "A manager_of B": subject A, related B. An expired edge is neither listed
 * nor used; adding the same edge again after it expired replaces it.
 *
 * Separate from approvals.ts: the graph is managed on its own (user relationship endpoints and
 * commands); approval requests only read it, through the repository, to derive approvers.
 */
import type { Database } from '../db/index.js';
import { isUniqueViolation } from '../db/index.js';
import { newId } from '../crypto.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import { TenantScope, type RelationshipListRow } from '../repositories/index.js';
import { APPROVAL_LIMITS } from '../schemas/approvals.js';
import { audit, type Actor } from './audit.js';

export type Direction = 'incoming' | 'outgoing';

export interface RelationshipOut {
  id: string;
  subject_id: string;
  related_subject_id: string;
  relationship_type: string;
  expires_at: number | null;
  created_at: number;
  related_email?: string;
  related_name?: string;
  subject_email?: string;
  subject_name?: string;
}

export interface RelationshipsOut {
  user_id: string;
  outgoing_relationships?: RelationshipOut[];
  incoming_relationships?: RelationshipOut[];
}

const view = (r: RelationshipListRow, direction: Direction): RelationshipOut => {
  const base = {
    id: r.id,
    subject_id: r.subject_id,
    related_subject_id: r.related_subject_id,
    relationship_type: r.relationship_type,
    expires_at: r.expires_at,
    created_at: r.created_at,
  };
  return direction === 'outgoing'
    ? { ...base, related_email: r.other_email, related_name: r.other_name }
    : { ...base, subject_email: r.other_email, subject_name: r.other_name };
};

export class RelationshipService {
  constructor(private readonly db: Database) {}

  private async requireUser(scope: TenantScope, userId: string): Promise<void> {
    if (!(await scope.users.find(userId))) throw notFound(`User ${userId}`);
  }

  async add(
    tenantId: string,
    userId: string,
    input: { related_subject_id: string; relationship_type: string; expires_at?: number | null },
    actor: Actor,
  ): Promise<RelationshipOut> {
    const now = Date.now();
    const expiresAt = input.expires_at ?? null;
    if (expiresAt !== null && expiresAt <= now) throw badRequest('body.expires_at: must be in the future');
    if (expiresAt !== null && expiresAt > now + APPROVAL_LIMITS.relationshipHorizonMs)
      throw badRequest('body.expires_at: must be at most 10 years ahead');
    if (input.related_subject_id === userId)
      throw new ApiError(400, 'self_relationship', 'body.related_subject_id: a user cannot be related to itself');
    return this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      await this.requireUser(scope, userId);
      const related = await scope.users.find(input.related_subject_id);
      // A user of another tenant is simply not found here: the scope binds this tenant.
      if (!related)
        throw new ApiError(
          400,
          'unknown_related_subject',
          `body.related_subject_id: ${input.related_subject_id} is not a user of this tenant`,
        );
      const existing = await scope.relationships.findEdge(userId, related.id, input.relationship_type);
      if (existing) {
        if (existing.expires_at === null || existing.expires_at > now)
          throw new ApiError(409, 'relationship_exists', 'This relationship already exists.', { id: existing.id });
        await scope.relationships.delete(existing.id);
      }
      const row = {
        id: newId('rel'),
        subject_id: userId,
        related_subject_id: related.id,
        relationship_type: input.relationship_type,
        expires_at: expiresAt,
        created_at: now,
      };
      try {
        await scope.relationships.insert(row);
      } catch (e) {
        if (isUniqueViolation(e)) throw new ApiError(409, 'relationship_exists', 'This relationship already exists.');
        throw e;
      }
      await audit(tx, actor, {
        tenantId,
        action: 'user.relationship.add',
        targetType: 'user',
        targetId: userId,
        summary: { id: row.id, related_subject_id: row.related_subject_id, relationship_type: row.relationship_type },
      });
      return { ...row, related_email: related.email, related_name: related.name };
    });
  }

  async list(tenantId: string, userId: string, direction?: Direction): Promise<RelationshipsOut> {
    const scope = new TenantScope(this.db, tenantId);
    await this.requireUser(scope, userId);
    const now = Date.now();
    const out: RelationshipsOut = { user_id: userId };
    if (direction !== 'incoming')
      out.outgoing_relationships = (await scope.relationships.list(userId, 'outgoing', now)).map((r) =>
        view(r, 'outgoing'),
      );
    if (direction !== 'outgoing')
      out.incoming_relationships = (await scope.relationships.list(userId, 'incoming', now)).map((r) =>
        view(r, 'incoming'),
      );
    return out;
  }

  /** Removes an edge the user takes part in (either side). */
  async remove(tenantId: string, userId: string, relationshipId: string, actor: Actor): Promise<void> {
    await this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      await this.requireUser(scope, userId);
      const rel = await scope.relationships.get(relationshipId);
      if (!rel || (rel.subject_id !== userId && rel.related_subject_id !== userId))
        throw notFound(`Relationship ${relationshipId}`);
      await scope.relationships.delete(rel.id);
      await audit(tx, actor, {
        tenantId,
        action: 'user.relationship.remove',
        targetType: 'user',
        targetId: userId,
        summary: { id: rel.id, related_subject_id: rel.related_subject_id, relationship_type: rel.relationship_type },
      });
    });
  }
}
