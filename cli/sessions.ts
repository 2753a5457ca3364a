/** How `iam tenants sessions show|set` print a tenant's session timeouts (docs/security.md). */
import { formatDuration } from '../shared/schemas/session-policy.js';
import type { SessionPolicyView } from '../shared/services/session-policy.js';
import { fields } from './format.js';

export function showSessionPolicy(v: SessionPolicyView, etag: string): string {
  const p = v.policy;
  return [
    `Session timeouts of tenant ${v.tenantId}`,
    fields([
      ['idle timeout', p.idleTimeoutSeconds ? formatDuration(p.idleTimeoutSeconds) : '(none)'],
      [
        'absolute lifetime',
        p.maxLifetimeSeconds
          ? formatDuration(p.maxLifetimeSeconds)
          : `(the service's ${formatDuration(v.effective.maxLifetimeSeconds)})`,
      ],
      ['etag', etag],
    ]),
  ].join('\n');
}
