/**
 * A tenant's authorization request policy (docs/par.md), kept in
 * `tenants.settings.authorizationRequests`: `requirePushed` makes every client of the tenant push
 * its requests (RFC 9126 §5), whatever its own `require_pushed_authorization_requests` says.
 * /authorize reads the section from its one client lookup (ResolvedClient), no extra read.
 */
import type { Database } from '../../db/index.js';
import { AuthorizationRequestPolicyInput } from '../../schemas/authorization-requests.js';
import { parseInput } from '../../schemas/validate.js';
import type { Actor } from '../audit.js';
import { PolicySection, sectionEtag } from '../tenant-settings.js';

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
  private readonly section: PolicySection<AuthorizationRequestPolicyInput>;

  constructor(ds: Database) {
    this.section = new PolicySection(ds, {
      section: 'authorizationRequests',
      action: 'tenant.authorization_requests.update',
      what: 'authorization request policy',
      of: authorizationRequestPolicyOf,
    });
  }

  /** The stored policy and its ETag; a tenant that does not exist is 404. */
  async view(tenantId: string): Promise<{ view: AuthorizationRequestPolicyView; etag: string }> {
    return viewOf(tenantId, await this.section.read(tenantId));
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
    return viewOf(tenantId, await this.section.replace(tenantId, next, actor, opts.ifMatch));
  }
}
