import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { fields, time } from '../../format.js';
import { toTenantView } from '../../../shared/services/directory.js';

export default class TenantsCreate extends BaseCommand<typeof TenantsCreate> {
  static override summary = 'Create a tenant.';
  static override description = 'Creates an active tenant and prints its id, which the clients and users commands take as --tenant.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --name "Acme Corp"',
    {
      description: 'A tenant where anyone with a working mailbox may sign up.',
      command: '<%= config.bin %> <%= command.id %> --name "Community" --allow-signup',
    },
    {
      description: 'Capture the new tenant id in a script.',
      command: 'TENANT=$(<%= config.bin %> <%= command.id %> --name "Acme Corp" --json | jq -r .id)',
    },
  ];
  static override flags = {
    name: Flags.string({ description: 'display name of the tenant', required: true }),
    'allow-signup': Flags.boolean({ description: 'let unknown addresses sign up by proving their mailbox with an email code (off by default)', default: false }),
  };
  static override fieldFlags = { name: 'name', allow_signup: 'allow-signup' };

  async run() {
    const input = { name: this.flags.name, allow_signup: this.flags['allow-signup'] };
    this.serviceInput = input;
    const tenant = toTenantView(await this.directory().createTenant(input, this.actor));
    this.log(`Created tenant ${tenant.id}`);
    this.log(fields([
      ['id', tenant.id],
      ['name', tenant.name],
      ['state', tenant.lifecycle_state],
      ['sign-up', tenant.allow_signup ? 'open' : 'closed'],
      ['created', time(tenant.created_at)],
    ]));
    return tenant;
  }
}
