import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';

export default class ClientsDisable extends BaseCommand<typeof ClientsDisable> {
  static override summary = 'Disable an OAuth client: it gets invalid_client everywhere and its tokens stop at once.';
  static override description =
    'Disables the client: /token, /revoke and /introspect answer invalid_client and /authorize shows an error ' +
    'page; in the same transaction its refresh token families are revoked, its authorization codes deleted, and its ' +
    'access tokens issued until now become inactive (they stay so after `iam clients enable`). Already disabled: ' +
    'nothing changes. Audited as client.disable. The same as ' +
    'POST /api/admin/tenants/{tenantId}/clients/{clientId}/disable.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 Xk2v9c0aQ1pUuW3e',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 cli_abc --json',
  ];
  static override args = {
    client: Args.string({ description: 'the client_id, or the id (cli_…)', required: true }),
  };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const client = await this.services.clientLifecycle.disable(this.flags.tenant, this.args.client, this.actor);
    this.log(`Client "${client.name}" (${client.client_id}) is ${client.status}.`);
    return client;
  }
}
