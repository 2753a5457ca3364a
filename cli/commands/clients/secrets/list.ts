import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { table, time } from '../../../format.js';

export default class ClientsSecretsList extends BaseCommand<typeof ClientsSecretsList> {
  static override summary = "List a client's live secrets (ids and times, never a value).";
  static override description =
    'Lists the secrets that authenticate the client now, oldest first: id, when added and when it stops ' +
    '(never, until a rotation gives it an expiry). Values are never shown: only hashes are stored. The same as ' +
    'GET …/clients/{clientId}/secrets.';
  static override examples = ['<%= config.bin %> <%= command.id %> --tenant ten_123 Xk2v9c0aQ1pUuW3e'];
  static override args = {
    client: Args.string({ description: 'the client_id, or the id (cli_…)', required: true }),
  };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const secrets = await this.services.clientLifecycle.listSecrets(this.flags.tenant, this.args.client);
    this.log(
      table(
        secrets,
        [
          { header: 'id', value: (s) => s.id },
          { header: 'created', value: (s) => time(s.created_at) },
          { header: 'expires', value: (s) => (s.expires_at === null ? 'never' : time(s.expires_at)) },
        ],
        'The client has no live secret.',
      ),
    );
    return secrets;
  }
}
