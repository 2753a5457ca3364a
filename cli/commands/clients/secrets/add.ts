import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { fields, time } from '../../../format.js';
import { DEFAULT_OLD_SECRET_EXPIRES_IN_S, MAX_OLD_SECRET_EXPIRES_IN_S } from '../../../../shared/schemas/clients.js';

export default class ClientsSecretsAdd extends BaseCommand<typeof ClientsSecretsAdd> {
  static override summary = 'Add a client secret (rotation): the new one is printed once.';
  static override description =
    'Adds a new secret to a client that authenticates with one, and prints it once: only a hash is stored. The ' +
    'secrets it had keep working for --old-secret-expires-in seconds (default 86400, one day; 0 ends them now), ' +
    'time to deploy the new one; then they stop. Revoke one at once with `iam clients secrets revoke`. Audited ' +
    'as client.secret.add (the id, never the value). The same as POST …/clients/{clientId}/secrets.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 Xk2v9c0aQ1pUuW3e',
    {
      description: 'The old secret keeps working for one hour.',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_123 Xk2v9c0aQ1pUuW3e --old-secret-expires-in 3600',
    },
  ];
  static override args = {
    client: Args.string({ description: 'the client_id, or the id (cli_…)', required: true }),
  };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    'old-secret-expires-in': Flags.integer({
      description: 'seconds the existing secrets keep working',
      default: DEFAULT_OLD_SECRET_EXPIRES_IN_S,
      min: 0,
      max: MAX_OLD_SECRET_EXPIRES_IN_S,
    }),
  };
  static override fieldFlags = { old_secret_expires_in: 'old-secret-expires-in' };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const input = { old_secret_expires_in: f['old-secret-expires-in'] };
    this.serviceInput = input;
    const s = await this.services.clientLifecycle.addSecret(f.tenant, this.args.client, input, this.actor);
    this.log(
      fields([
        ['secret id', s.id],
        ['client_secret', s.client_secret],
        ['created', time(s.created_at)],
        ['old secrets stop', s.old_secrets_expire_at === null ? '(there were none)' : time(s.old_secrets_expire_at)],
      ]),
    );
    // On stderr as well as in --json mode, so it is seen even when stdout goes to a file.
    process.stderr.write('\nWARNING: store the client secret now. It cannot be shown again: only a hash is stored.\n');
    return s;
  }
}
