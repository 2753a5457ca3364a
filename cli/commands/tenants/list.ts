import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { table, time } from '../../format.js';
import { toTenantView } from '../../../shared/services/directory.js';

export default class TenantsList extends BaseCommand<typeof TenantsList> {
  static override summary = 'List tenants.';
  static override description = 'Lists tenants, oldest first.';
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    "<%= config.bin %> <%= command.id %> --json | jq -r '.[].id'",
  ];
  static override flags = {
    limit: Flags.integer({ description: 'most tenants to list', default: 100, min: 1, max: 1000 }),
    offset: Flags.integer({ description: 'tenants to skip', default: 0, min: 0 }),
  };

  async run() {
    const tenants = (await this.services.directory.listTenants(this.flags.limit, this.flags.offset)).map(toTenantView);
    this.log(
      table(
        tenants,
        [
          { header: 'id', value: (t) => t.id },
          { header: 'state', value: (t) => t.lifecycle_state },
          { header: 'created', value: (t) => time(t.created_at) },
          { header: 'name', value: (t) => t.name },
        ],
        'No tenants. Create one with: iam tenants create --name <name>',
      ),
    );
    return tenants;
  }
}
