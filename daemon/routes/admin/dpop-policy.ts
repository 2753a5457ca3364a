import type Router from '@koa/router';
import { DpopPolicyInput, DpopPolicyView } from '../../../shared/schemas/dpop.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { settingsSectionRoutes } from './settings-section.js';

/**
 * A tenant's DPoP policy (docs/dpop.md, RFC 9449): whether proofs must carry a server nonce
 * (§8, §9) and whether every token request must carry a proof. Same scopes and shape as the
 * other settings sections: PUT replaces it whole, with a strong ETag and optional If-Match.
 */
export function dpopPolicyRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  return settingsSectionRoutes(deps, api, {
    path: '/api/admin/tenants/:tenantId/dpop-policy',
    tag: 'admin: DPoP policy',
    service: (d) => d.dpop,
    input: DpopPolicyInput,
    view: DpopPolicyView,
    what: 'DPoP policy',
    summaries: {
      get: "The tenant's DPoP policy as stored and as it applies; the ETag is what If-Match on PUT compares",
      put:
        "Replace the tenant's DPoP policy (a field left out is cleared); optional If-Match (a strong ETag from GET, " +
        'or *): a mismatch is 412. Other daemons follow within 5 seconds',
    },
    invalid: 'invalid policy; the message names the field (not a boolean, or an unknown field)',
  });
}
