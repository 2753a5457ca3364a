import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';

export default class ClientsSecretsRevoke extends BaseCommand<typeof ClientsSecretsRevoke> {
  static override summary = 'Revoke one client secret at once.';
  static override description =
    'The secret stops authenticating now, on every daemon (a leaked one, or the old one once the new one is ' +
    'deployed). Audited as client.secret.revoke. The same as DELETE …/clients/{clientId}/secrets/{secretId}.';
  static override examples = ['<%= config.bin %> <%= command.id %> --tenant ten_123 Xk2v9c0aQ1pUuW3e csec_abc'];
  static override args = {
    client: Args.string({ description: 'the client_id, or the id (cli_…)', required: true }),
    secret: Args.string({ description: 'the secret id (csec_…; see `iam clients secrets list`)', required: true }),
  };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    await this.services.clientLifecycle.revokeSecret(this.flags.tenant, this.args.client, this.args.secret, this.actor);
    this.log(`Revoked secret ${this.args.secret}.`);
    return { revoked: true, id: this.args.secret };
  }
}
