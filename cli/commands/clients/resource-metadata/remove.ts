import { Args, Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../../base.js';
import { usage } from '../../../http/base.js';
import { readLine } from '../../../http/prompt.js';

export default class ResourceMetadataRemove extends BaseCommand<typeof ResourceMetadataRemove> {
  static override summary = 'Stop hosting a resource server’s protected resource metadata.';
  static override description =
    'Removes the document: its URL answers 404 from then on, so MCP clients that discover the server through it ' +
    'can no longer find its authorization server. Strict introspection is left as it is. You must TYPE the ' +
    'client_id to confirm; a script passes it with --confirm; --json never prompts, so it needs --confirm. ' +
    'Audited as client.resource_metadata.remove. The same as ' +
    'DELETE /api/admin/tenants/{tenantId}/clients/{clientId}/resource-metadata.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 Xk2v9c0aQ1pUuW3e',
    {
      description: 'In a script.',
      command:
        '<%= config.bin %> <%= command.id %> --tenant ten_123 Xk2v9c0aQ1pUuW3e --confirm Xk2v9c0aQ1pUuW3e --json',
    },
  ];
  static override args = {
    client: Args.string({ description: 'the resource server’s client_id, or its id (cli_…)', required: true }),
  };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    confirm: Flags.string({ description: "the client's client_id, instead of typing it" }),
    'if-match': Flags.string({ description: 'the etag of `show`: refuse if the document changed since' }),
  };

  async run() {
    const f = this.flags;
    if (this.jsonEnabled() && f.confirm === undefined)
      throw usage('confirmation_required', "--json never prompts: pass --confirm with the client's client_id");
    await this.requireTenant(f.tenant);
    const { view } = await this.services.resourceServers.get(f.tenant, this.args.client);
    const typed =
      f.confirm ?? (await readLine(`Type the client_id ${view.client_id} to stop hosting its resource metadata: `));
    if (typed?.trim() !== view.client_id)
      throw new CliFailure(
        'confirmation_mismatch',
        `${f.confirm === undefined ? 'the typed confirmation' : '--confirm'} does not match ${view.client_id}: ` +
          'nothing was removed',
      );
    await this.services.resourceServers.remove(f.tenant, view.client_id, this.actor, {
      ...(f['if-match'] ? { ifMatch: f['if-match'] } : {}),
    });
    this.log(`Removed the protected resource metadata of ${view.client_id}.`);
    return { removed: true, client_id: view.client_id };
  }
}
