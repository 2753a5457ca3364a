import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { showClientMetadataPolicy } from '../../../client-metadata.js';

export default class TenantsClientMetadataDocumentsShow extends BaseCommand<typeof TenantsClientMetadataDocumentsShow> {
  static override summary = "Show a tenant's client ID metadata document policy.";
  static override description =
    'The policy as GET /api/admin/tenants/{tenantId}/client-metadata-documents answers it: whether clients may ' +
    'use the https URL of a metadata document as client_id at this tenant, the hosts allowed (none listed: any ' +
    'public host) and denied, and the ETag. See docs/client-metadata-documents.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd',
    "<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --json | jq '.policy.enabled'",
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const { view, etag } = await this.services.clientMetadata.policy.view(this.flags.tenant);
    this.log(showClientMetadataPolicy(view, etag));
    return { ...view, etag };
  }
}
