import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';

export default class ResourceMetadataShow extends BaseCommand<typeof ResourceMetadataShow> {
  static override summary = 'Show the protected resource metadata the service hosts for a resource server.';
  static override description =
    'Shows the document (RFC 9728) served at {issuer}/resource-metadata/{client_id}, its URL and its etag (what ' +
    '`set --if-match` and `remove --if-match` compare). The same as ' +
    'GET /api/admin/tenants/{tenantId}/clients/{clientId}/resource-metadata.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 Xk2v9c0aQ1pUuW3e',
    "<%= config.bin %> <%= command.id %> --tenant ten_123 Xk2v9c0aQ1pUuW3e --json | jq -r '.url'",
  ];
  static override args = {
    client: Args.string({ description: 'the resource server’s client_id, or its id (cli_…)', required: true }),
  };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const { view, etag } = await this.services.resourceServers.get(this.flags.tenant, this.args.client);
    this.log(`URL:    ${view.url}`);
    this.log(`ETag:   ${etag}`);
    this.log(`Strict introspection: ${view.strict_introspection ? 'on' : 'off'}`);
    this.log(JSON.stringify(view.document, null, 2));
    return { ...view, etag };
  }
}
