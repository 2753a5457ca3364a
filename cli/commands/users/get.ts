import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { userDetailFields } from '../../users.js';
import type { UserDetail } from '../../../shared/services/users.js';

export default class UsersGet extends BaseCommand<typeof UsersGet> {
  static override summary = 'Show one user.';
  static override description =
    'Shows a user with its status, times, whether the address is verified, the last successful sign-in, the ' +
    'upstream identities linked to it, its passkey count and its custom claim values, and the ETag that ' +
    '`iam users update --if-match` (and If-Match on the admin API) compares. See docs/directory.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_123',
    "<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_123 --json | jq -r '.etag'",
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    user: Flags.string({ description: 'id of the user', required: true }),
  };

  async run(): Promise<UserDetail & { etag: string }> {
    await this.requireTenant(this.flags.tenant);
    const { user, etag } = await this.services.userDirectory.get(this.flags.tenant, this.flags.user);
    this.log(userDetailFields(user, etag));
    return { ...user, etag };
  }
}
