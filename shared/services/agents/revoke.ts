/**
 * Revoking an agent grant (docs/agents.md, "Revoke"), and the revocation outbox entry it shares
 * with the PATCH. A revoke ends the grant for good: in one transaction the status becomes
 * `revoked` and the generation goes up (so introspection refuses every token of the grant at
 * once, on every daemon), every consent of the grant is revoked, one `agent_grant.revoke_families`
 * entry is written for the outbox job to record each token's revocation, and the move is audited
 * as `agent_grant.revoke`. A revoked grant issues no token (bindToken: not `active`), refuses a
 * PATCH and another revoke (409 `agent_grant_not_active`) and takes no renewed consent.
 */
import type { Database, Tx } from '../../db/index.js';
import { ApiError, notFound } from '../../errors.js';
import { TenantScope } from '../../repositories/index.js';
import type { AgentGrantRevokeResult } from '../../schemas/agents.js';
import { audit, type Actor } from '../audit.js';
import type { Outbox } from '../outbox.js';
import { requireIfMatch, toView } from './view.js';

export const OUTBOX_KIND_AGENT_GRANT_REVOKE = 'agent_grant.revoke_families';

/** What the revocation outbox entry carries (sealed like every outbox payload). */
export interface RevokePayload {
  tenantId: string;
  grantId: string;
  /** Families issued under a generation below this one are revoked. */
  belowGeneration: number;
}

export function enqueueRevoke(outbox: Outbox, tx: Tx, p: RevokePayload): Promise<string> {
  return outbox.enqueueSealed(tx, { tenantId: p.tenantId, kind: OUTBOX_KIND_AGENT_GRANT_REVOKE, payload: p });
}

/**
 * The revoke's transaction (AgentGrantService.revoke validates the id and kicks the outbox).
 * `ifMatch` is the request's If-Match header, when sent (RFC 9110 §13.1.1): as for a PATCH, it is
 * optional, and a mismatch is 412 before anything else is looked at.
 */
export function revokeGrant(
  ds: Database,
  outbox: Outbox,
  tenantId: string,
  id: string,
  actor: Actor,
  opts: { ifMatch?: string } = {},
): Promise<AgentGrantRevokeResult> {
  return ds.transaction(async (tx) => {
    const scope = new TenantScope(tx, tenantId);
    // Locked (MySQL) against a token being bound to the grant meanwhile: that token is then
    // recorded under the old generation and revoked at once by recordToken.
    const g = await scope.agentGrants.get(id, { forUpdate: true });
    if (!g) throw notFound(`Agent grant ${id}`);
    await requireIfMatch(scope, g, opts.ifMatch);
    // A revoked grant stays revoked: a second revoke is refused rather than answered as a replay,
    // so a caller learns the grant was already ended (and by whom, from the audit log).
    if (g.status !== 'active') throw new ApiError(409, 'agent_grant_not_active', `Agent grant ${id} is ${g.status}.`);
    const now = Date.now();
    if ((await scope.agentGrants.revoke(id, g.generation, now)) !== 1)
      throw new ApiError(409, 'conflict', `Agent grant ${id} was changed concurrently; retry.`);
    // Every token names the generation it was issued under; all are now below the grant's, so
    // introspection answers active: false for each as soon as this commits (docs/agents.md,
    // "Revocation"), whatever the caches hold and whether or not the outbox job has run.
    const generation = g.generation + 1;
    // Every consent of the grant, the current version's included: nothing is left to consent to.
    await scope.agentGrants.revokeConsentsBelow(id, g.consent_version + 1, now);
    const pending = await scope.agentGrants.countLiveBelow(id, generation, now);
    const outboxId = await enqueueRevoke(outbox, tx, { tenantId, grantId: id, belowGeneration: generation });
    await audit(tx, actor, {
      tenantId,
      action: 'agent_grant.revoke',
      targetType: 'agent_grant',
      targetId: id,
      summary: {
        client_id: g.client_id,
        grantor_user_id: g.grantor_user_id,
        generation,
        token_families_pending_revocation: pending,
        revocation_outbox_id: outboxId,
      },
    });
    return {
      ...toView({ ...g, status: 'revoked', generation, updated_at: now }, false),
      token_families_pending_revocation: pending,
      revocation_outbox_id: outboxId,
    };
  });
}
