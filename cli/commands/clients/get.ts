import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { showClient } from '../../client-view.js';

export default class ClientsGet extends BaseCommand<typeof ClientsGet> {
  static override summary = 'Show one OAuth client of a tenant.';
  static override description =
    'Shows the client named by its client_id or its id (cli_…), never a secret (see `iam clients secrets list` ' +
    'for its secrets by id). The etag is what `iam clients update --if-match` compares. The same as ' +
    'GET /api/admin/tenants/{tenantId}/clients/{clientId}.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 Xk2v9c0aQ1pUuW3e',
    "<%= config.bin %> <%= command.id %> --tenant ten_123 cli_abc --json | jq -r '.etag'",
  ];
  static override args = {
    client: Args.string({ description: 'the client_id, or the id (cli_…)', required: true }),
  };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const { client, etag } = await this.services.clientLifecycle.get(this.flags.tenant, this.args.client);
    this.log(showClient(client, etag));
    return { ...client, etag };
  }
}
