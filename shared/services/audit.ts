import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { AuditWriter } from '../repositories/index.js';

/** Who made a change: an operator at the CLI, an API client, or the service itself. */
export interface Actor {
  type: 'cli' | 'client' | 'user' | 'system';
  id: string;
  requestId?: string;
}

export async function audit(
  em: EntityManager,
  actor: Actor,
  e: {
    tenantId: string | null;
    action: string;
    targetType: string;
    targetId: string;
    outcome?: 'success' | 'failure';
    summary?: Record<string, unknown>;
  },
): Promise<string> {
  const id = randomUUID();
  await new AuditWriter(em).append({
    id,
    tenant_id: e.tenantId,
    actor_type: actor.type,
    actor_id: actor.id,
    action: e.action,
    target_type: e.targetType,
    target_id: e.targetId,
    outcome: e.outcome ?? 'success',
    request_id: actor.requestId ?? null,
    summary: e.summary ?? {},
    created_at: Date.now(),
  });
  return id;
}
