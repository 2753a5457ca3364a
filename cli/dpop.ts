/** How `iam tenants dpop show|set` print a tenant's DPoP policy (docs/dpop.md). */
import type { DpopPolicyView } from '../shared/services/dpop/index.js';
import { fields } from './format.js';

const yes = (b: boolean) => (b ? 'yes' : 'no');

export function showDpopPolicy(v: DpopPolicyView, etag: string): string {
  return [
    `DPoP policy of tenant ${v.tenantId}`,
    fields([
      ['require nonce', yes(v.effective.requireNonce)],
      ['require DPoP', yes(v.effective.requireDpop)],
      ['etag', etag],
    ]),
  ].join('\n');
}
