/** How `iam tenants client-metadata-documents show|set` print a tenant's policy (docs/client-metadata-documents.md). */
import type { ClientMetadataPolicyView } from '../shared/services/client-metadata/policy.js';
import { fields } from './format.js';

export function showClientMetadataPolicy(v: ClientMetadataPolicyView, etag: string): string {
  const p = v.policy;
  return [
    `Client ID metadata documents at tenant ${v.tenantId}`,
    fields([
      ['enabled', p.enabled ? 'yes' : 'no'],
      ['allowed hosts', p.allowHosts.length ? p.allowHosts.join(', ') : '(any public host)'],
      ['denied hosts', p.denyHosts.length ? p.denyHosts.join(', ') : '(none)'],
      ['etag', etag],
    ]),
  ].join('\n');
}
