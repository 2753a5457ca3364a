import { Args, Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../base.js';
import { usage } from '../../http/base.js';
import { readLine } from '../../http/prompt.js';

export default class ClientsDelete extends BaseCommand<typeof ClientsDelete> {
  static override summary = 'Delete an OAuth client, with its secrets, codes, refresh tokens and consents.';
  static override description =
    'Deletes the client for good: its secrets, authorization codes, refresh token families and the consents given ' +
    'to it go with it, and its access tokens stop at once. It cannot be undone. You must TYPE the client_id to ' +
    'confirm; a script passes it with --confirm (checked the same way); --json never prompts, so it needs ' +
    '--confirm. Audited as client.delete. The same as DELETE /api/admin/tenants/{tenantId}/clients/{clientId}.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 Xk2v9c0aQ1pUuW3e',
    {
      description: 'In a script.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_123 Xk2v9c0aQ1pUuW3e --confirm Xk2v9c0aQ1pUuW3e --json',
    },
  ];
  static override args = {
    client: Args.string({ description: 'the client_id, or the id (cli_…)', required: true }),
  };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    confirm: Flags.string({ description: "the client's client_id, instead of typing it" }),
  };

  async run() {
    const f = this.flags;
    // Before anything else: a script must never hang on a prompt.
    if (this.jsonEnabled() && f.confirm === undefined)
      throw usage('confirmation_required', "--json never prompts: pass --confirm with the client's client_id");
    await this.requireTenant(f.tenant);
    const { client } = await this.services.clientLifecycle.get(f.tenant, this.args.client);
    const typed =
      f.confirm ??
      (await readLine(`Type the client_id ${client.client_id} to delete client "${client.name}" for good: `));
    if (typed?.trim() !== client.client_id)
      throw new CliFailure(
        'confirmation_mismatch',
        `${f.confirm === undefined ? 'the typed confirmation' : '--confirm'} does not match ` +
          `${client.client_id}: nothing was deleted`,
      );
    await this.services.clientLifecycle.delete(f.tenant, client.id, this.actor);
    this.log(`Deleted client "${client.name}" (${client.client_id}).`);
    return { deleted: true, id: client.id, client_id: client.client_id };
  }
}
