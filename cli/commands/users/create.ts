import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { fields, time } from '../../format.js';
import type { User } from '../../../shared/db/entities.js';

export default class UsersCreate extends BaseCommand<typeof UsersCreate> {
  static override summary = 'Create a user in a tenant.';
  static override description =
    'Creates an active user. The email address is stored in lower case and must be unique within the tenant.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --email ada@example.com --name "Ada Lovelace"',
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    email: Flags.string({ description: 'email address, unique within the tenant', required: true }),
    name: Flags.string({ description: 'display name', required: true }),
  };
  static override fieldFlags = { email: 'email', name: 'name' };

  async run(): Promise<User> {
    await this.requireTenant(this.flags.tenant);
    const input = { email: this.flags.email, name: this.flags.name };
    this.serviceInput = input;
    const user = await this.directory().createUser(this.flags.tenant, input, this.actor);
    this.log(`Created user ${user.id} in tenant ${user.tenant_id}`);
    this.log(
      fields([
        ['id', user.id],
        ['email', user.email],
        ['name', user.name],
        ['status', user.status],
        ['created', time(user.created_at)],
      ]),
    );
    return { ...user };
  }
}
