import type Router from '@koa/router';
import { SessionPolicyInput, SessionPolicyView } from '../../../shared/schemas/session-policy.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { settingsSectionRoutes } from './settings-section.js';

/**
 * A tenant's session timeouts (docs/security.md, "Session timeouts"): the idle and absolute
 * lifetime of its browser sessions. Same scopes and shape as the branding routes: PUT replaces
 * the section whole; both answer the stored section with a strong ETag, which an optional
 * If-Match on PUT compares (RFC 9110 §13.1.1).
 */
export function sessionPolicyRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  return settingsSectionRoutes(deps, api, {
    path: '/api/admin/tenants/:tenantId/session-policy',
    tag: 'admin: session policy',
    service: (d) => d.sessionPolicy,
    input: SessionPolicyInput,
    view: SessionPolicyView,
    what: 'session policy',
    summaries: {
      get: "The tenant's session timeouts as stored and as they apply; the ETag is what If-Match on PUT compares",
      put:
        "Replace the tenant's session timeouts (a field left out is cleared); optional If-Match (a strong ETag " +
        "from GET, or *): a mismatch is 412. The tenant's live sessions follow at their next request",
    },
    invalid:
      'invalid timeouts; the message names the field (not a whole number of seconds, under 300, idle over ' +
      '30 days, absolute over 7 days)',
  });
}
