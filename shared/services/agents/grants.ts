/**
 * Agent grants (docs/agents.md): what a user (the grantor) allowed an agent client to do,
 * as RFC 9396 authorization_details, with a purpose and a deadline. An update (PATCH) is a
 * recertification: every principal's ceiling is checked again, the details may only narrow what
 * the grantor consented to (narrowing.ts), and in one transaction the generation and consent
 * version go up (which revokes the older generations' tokens at introspection at once), the
 * prior consent is revoked, a revocation outbox entry for the token families of older
 * generations is written, and an audit event records it. Renewed consent comes only from the
 * grantor's own session (daemon/routes/account/agent-grants.ts).
 */
import { newId } from '../../crypto.js';
import type { Database, Tx } from '../../db/index.js';
import { ApiError, badRequest, notFound } from '../../errors.js';
import { TenantScope, type AgentGrantCeilings, type AgentGrantRow, type Ceiling } from '../../repositories/index.js';
import { audit, type Actor } from '../audit.js';
import type { Outbox } from '../outbox.js';
import { widening } from './narrowing.js';

export const AGENT_GRANT_LIMITS = {
  details: 20,
  purpose: 500,
  /** expires_at at most this far after the update (or creation). */
  maxLifetimeMs: 90 * 24 * 3600 * 1000,
  typeLength: 200,
} as const;

export const AGENT_GRANT_ID = /^aag_[A-Za-z0-9_-]{1,60}$/;
export const OUTBOX_KIND_AGENT_GRANT_REVOKE = 'agent_grant.revoke_families';
export const IMMUTABLE_FIELDS = ['task_set', 'scope_policy', 'resolved_tools', 'permissions', 'scopes'] as const;
const PATCHABLE = ['authorization_details', 'purpose', 'expires_at'];
const CEILING_NAMES = ['updater', 'grantor', 'delegator', 'machine_principal'] as const;

export interface AgentGrantView {
  grant_id: string;
  tenant_id: string;
  client_id: string;
  grantor_user_id: string;
  delegator_user_id: string | null;
  machine_principal_id: string | null;
  authorization_details: Record<string, unknown>[];
  purpose: string | null;
  expires_at: number;
  status: string;
  generation: number;
  consent_version: number;
  consent_required: boolean;
  task_set: unknown;
  scope_policy: unknown;
  resolved_tools: unknown;
  permissions: unknown;
  scopes: string[];
  ceilings: AgentGrantCeilings;
  created_at: number;
  updated_at: number;
}

/** The spec's "Agent grant update result". */
export interface AgentGrantUpdateResult {
  grant_id: string;
  status: 'active';
  generation: number;
  consent_version: number;
  token_families_pending_revocation: number;
  revocation_outbox_id: string;
  consent_required: boolean;
}

/** What the revocation outbox entry carries (sealed like every outbox payload). */
interface RevokePayload {
  tenantId: string;
  grantId: string;
  /** Families issued under a generation below this one are revoked. */
  belowGeneration: number;
}

const bad = (field: string, message: string) => badRequest(`${field}: ${message}`, [{ field, message }]);

/** RFC 9396 §2: an array of objects, each with a `type` string; `actions` (§2.2) a list of strings. */
function parseDetails(v: unknown, field = 'body.authorization_details'): Record<string, unknown>[] {
  if (!Array.isArray(v)) throw bad(field, 'must be an array of objects (RFC 9396 §2)');
  if (v.length < 1) throw bad(field, 'must hold at least one authorization detail');
  if (v.length > AGENT_GRANT_LIMITS.details) throw bad(field, `must hold at most ${AGENT_GRANT_LIMITS.details} items`);
  return v.map((d, i) => {
    if (!d || typeof d !== 'object' || Array.isArray(d)) throw bad(`${field}.${i}`, 'must be an object');
    const o = d as Record<string, unknown>;
    // Own members only: a JSON object's `type` or `actions`, never one inherited from Object.prototype.
    const type = Object.hasOwn(o, 'type') ? o.type : undefined;
    const actions = Object.hasOwn(o, 'actions') ? o.actions : undefined;
    if (typeof type !== 'string' || !type || type.length > AGENT_GRANT_LIMITS.typeLength)
      throw bad(
        `${field}.${i}.type`,
        `must be a string of 1 to ${AGENT_GRANT_LIMITS.typeLength} characters (RFC 9396 §2)`,
      );
    if (actions !== undefined && (!Array.isArray(actions) || !actions.every((a) => typeof a === 'string' && a)))
      throw bad(`${field}.${i}.actions`, 'must be an array of strings (RFC 9396 §2.2)');
    return o;
  });
}

function parsePurpose(v: unknown, field = 'body.purpose'): string | null {
  if (v === null) return null;
  if (typeof v !== 'string') throw bad(field, 'must be a string or null');
  if (v.length > AGENT_GRANT_LIMITS.purpose)
    throw bad(field, `must be at most ${AGENT_GRANT_LIMITS.purpose} characters`);
  return v;
}

/** A deadline after `now` and at most 90 days from it (the interface's bound; ms since the epoch). */
function parseExpiry(v: unknown, now: number, field = 'body.expires_at'): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw bad(field, 'must be an integer (ms since the epoch)');
  if (v <= now) throw bad(field, 'must be in the future');
  if (v > now + AGENT_GRANT_LIMITS.maxLifetimeMs)
    throw new ApiError(400, 'expires_at_too_far', `${field}: must be at most 90 days from now`, {
      details: [{ field, message: 'must be at most 90 days from now' }],
    });
  return v;
}

function parseCeiling(v: unknown, field: string): Ceiling {
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw bad(field, 'must be an object mapping authorization detail types to allowed actions');
  const entries: [string, string[]][] = [];
  for (const [type, actions] of Object.entries(v as Record<string, unknown>)) {
    if (!Array.isArray(actions) || !actions.every((a) => typeof a === 'string' && a))
      throw bad(`${field}.${type}`, 'must be an array of action names (or ["*"] for any)');
    entries.push([type, actions as string[]]);
  }
  // Object.fromEntries defines own properties: a type named `__proto__` stays a key (an
  // assignment would set the prototype instead).
  return Object.fromEntries(entries);
}

/** The first detail a ceiling does not cover, described; undefined when all are covered. */
export function exceeds(ceiling: Ceiling, details: Record<string, unknown>[]): string | undefined {
  // A Map of the ceiling's own entries: a detail type such as `constructor` or `__proto__` is
  // looked up as a key, never found on Object.prototype (that was a TypeError, a 500).
  const allowedByType = new Map(Object.entries(ceiling));
  for (const [i, d] of details.entries()) {
    const type = d.type as string;
    const allowed = allowedByType.get(type);
    if (!Array.isArray(allowed)) return `authorization_details.${i}: type ${JSON.stringify(type)} is not within it`;
    if (allowed.includes('*')) continue;
    const actions = (Object.hasOwn(d, 'actions') ? (d.actions as string[] | undefined) : undefined) ?? [];
    // A detail without actions asks for every action of its type (RFC 9396 §2.2): only `*` covers it.
    if (actions.length === 0)
      return `authorization_details.${i}: all actions of ${JSON.stringify(type)} are not within it`;
    const over = actions.filter((a) => !allowed.includes(a));
    if (over.length)
      return `authorization_details.${i}: actions ${over.join(', ')} of ${JSON.stringify(type)} are not within it`;
  }
  return undefined;
}

function checkCeilings(c: AgentGrantCeilings, details: Record<string, unknown>[]): void {
  for (const name of CEILING_NAMES) {
    const ceiling = c[name];
    if (!ceiling) continue;
    const why = exceeds(ceiling, details);
    if (why)
      throw new ApiError(
        403,
        `${name}_ceiling_exceeded`,
        `The ${name.replace('_', '-')} ceiling is exceeded: ${why}.`,
        {
          ceiling: name,
        },
      );
  }
}

function checkConsented(consented: Record<string, unknown>[], details: Record<string, unknown>[]): void {
  const w = widening(consented, details);
  if (!w) return;
  const field = `body.authorization_details.${w.index}.${w.member}`;
  throw new ApiError(403, 'consented_terms_exceeded', `${field}: ${w.message}; a PATCH may only narrow the grant.`, {
    details: [{ field, message: w.message }],
  });
}

/** The PATCH body, validated: each field named when it fails. */
function parsePatch(raw: unknown): {
  details: Record<string, unknown>[] | undefined;
  purpose: string | null | undefined;
  expiresAt: number | undefined;
  now: number;
} {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw bad('body', 'must be a JSON object');
  const b = raw as Record<string, unknown>;
  for (const k of IMMUTABLE_FIELDS)
    if (Object.hasOwn(b, k))
      throw new ApiError(400, 'immutable_field', `body.${k}: is immutable; create a new grant to change it`, {
        details: [{ field: `body.${k}`, message: 'is immutable' }],
      });
  if (!PATCHABLE.some((k) => Object.hasOwn(b, k)))
    throw bad('body', `must name at least one of ${PATCHABLE.join(', ')}`);
  const now = Date.now();
  return {
    details: Object.hasOwn(b, 'authorization_details') ? parseDetails(b.authorization_details) : undefined,
    purpose: Object.hasOwn(b, 'purpose') ? parsePurpose(b.purpose) : undefined,
    expiresAt: Object.hasOwn(b, 'expires_at') ? parseExpiry(b.expires_at, now) : undefined,
    now,
  };
}

/**
 * The grant's strong entity tag (RFC 9110 §8.8.3): its generation (raised by every PATCH, the
 * only change to its terms) and whether its current consent version is consented (the one
 * other part of its representation that changes, `consent_required`).
 */
export function agentGrantEtag(generation: number, consented: boolean): string {
  return `"g${generation}-c${consented ? 1 : 0}"`;
}

/**
 * RFC 9110 §13.1.1: `*` matches any current representation; otherwise the header is a list of
 * entity tags, compared strongly (a weak tag `W/"…"` never matches). A header that is not a
 * valid list matches nothing.
 */
export function ifMatchSatisfied(header: string, current: string): boolean {
  const h = header.trim();
  if (h === '*') return true;
  const tags = h.match(/(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*"/g) ?? [];
  return tags.some((t) => !t.startsWith('W/') && t === current);
}

function toView(g: AgentGrantRow, liveConsent: boolean): AgentGrantView {
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
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw bad('body', 'must be a JSON object');
    const b = raw as Record<string, unknown>;
    const now = Date.now();
    const str = (k: string, required: boolean): string | null => {
      const v = b[k];
      if (v === undefined || v === null) {
        if (required) throw bad(`body.${k}`, 'is required');
        return null;
      }
      if (typeof v !== 'string' || !v || v.length > 128)
        throw bad(`body.${k}`, 'must be a string of 1 to 128 characters');
      return v;
    };
    const clientId = str('client_id', true)!;
    const grantor = str('grantor_user_id', true)!;
    const delegator = str('delegator_user_id', false);
    const machine = str('machine_principal_id', false);
    const details = parseDetails(b.authorization_details);
    const purpose = b.purpose === undefined ? null : parsePurpose(b.purpose);
    const expiresAt = parseExpiry(b.expires_at, now);
    const c = b.ceilings as Record<string, unknown> | undefined;
    if (!c || typeof c !== 'object' || Array.isArray(c)) throw bad('body.ceilings', 'is required (an object)');
    const ceilings: AgentGrantCeilings = {
      updater: parseCeiling(c.updater, 'body.ceilings.updater'),
      grantor: parseCeiling(c.grantor, 'body.ceilings.grantor'),
    };
    if (delegator) ceilings.delegator = parseCeiling(c.delegator, 'body.ceilings.delegator');
    else if (c.delegator !== undefined) throw bad('body.ceilings.delegator', 'needs delegator_user_id');
    if (machine) ceilings.machine_principal = parseCeiling(c.machine_principal, 'body.ceilings.machine_principal');
    else if (c.machine_principal !== undefined)
      throw bad('body.ceilings.machine_principal', 'needs machine_principal_id');
    const scopes = b.scopes === undefined ? [] : b.scopes;
    if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string'))
      throw bad('body.scopes', 'must be an array of strings');
    checkCeilings(ceilings, details);
    const id = newId('aag');
    return this.ds.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const client = await scope.clients.getByClientId(clientId);
      if (!client) throw notFound(`Client ${clientId}`);
      for (const [k, u] of [
        ['grantor_user_id', grantor],
        ['delegator_user_id', delegator],
      ] as const) {
        if (u && !(await scope.users.get(u))) throw notFound(`User ${u} (${k})`);
      }
      if (machine && !(await scope.clients.getByClientId(machine)))
        throw notFound(`Client ${machine} (machine_principal_id)`);
      const row: Omit<AgentGrantRow, 'tenant_id'> = {
        id,
        client_id: clientId,
        grantor_user_id: grantor,
        delegator_user_id: delegator,
        machine_principal_id: machine,
        authorization_details: details,
        purpose,
        expires_at: expiresAt,
        status: 'active',
        generation: 1,
        consent_version: 1,
        immutable_terms: {
          task_set: b.task_set ?? null,
          scope_policy: b.scope_policy ?? null,
          resolved_tools: b.resolved_tools ?? null,
          permissions: b.permissions ?? null,
          scopes,
        },
        ceilings,
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
        summary: { client_id: clientId, generation: 1, types: details.map((d) => d.type) },
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
      // RFC 9110 §13.2.1: the precondition is evaluated before the content is processed, against
      // the state this transaction read (the generation guard of the write below keeps it).
      if (opts.ifMatch !== undefined) {
        const current = agentGrantEtag(g.generation, await scope.agentGrants.hasLiveConsent(id, g.consent_version));
        if (!ifMatchSatisfied(opts.ifMatch, current))
          throw new ApiError(
            412,
            'precondition_failed',
            "If-Match does not match the agent grant's current ETag; read the grant again (RFC 9110 §13.1.1).",
          );
      }
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
      const outboxId = await this.enqueueRevoke(tx, { tenantId, grantId: id, belowGeneration: generation });
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

  private enqueueRevoke(tx: Tx, p: RevokePayload): Promise<string> {
    return this.outbox.enqueueSealed(tx, { tenantId: p.tenantId, kind: OUTBOX_KIND_AGENT_GRANT_REVOKE, payload: p });
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
