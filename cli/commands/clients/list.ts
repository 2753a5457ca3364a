import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { list, table } from '../../format.js';
import { toClientView } from '../../../shared/services/directory.js';

export default class ClientsList extends BaseCommand<typeof ClientsList> {
  static override summary = "List a tenant's OAuth clients.";
  static override description =
    'Lists the clients registered in one tenant, oldest first. Client secrets are never shown: only their hashes ' +
    'are stored.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123',
    "<%= config.bin %> <%= command.id %> --tenant ten_123 --json | jq -r '.[].client_id'",
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    limit: Flags.integer({ description: 'most clients to list', default: 100, min: 1, max: 1000 }),
    offset: Flags.integer({ description: 'clients to skip', default: 0, min: 0 }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const rows = await this.services.directory
      .scope(this.flags.tenant)
      .clients.list({ limit: this.flags.limit, offset: this.flags.offset });
    const clients = rows.map(toClientView);
    this.log(
      table(
        clients,
        [
          { header: 'client_id', value: (c) => c.client_id },
          { header: 'type', value: (c) => c.client_type },
          { header: 'status', value: (c) => c.status },
          { header: 'grant types', value: (c) => list(c.grant_types, ',') },
          { header: 'name', value: (c) => c.name },
        ],
        `No clients in tenant ${this.flags.tenant}.`,
      ),
    );
    return clients;
  }
}
