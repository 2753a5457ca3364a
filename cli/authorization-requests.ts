import type { AuthorizationRequestPolicyView } from '../shared/services/par/policy.js';
import { fields } from './format.js';

/** How `iam tenants authorization-requests show|set` print the policy (docs/par.md). */
export function showAuthorizationRequestPolicy(v: AuthorizationRequestPolicyView, etag: string): string {
  return [
    `Authorization request policy of tenant ${v.tenantId}`,
    fields([
      [
        'pushed requests (PAR)',
        v.policy.requirePushed ? 'required of every client' : "as each client's registration says",
      ],
      ['etag', etag],
    ]),
  ].join('\n');
}
