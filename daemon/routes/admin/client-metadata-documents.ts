import type Router from '@koa/router';
import { ClientMetadataPolicyInput, ClientMetadataPolicyView } from '../../../shared/schemas/client-metadata.js';
import type { AppDeps, AppState } from '../../context.js';
import type { ApiRegistry } from '../../openapi.js';
import { settingsSectionRoutes } from './settings-section.js';

/**
 * A tenant's client ID metadata document policy (docs/client-metadata-documents.md, "Policy"):
 * whether clients may name themselves by a document URL, and from which hosts. Same scopes and
 * shape as the other settings sections: PUT replaces it whole, with an optional If-Match.
 */
export function clientMetadataPolicyRoutes(deps: AppDeps, api: ApiRegistry): Router<AppState> {
  return settingsSectionRoutes(deps, api, {
    path: '/api/admin/tenants/:tenantId/client-metadata-documents',
    tag: 'admin: client metadata documents',
    service: (d) => d.clientMetadata.policy,
    input: ClientMetadataPolicyInput,
    view: ClientMetadataPolicyView,
    what: 'client metadata document policy',
    summaries: {
      get: "The tenant's client ID metadata document policy; the ETag is what If-Match on PUT compares",
      put:
        "Replace the tenant's client ID metadata document policy (enabled, allowHosts, denyHosts); optional " +
        'If-Match (a strong ETag from GET, or *): a mismatch is 412',
    },
    invalid:
      'invalid policy; the message names the field (enabled missing, a host that is not a host name or *.suffix)',
  });
}
