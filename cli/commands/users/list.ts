import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { table, time } from '../../format.js';
import type { User } from '../../../shared/db/entities.js';

export default class UsersList extends BaseCommand<typeof UsersList> {
  static override summary = "List a tenant's users.";
  static override description = 'Lists the users of one tenant, oldest first.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123',
    "<%= config.bin %> <%= command.id %> --tenant ten_123 --json | jq -r '.[].email'",
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    limit: Flags.integer({ description: 'most users to list', default: 100, min: 1, max: 1000 }),
    offset: Flags.integer({ description: 'users to skip', default: 0, min: 0 }),
  };

  async run(): Promise<User[]> {
    await this.requireTenant(this.flags.tenant);
    const users = await this.services.directory
      .scope(this.flags.tenant)
      .users.list({ limit: this.flags.limit, offset: this.flags.offset });
    this.log(
      table(
        users,
        [
          { header: 'id', value: (u) => u.id },
          { header: 'status', value: (u) => u.status },
          { header: 'created', value: (u) => time(u.created_at) },
          { header: 'email', value: (u) => u.email },
          { header: 'name', value: (u) => u.name },
        ],
        `No users in tenant ${this.flags.tenant}.`,
      ),
    );
    return users;
  }
}
