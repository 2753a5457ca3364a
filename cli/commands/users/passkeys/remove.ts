import { Args, Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../../base.js';

export default class UsersPasskeysRemove extends BaseCommand<typeof UsersPasskeysRemove> {
  static override summary = "Remove one of a user's passkeys.";
  static override description =
    'Removes the passkey (for a user who lost the device): it can no longer sign in, and a sign-in with it ' +
    'tells the browser to forget it. The audit event `passkey.remove` names you as the actor. A passkey of ' +
    'another user is not found. The same as DELETE /api/admin/tenants/{tenantId}/users/{id}/passkeys/{passkeyId}.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_123 pk_abc',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_123 pk_abc --json',
  ];
  static override args = {
    passkey: Args.string({ description: 'id of the passkey (pk_…; see `iam users passkeys list`)', required: true }),
  };
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
    user: Flags.string({ description: 'id of the user', required: true }),
  };

  async run(): Promise<{ removed: true; id: string; user_id: string }> {
    const { tenant, user } = this.flags;
    const id = this.args.passkey;
    await this.requireTenant(tenant);
    if (!(await this.services.passkeys.remove(tenant, user, id, this.actor)))
      throw new CliFailure('not_found', `no passkey "${id}" of user "${user}" (see \`iam users passkeys list\`)`);
    this.log(`Removed passkey ${id} of user ${user}.`);
    return { removed: true, id, user_id: user };
  }
}
