/**
 * Agent grants (docs/agents.md): what a user (the grantor) allowed an agent client to do,
 * as RFC 9396 authorization_details, with a purpose and a deadline. An update (PATCH) is a
 * recertification: every principal's ceiling is checked again, the details may only narrow what
 * the grantor consented to (terms.ts, narrowing.ts), and in one transaction the generation and
 * consent version go up (which revokes the older generations' tokens at introspection at once),
 * the prior consent is revoked, a revocation outbox entry for the token families of older
 * generations is written, and an audit event records it. Renewed consent comes only from the
 * grantor's own session (daemon/routes/account/agent-grants.ts). A revoke (revoke.ts) ends the
 * grant for good.
 *
 * This file is the grant's lifecycle (its transactions, consent, tokens and their revocation);
 * what the terms may be is checked in terms.ts, and the served shape is declared once in
 * shared/schemas/agents.ts.
 */
import { newId } from '../../crypto.js';
import type { Database, Tx } from '../../db/index.js';
import { ApiError, notFound } from '../../errors.js';
import { TenantScope, type AgentGrantRow } from '../../repositories/index.js';
import type { AgentGrantRevokeResult, AgentGrantUpdateResult, AgentGrantView } from '../../schemas/agents.js';
import { audit, type Actor } from '../audit.js';
import type { Outbox } from '../outbox.js';
import { enqueueRevoke, OUTBOX_KIND_AGENT_GRANT_REVOKE, revokeGrant, type RevokePayload } from './revoke.js';
import { bad, checkCeilings, checkConsented, parseCreate, parsePatch } from './terms.js';
import { requireIfMatch, toView } from './view.js';

export type { AgentGrantRevokeResult, AgentGrantUpdateResult, AgentGrantView } from '../../schemas/agents.js';
export { AGENT_GRANT_LIMITS, IMMUTABLE_FIELDS, agentGrantEtag, exceeds, ifMatchSatisfied } from './terms.js';
export { OUTBOX_KIND_AGENT_GRANT_REVOKE } from './revoke.js';

export const AGENT_GRANT_ID = /^aag_[A-Za-z0-9_-]{1,60}$/;

export interface AgentGrantServiceOptions {
  /**
   * Test-only fault injection: throw inside the PATCH transaction right after this step, so a
   * test proves the transaction leaves nothing changed. Set only by tests (never by config).
   */
  failAfter?: 'agent_grant_generation';
}

export class AgentGrantService {
  constructor(
    private readonly ds: Database,
    private readonly outbox: Outbox,
    private readonly opts: AgentGrantServiceOptions = {},
  ) {}

  private requireId(id: string): void {
    if (!AGENT_GRANT_ID.test(id)) throw bad('id', 'must be an agent grant id (aag_…)');
  }

  /**
   * Creates a grant (generation 1, consent version 1 with the grantor's consent recorded). The
   * agent client and the users must exist in the tenant; the details must be within every ceiling.
   */
  async create(tenantId: string, raw: unknown, actor: Actor): Promise<AgentGrantView> {
    const now = Date.now();
    const terms = parseCreate(raw, now);
    const id = newId('aag');
    return this.ds.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const client = await scope.clients.getByClientId(terms.client_id);
      if (!client) throw notFound(`Client ${terms.client_id}`);
      for (const [k, u] of [
        ['grantor_user_id', terms.grantor_user_id],
        ['delegator_user_id', terms.delegator_user_id],
      ] as const) {
        if (u && !(await scope.users.get(u))) throw notFound(`User ${u} (${k})`);
      }
      const machine = terms.machine_principal_id;
      if (machine && !(await scope.clients.getByClientId(machine)))
        throw notFound(`Client ${machine} (machine_principal_id)`);
      const row: Omit<AgentGrantRow, 'tenant_id'> = {
        id,
        ...terms,
        status: 'active',
        generation: 1,
        consent_version: 1,
        created_at: now,
        updated_at: now,
      };
      await scope.agentGrants.insert(row);
      await scope.agentGrants.insertConsent(id, 1, now);
      await audit(tx, actor, {
        tenantId,
        action: 'agent_grant.create',
        targetType: 'agent_grant',
        targetId: id,
        summary: { client_id: terms.client_id, generation: 1, types: terms.authorization_details.map((d) => d.type) },
      });
      return toView({ ...row, tenant_id: tenantId }, true);
    });
  }

  async get(tenantId: string, id: string): Promise<AgentGrantView> {
    this.requireId(id);
    const scope = new TenantScope(this.ds, tenantId);
    const g = await scope.agentGrants.get(id);
    if (!g) throw notFound(`Agent grant ${id}`);
    return toView(g, await scope.agentGrants.hasLiveConsent(id, g.consent_version));
  }

  /** The tenant's grants, newest first, at most `limit` (1–500), each with its consent state. */
  async list(tenantId: string, limit = 100): Promise<AgentGrantView[]> {
    const scope = new TenantScope(this.ds, tenantId);
    const rows = await scope.agentGrants.list(Math.min(Math.max(Math.trunc(limit), 1), 500));
    const out: AgentGrantView[] = [];
    for (const g of rows) out.push(toView(g, await scope.agentGrants.hasLiveConsent(g.id, g.consent_version)));
    return out;
  }

  /**
   * Records the grantor's renewed consent for the current consent version (what a PATCH makes
   * required). Only the grantor may give it: `grantorUserId` is the user of the caller's own
   * signed-in session (the account surface), never an id an administrator names; a grant of
   * another user is 404, as if it did not exist. Idempotent: a live consent of that version is kept.
   */
  async renewConsent(tenantId: string, id: string, grantorUserId: string, actor: Actor): Promise<AgentGrantView> {
    this.requireId(id);
    return this.ds.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const g = await scope.agentGrants.get(id);
      if (!g || g.grantor_user_id !== grantorUserId) throw notFound(`Agent grant ${id}`);
      // A revoked grant has nothing left to consent to (its consents were revoked with it).
      if (g.status !== 'active') throw new ApiError(409, 'agent_grant_not_active', `Agent grant ${id} is ${g.status}.`);
      if (!(await scope.agentGrants.hasLiveConsent(id, g.consent_version))) {
        const now = Date.now();
        await scope.agentGrants.revokeConsentsBelow(id, g.consent_version, now);
        await scope.agentGrants.insertConsent(id, g.consent_version, now);
        await audit(tx, actor, {
          tenantId,
          action: 'agent_grant.consent',
          targetType: 'agent_grant',
          targetId: id,
          summary: { consent_version: g.consent_version, generation: g.generation },
        });
      }
      return toView(g, true);
    });
  }

  /** The grant as its grantor sees it (the account surface): 404 for another user's grant. */
  async getForGrantor(tenantId: string, id: string, grantorUserId: string): Promise<AgentGrantView> {
    const v = await this.get(tenantId, id);
    if (v.grantor_user_id !== grantorUserId) throw notFound(`Agent grant ${id}`);
    return v;
  }

  /**
   * PATCH /api/admin/agent-grants/{id} (interface: "Agent grant" row of States and transitions).
   * `ifMatch` is the request's If-Match header, when sent (RFC 9110 §13.1.1).
   */
  async update(
    tenantId: string,
    id: string,
    raw: unknown,
    actor: Actor,
    opts: { ifMatch?: string } = {},
  ): Promise<AgentGrantUpdateResult> {
    this.requireId(id);
    const result = await this.ds.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const g = await scope.agentGrants.get(id);
      if (!g) throw notFound(`Agent grant ${id}`);
      // RFC 9110 §13.2.1: the precondition first, before the body is looked at.
      await requireIfMatch(scope, g, opts.ifMatch);
      const { details, purpose, expiresAt, now } = parsePatch(raw);
      if (g.status !== 'active') throw new ApiError(409, 'agent_grant_not_active', `Agent grant ${id} is ${g.status}.`);
      const after = {
        authorization_details: details ?? g.authorization_details,
        purpose: purpose !== undefined ? purpose : g.purpose,
        expires_at: expiresAt ?? g.expires_at,
      };
      // Revalidation: the resulting details against the updater's, the original grantor's, the
      // delegator's and the machine principal's ceilings; any one refusing refuses the update.
      checkCeilings(g.ceilings, after.authorization_details);
      // The ceilings bound type and actions only; every member of every entry must also stay
      // within what the grantor consented to (narrowing.ts). The current details are always
      // within the last consent: a grant is created consented, and every PATCH only narrows.
      if (details) checkConsented(g.authorization_details, details);
      if ((await scope.agentGrants.bump(id, g.generation, after, now)) !== 1)
        throw new ApiError(409, 'conflict', `Agent grant ${id} was changed concurrently; retry.`);
      const generation = g.generation + 1;
      const consentVersion = g.consent_version + 1;
      this.faultAfter('agent_grant_generation');
      // The raised generation is itself the revocation of the older generations' tokens: every
      // token names its generation (agent_grant_gen), and introspection refuses one below the
      // grant's current generation (shared/services/introspection.ts), on every daemon as soon
      // as this transaction commits, also for a token issued concurrently under the old one.
      await scope.agentGrants.revokeConsentsBelow(id, consentVersion, now);
      const pending = await scope.agentGrants.countLiveBelow(id, generation, now);
      const outboxId = await enqueueRevoke(this.outbox, tx, { tenantId, grantId: id, belowGeneration: generation });
      await audit(tx, actor, {
        tenantId,
        action: 'agent_grant.update',
        targetType: 'agent_grant',
        targetId: id,
        summary: {
          before: { authorization_details: g.authorization_details, purpose: g.purpose, expires_at: g.expires_at },
          after,
          generation,
          consent_version: consentVersion,
          token_families_pending_revocation: pending,
          revocation_outbox_id: outboxId,
        },
      });
      return {
        grant_id: id,
        status: 'active' as const,
        generation,
        consent_version: consentVersion,
        token_families_pending_revocation: pending,
        revocation_outbox_id: outboxId,
        consent_required: true,
      };
    });
    this.outbox.kick();
    return result;
  }

  private faultAfter(step: NonNullable<AgentGrantServiceOptions['failAfter']>): void {
    if (this.opts.failAfter === step) throw new Error(`injected failure after ${step}`);
  }

  /**
   * POST /api/admin/agent-grants/{id}/revoke (docs/agents.md, "Revoke"): status `revoked`, the
   * generation raised, every consent revoked, the revocation outbox entry and the audit event
   * `agent_grant.revoke`, in one transaction (revoke.ts). A grant not `active` is 409
   * `agent_grant_not_active`; `ifMatch` as for {@link update}.
   */
  async revoke(
    tenantId: string,
    id: string,
    actor: Actor,
    opts: { ifMatch?: string } = {},
  ): Promise<AgentGrantRevokeResult> {
    this.requireId(id);
    const r = await revokeGrant(this.ds, this.outbox, tenantId, id, actor, opts);
    this.outbox.kick();
    return r;
  }

  /**
   * For a token request naming `agent_grant_id`: the grant must be this client's, active,
   * unexpired, with the current consent version consented. Returns the claims the token carries.
   * In the grant's transaction `tx`, the grant's row stays locked until the token is recorded.
   */
  async bindToken(
    tenantId: string,
    clientId: string,
    grantId: string,
    tx?: Tx,
  ): Promise<{ ok: true; generation: number; claims: Record<string, unknown> } | { ok: false; reason: string }> {
    if (!AGENT_GRANT_ID.test(grantId)) return { ok: false, reason: 'agent_grant_id is not an agent grant id.' };
    const scope = new TenantScope(tx ?? this.ds, tenantId);
    const g = await scope.agentGrants.get(grantId, { forUpdate: !!tx });
    if (!g || g.client_id !== clientId) return { ok: false, reason: 'Unknown agent grant for this client.' };
    if (g.status !== 'active') return { ok: false, reason: 'The agent grant is not active.' };
    if (g.expires_at <= Date.now()) return { ok: false, reason: 'The agent grant has expired.' };
    if (!(await scope.agentGrants.hasLiveConsent(grantId, g.consent_version)))
      return { ok: false, reason: 'The agent grant needs renewed consent.' };
    return {
      ok: true,
      generation: g.generation,
      claims: {
        agent_grant_id: g.id,
        agent_grant_gen: g.generation,
        authorization_details: g.authorization_details,
      },
    };
  }

  /**
   * Whether a token issued under `grantId` at `generation` still acts under the grant: the grant
   * exists, is `active` and has not moved on (the same test introspection makes by generation).
   * For a token presented other than at introspection (a token exchange's subject or actor token).
   */
  async tokenCurrent(tenantId: string, grantId: string, generation: number): Promise<boolean> {
    if (!AGENT_GRANT_ID.test(grantId)) return false;
    const g = await new TenantScope(this.ds, tenantId).agentGrants.get(grantId);
    return !!g && g.status === 'active' && g.generation === generation;
  }

  /**
   * Records an issued token as a family of the grant. If the grant moved on meanwhile (a PATCH
   * committed between binding and recording), the token is revoked at once: the outbox job of
   * that PATCH may already have run and would not see it. In the caller's transaction `tx` when
   * given (the client_credentials grant's, which bound the grant in it).
   */
  async recordToken(
    tenantId: string,
    t: { jti: string; grantId: string; generation: number; expiresAt: number },
    tx?: Tx,
  ): Promise<void> {
    const record = async (tx: Tx) => {
      const scope = new TenantScope(tx, tenantId);
      const now = Date.now();
      await scope.agentGrants.insertToken(t, now);
      const g = await scope.agentGrants.get(t.grantId);
      if (!g || g.generation !== t.generation) await scope.agentGrants.revokeToken(t.jti, t.expiresAt, now);
    };
    await (tx ? record(tx) : this.ds.transaction(record));
  }

  /**
   * The `agent-grant-revocation` job's run, on the jobs connection: claims due revocation
   * entries one-winner, revokes the families each names, and records it delivered (a failure
   * retries with backoff). Returns the number of entries delivered.
   */
  async drainRevocations(jobsDb: Database, holder: string, signal?: AbortSignal): Promise<number> {
    const store = this.outbox.delivery(jobsDb);
    const now = Date.now();
    const due = [
      ...(await store.dueIds('sending', now, 100, OUTBOX_KIND_AGENT_GRANT_REVOKE)),
      ...(await store.dueIds('pending', now, 100, OUTBOX_KIND_AGENT_GRANT_REVOKE)),
    ].slice(0, 100);
    if (!due.length) return 0;
    const token = `${holder}:${newId('c', 6)}`;
    const rows = await store.claim(due, token, now + 60_000, now);
    let delivered = 0;
    for (const r of rows) {
      if (signal?.aborted) {
        await store.handBack([r.id], token, Date.now());
        continue;
      }
      try {
        await this.deliverRevocation(jobsDb, r.id, r.payload_sealed);
        await store.recordDelivered('agent-grant-revocation', [{ id: r.id, token }], Date.now());
        delivered++;
      } catch (e) {
        const final = r.attempts >= 20;
        await store.recordFailure(
          {
            id: r.id,
            token,
            final,
            nextAttemptAt: Date.now() + Math.min(2_000 * 2 ** Math.min(r.attempts, 8), 300_000),
            errorCode: 'agent_grant_revocation_failed',
            cause: (e as Error).message.slice(0, 200),
          },
          Date.now(),
        );
      }
    }
    return delivered;
  }

  /** Revokes the families one revocation entry names. Returns how many. */
  async deliverRevocation(db: Database, outboxId: string, sealed: string): Promise<number> {
    const p = this.outbox.openSealed<RevokePayload>(outboxId, sealed);
    return db.transaction(async (tx) => {
      const scope = new TenantScope(tx, p.tenantId);
      const now = Date.now();
      const rows = await scope.agentGrants.liveBelow(p.grantId, p.belowGeneration);
      for (const r of rows) await scope.agentGrants.revokeToken(r.jti, r.expires_at, now);
      return rows.length;
    });
  }
}
