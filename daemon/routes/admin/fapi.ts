import type Router from '@koa/router';
import { FapiPolicyInput, FapiPolicyView } from '../../../shared/schemas/fapi.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { settingsSectionRoutes } from './settings-section.js';

/**
 * A tenant's FAPI 2.0 profile (docs/fapi.md): off, fapi2-security or fapi2-message-signing;
 * a client's own `fapi_profile` overrides it. Same scopes and shape as the other settings
 * sections: PUT replaces it whole, with a strong ETag and optional If-Match; audited.
 */
export function fapiPolicyRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  return settingsSectionRoutes(deps, api, {
    path: '/api/admin/tenants/:tenantId/fapi',
    tag: 'admin: FAPI 2.0 profile',
    service: (d) => d.fapi,
    input: FapiPolicyInput,
    view: FapiPolicyView,
    what: 'FAPI profile',
    summaries: {
      get: "The tenant's FAPI 2.0 profile as stored; the ETag is what If-Match on PUT compares",
      put:
        "Replace the tenant's FAPI 2.0 profile; optional If-Match (a strong ETag from GET, or *): a mismatch is 412. " +
        'Other daemons follow within 5 seconds',
    },
    invalid:
      'invalid profile; the message names the field ' +
      '(not one of off, fapi2-security, fapi2-message-signing, or an unknown field)',
  });
}
