/**
 * An agent grant as served (docs/agents.md), and the precondition on it: the stored row with its
 * consent state read beside it, and the If-Match check every change (PATCH, revoke) makes against
 * the grant's current ETag. Shared by grants.ts and revoke.ts.
 */
import { ApiError } from '../../errors.js';
import type { AgentGrantRow, TenantScope } from '../../repositories/index.js';
import type { AgentGrantView } from '../../schemas/agents.js';
import { agentGrantEtag, ifMatchSatisfied } from './terms.js';

/** The row as served: its consent state read beside it, the immutable terms flat. */
export function toView(g: AgentGrantRow, liveConsent: boolean): AgentGrantView {
  return {
    grant_id: g.id,
    tenant_id: g.tenant_id,
    client_id: g.client_id,
    grantor_user_id: g.grantor_user_id,
    delegator_user_id: g.delegator_user_id,
    machine_principal_id: g.machine_principal_id,
    authorization_details: g.authorization_details,
    purpose: g.purpose,
    expires_at: g.expires_at,
    status: g.status,
    generation: g.generation,
    consent_version: g.consent_version,
    consent_required: !liveConsent,
    ...g.immutable_terms,
    ceilings: g.ceilings,
    created_at: g.created_at,
    updated_at: g.updated_at,
  };
}

/**
 * RFC 9110 §13.2.1: the precondition is evaluated before the request's content is processed,
 * against the state the caller's transaction read (the generation guard of its write keeps it).
 * `ifMatch` undefined: no precondition was sent.
 */
export async function requireIfMatch(scope: TenantScope, g: AgentGrantRow, ifMatch: string | undefined): Promise<void> {
  if (ifMatch === undefined) return;
  const current = agentGrantEtag(g.generation, await scope.agentGrants.hasLiveConsent(g.id, g.consent_version));
  if (!ifMatchSatisfied(ifMatch, current))
    throw new ApiError(
      412,
      'precondition_failed',
      "If-Match does not match the agent grant's current ETag; read the grant again (RFC 9110 §13.1.1).",
    );
}
