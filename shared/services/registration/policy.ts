/**
 * A tenant's dynamic registration policy (docs/registration.md, "Policy"), kept in
 * `tenants.settings.registration` and served by the settings-section routes: `mode` (closed by
 * default), the scope ceiling, the open mode's limits, the unused-client expiry, the secret
 * lifetime and the trusted software statement issuers. `registrationPolicyOf` reads a stored
 * section leniently: anything malformed reads as the default, which is closed.
 */
import { createHash } from 'node:crypto';
import type { Database } from '../../db/index.js';
import { ApiError, notFound } from '../../errors.js';
import { TenantRepository } from '../../repositories/index.js';
import { RegistrationPolicyInput } from '../../schemas/registration.js';
import { parseInput } from '../../schemas/validate.js';
import type { Actor } from '../audit.js';
import { ifMatchSatisfied } from '../agents/terms.js';
import { canonicalize } from '../federation/jcs.js';
import { updateSettingsSection } from '../tenant-settings.js';

export type RegistrationPolicy = RegistrationPolicyInput;

/** The scopes a registered client may hold when the tenant sets no ceiling. */
export const DEFAULT_SCOPE_CEILING = ['openid', 'profile', 'email', 'offline_access'];

export const CLOSED: RegistrationPolicy = { mode: 'closed' };

export function registrationPolicyOf(section: unknown): RegistrationPolicy {
  const r = RegistrationPolicyInput.safeParse(section ?? {});
  return r.success ? r.data : CLOSED;
}

export function registrationPolicyEtag(p: RegistrationPolicy): string {
  return `"${createHash('sha256').update(canonicalize(p)).digest('base64url').slice(0, 32)}"`;
}

export interface RegistrationPolicyView {
  tenantId: string;
  policy: RegistrationPolicy;
}

export class RegistrationPolicyService {
  constructor(private readonly ds: Database) {}

  /** The policy that applies to the tenant; a tenant that does not exist is 404. */
  async policy(tenantId: string): Promise<RegistrationPolicy> {
    const tenant = await new TenantRepository(this.ds).get(tenantId);
    if (!tenant) throw notFound(`Tenant ${tenantId}`);
    return registrationPolicyOf(tenant.settings?.registration);
  }

  async view(tenantId: string): Promise<{ view: RegistrationPolicyView; etag: string }> {
    const policy = await this.policy(tenantId);
    return { view: { tenantId, policy }, etag: registrationPolicyEtag(policy) };
  }

  /** Replaces the policy whole, audited as `tenant.registration_policy.update` (before, after). */
  async update(
    tenantId: string,
    input: unknown,
    actor: Actor,
    opts: { ifMatch?: string; where?: string } = {},
  ): Promise<{ view: RegistrationPolicyView; etag: string }> {
    const next = parseInput(RegistrationPolicyInput, input ?? {}, opts.where ?? '');
    const after = await updateSettingsSection(
      this.ds,
      { tenantId, section: 'registration', action: 'tenant.registration_policy.update', actor },
      (doc) => {
        const before = registrationPolicyOf(doc.registration);
        if (opts.ifMatch !== undefined && !ifMatchSatisfied(opts.ifMatch, registrationPolicyEtag(before)))
          throw new ApiError(
            412,
            'precondition_failed',
            "If-Match does not match the registration policy's current ETag; read it again (RFC 9110 §13.1.1).",
          );
        return { before, after: next };
      },
    );
    return { view: { tenantId, policy: after }, etag: registrationPolicyEtag(after) };
  }
}
