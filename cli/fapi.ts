import type { FapiPolicyView } from '../shared/services/fapi/index.js';
import { fields } from './format.js';

const DESCRIPTIONS: Record<string, string> = {
  off: 'off',
  'fapi2-security': 'FAPI 2.0 Security Profile',
  'fapi2-message-signing': 'FAPI 2.0 Security Profile + Message Signing (JAR, JARM)',
};

/** How `iam tenants fapi show|set` print the profile (docs/fapi.md). */
export function showFapiPolicy(v: FapiPolicyView, etag: string): string {
  return [
    `FAPI 2.0 profile of tenant ${v.tenantId}`,
    fields([
      ['profile', `${v.policy.profile} (${DESCRIPTIONS[v.policy.profile]})`],
      ['clients', "each client's own fapi_profile, when set, overrides it"],
      ['etag', etag],
    ]),
  ].join('\n');
}
