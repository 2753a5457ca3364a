/**
 * A tenant's session timeouts (docs/security.md, "Session timeouts"), kept in
 * `tenants.settings.sessions`: `idleTimeoutSeconds` and `maxLifetimeSeconds`. `sessionPolicyOf`
 * is what SessionService.findSession applies to the section its one lookup reads (no extra
 * read); `view` and `update` are the admin API's, the CLI's and the console's, with a strong
 * ETag over the stored section for If-Match (RFC 9110 §13.1.1), like the branding.
 */
import type { Database } from '../db/index.js';
import { notFound } from '../errors.js';
import { TenantRepository } from '../repositories/index.js';
import { SessionPolicyInput } from '../schemas/session-policy.js';
import { parseInput } from '../schemas/validate.js';
import type { Actor } from './audit.js';
import { SESSION_TTL_MS } from './auth/policy.js';
import { requireSectionMatch, sectionEtag, updateSettingsSection } from './tenant-settings.js';

/** The timeouts as stored: only the fields an operator set. */
export type StoredSessionPolicy = SessionPolicyInput;

export interface SessionPolicyView {
  tenantId: string;
  policy: StoredSessionPolicy;
  effective: { idleTimeoutSeconds: number | null; maxLifetimeSeconds: number };
}

/**
 * The stored section, keeping only well-formed fields: a hand-edited or malformed section (or
 * field) reads as none, so it can neither break every sign-in nor end every session.
 */
export function sessionPolicyOf(section: unknown): StoredSessionPolicy {
  // Most tenants set no timeouts: every session lookup of theirs returns here, with no parse.
  if (!section || typeof section !== 'object' || Array.isArray(section)) return {};
  const raw = section as Record<string, unknown>;
  const out: StoredSessionPolicy = {};
  for (const k of ['idleTimeoutSeconds', 'maxLifetimeSeconds'] as const) {
    const one = SessionPolicyInput.safeParse({ [k]: raw[k] });
    if (one.success && one.data[k] !== undefined) out[k] = one.data[k];
  }
  return out;
}

/**
 * Whether a session has ended under its tenant's policy at `now` (ms): its age has reached the
 * absolute lifetime, or, with an idle timeout set, the time since it was last seen has reached
 * it. `last_seen_at` is written at most once a minute (SESSION_TOUCH_INTERVAL_MS), so the idle
 * timeout is precise to that minute. The service's own `expires_at` is checked by the caller.
 */
export function sessionOver(
  s: { created_at: number; last_seen_at: number },
  policy: StoredSessionPolicy,
  now: number,
): boolean {
  if (policy.maxLifetimeSeconds !== undefined && now - s.created_at >= policy.maxLifetimeSeconds * 1000) return true;
  return policy.idleTimeoutSeconds !== undefined && now - s.last_seen_at >= policy.idleTimeoutSeconds * 1000;
}

/** A strong validator (RFC 9110 §8.8.3) of the stored timeouts. */
export function sessionPolicyEtag(p: StoredSessionPolicy): string {
  return sectionEtag(p);
}

function viewOf(tenantId: string, policy: StoredSessionPolicy): { view: SessionPolicyView; etag: string } {
  return {
    view: {
      tenantId,
      policy,
      effective: {
        idleTimeoutSeconds: policy.idleTimeoutSeconds ?? null,
        maxLifetimeSeconds: policy.maxLifetimeSeconds ?? SESSION_TTL_MS / 1000,
      },
    },
    etag: sessionPolicyEtag(policy),
  };
}

export class SessionPolicyService {
  /** The validated body of PUT …/session-policy. */
  readonly input = SessionPolicyInput;

  constructor(private readonly ds: Database) {}

  /** The stored timeouts, what applies, and the ETag; a tenant that does not exist is 404. */
  async view(tenantId: string): Promise<{ view: SessionPolicyView; etag: string }> {
    const tenant = await new TenantRepository(this.ds).get(tenantId);
    if (!tenant) throw notFound(`Tenant ${tenantId}`);
    return viewOf(tenantId, sessionPolicyOf(tenant.settings?.sessions));
  }

  /**
   * Replaces the timeouts (PUT: a field left out is cleared), audited as
   * `tenant.session_policy.update` with before and after, in one transaction. `ifMatch`:
   * compared with the stored section's ETag inside that transaction (412 on a mismatch). The
   * new timeouts apply to the tenant's live sessions at their next request.
   */
  async update(
    tenantId: string,
    input: unknown,
    actor: Actor,
    opts: { ifMatch?: string; where?: string } = {},
  ): Promise<{ view: SessionPolicyView; etag: string }> {
    const parsed = parseInput(SessionPolicyInput, input, opts.where ?? '');
    const next: StoredSessionPolicy = {};
    if (parsed.idleTimeoutSeconds !== undefined) next.idleTimeoutSeconds = parsed.idleTimeoutSeconds;
    if (parsed.maxLifetimeSeconds !== undefined) next.maxLifetimeSeconds = parsed.maxLifetimeSeconds;
    const after = await updateSettingsSection(
      this.ds,
      { tenantId, section: 'sessions', action: 'tenant.session_policy.update', actor },
      (doc) => {
        const before = sessionPolicyOf(doc.sessions);
        requireSectionMatch(opts.ifMatch, sessionPolicyEtag(before), 'session policy');
        return { before, after: next };
      },
    );
    return viewOf(tenantId, after);
  }
}
