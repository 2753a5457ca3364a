import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { table, time } from '../../format.js';
import { TENANT_STATES } from '../../../shared/schemas/tenants.js';

export default class TenantsList extends BaseCommand<typeof TenantsList> {
  static override summary = 'List tenants.';
  static override description =
    'Lists tenants, oldest first, optionally only those in some lifecycle states or whose name starts with a ' +
    'prefix (case-sensitive). --json prints the tenants (with purge_after, set while pending deletion).';
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --state suspended --state pending_deletion',
    "<%= config.bin %> <%= command.id %> --name-prefix Acme --json | jq -r '.[].id'",
  ];
  static override flags = {
    limit: Flags.integer({ description: 'most tenants to list', default: 100, min: 1, max: 1000 }),
    offset: Flags.integer({ description: 'tenants to skip', default: 0, min: 0 }),
    state: Flags.string({
      description: 'only tenants in this lifecycle state (repeatable)',
      multiple: true,
      options: [...TENANT_STATES],
    }),
    'name-prefix': Flags.string({ description: 'only tenants whose name starts with this' }),
  };

  async run() {
    const { tenants } = await this.services.tenantDirectory.list(
      {
        limit: this.flags.limit,
        offset: this.flags.offset,
        lifecycle_state: this.flags.state as (typeof TENANT_STATES)[number][] | undefined,
        name_prefix: this.flags['name-prefix'],
      },
      null,
    );
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
