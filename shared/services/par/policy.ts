/**
 * A tenant's authorization request policy (docs/par.md), kept in
 * `tenants.settings.authorizationRequests`: `requirePushed` makes every client of the tenant push
 * its requests (RFC 9126 §5), whatever its own `require_pushed_authorization_requests` says.
 * /authorize reads the section from its one client lookup (ResolvedClient), no extra read.
 */
import type { Database } from '../../db/index.js';
import { notFound } from '../../errors.js';
import { TenantRepository } from '../../repositories/index.js';
import { AuthorizationRequestPolicyInput } from '../../schemas/authorization-requests.js';
import { parseInput } from '../../schemas/validate.js';
import type { Actor } from '../audit.js';
import { requireSectionMatch, sectionEtag, updateSettingsSection } from '../tenant-settings.js';

export interface AuthorizationRequestPolicyView {
  tenantId: string;
  policy: AuthorizationRequestPolicyInput;
}

/** The stored section, a malformed one reading as the default (nothing required). */
export function authorizationRequestPolicyOf(section: unknown): AuthorizationRequestPolicyInput {
  const r = AuthorizationRequestPolicyInput.safeParse(section ?? {});
  return r.success ? r.data : { requirePushed: false };
}

const viewOf = (tenantId: string, policy: AuthorizationRequestPolicyInput) => ({
  view: { tenantId, policy },
  etag: sectionEtag(policy),
});

export class AuthorizationRequestPolicyService {
  constructor(private readonly ds: Database) {}

  /** The stored policy and its ETag; a tenant that does not exist is 404. */
  async view(tenantId: string): Promise<{ view: AuthorizationRequestPolicyView; etag: string }> {
    const tenant = await new TenantRepository(this.ds).get(tenantId);
    if (!tenant) throw notFound(`Tenant ${tenantId}`);
    return viewOf(tenantId, authorizationRequestPolicyOf(tenant.settings?.authorizationRequests));
  }

  /**
   * Replaces the policy, audited as `tenant.authorization_requests.update` with before and after,
   * in one transaction; `ifMatch` is compared inside it (412 on a mismatch).
   */
  async update(
    tenantId: string,
    input: unknown,
    actor: Actor,
    opts: { ifMatch?: string; where?: string } = {},
  ): Promise<{ view: AuthorizationRequestPolicyView; etag: string }> {
    const next = parseInput(AuthorizationRequestPolicyInput, input, opts.where ?? '');
    const after = await updateSettingsSection(
      this.ds,
      { tenantId, section: 'authorizationRequests', action: 'tenant.authorization_requests.update', actor },
      (doc) => {
        const before = authorizationRequestPolicyOf(doc.authorizationRequests);
        requireSectionMatch(opts.ifMatch, sectionEtag(before), 'authorization request policy');
        return { before, after: next };
      },
    );
    return viewOf(tenantId, after);
  }
}
