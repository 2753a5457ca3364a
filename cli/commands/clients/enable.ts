import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';

export default class ClientsEnable extends BaseCommand<typeof ClientsEnable> {
  static override summary = 'Enable a disabled OAuth client: its credentials work again.';
  static override description =
    'Enables the client: its secrets (or keys) authenticate again. Tokens the disable revoked stay revoked: its ' +
    'users sign in again. Audited as client.enable. The same as ' +
    'POST /api/admin/tenants/{tenantId}/clients/{clientId}/enable.';
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
    const client = await this.services.clientLifecycle.enable(this.flags.tenant, this.args.client, this.actor);
    this.log(`Client "${client.name}" (${client.client_id}) is ${client.status}.`);
    return client;
  }
}
