import type Router from '@koa/router';
import {
  AuthorizationRequestPolicyInput,
  AuthorizationRequestPolicyView,
} from '../../../shared/schemas/authorization-requests.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { settingsSectionRoutes } from './settings-section.js';

/**
 * A tenant's authorization request policy (docs/par.md): `requirePushed` makes every client of
 * the tenant use pushed authorization requests (RFC 9126 §5). Same scopes and shape as the
 * other settings sections: PUT replaces it whole, both answer a strong ETag that an optional
 * If-Match on PUT compares (RFC 9110 §13.1.1).
 */
export function authorizationRequestPolicyRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  return settingsSectionRoutes(deps, api, {
    path: '/api/admin/tenants/:tenantId/authorization-requests',
    tag: 'admin: authorization requests',
    service: (d) => d.par.policy,
    input: AuthorizationRequestPolicyInput,
    view: AuthorizationRequestPolicyView,
    what: 'authorization request policy',
    summaries: {
      get: "The tenant's authorization request policy (RFC 9126 §5); the ETag is what If-Match on PUT compares",
      put:
        "Replace the tenant's authorization request policy; optional If-Match (a strong ETag from GET, or *): " +
        'a mismatch is 412. Applies to the next /authorize of every client of the tenant',
    },
    invalid: 'requirePushed is not a boolean, or an unknown field',
  });
}
