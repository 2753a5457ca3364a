import { BaseCommand } from '../../base.js';
import { describeMove, userFlags } from '../../users-lifecycle.js';
import type { UserLifecycleResult } from '../../../shared/services/user-lifecycle.js';

export default class UsersDisable extends BaseCommand<typeof UsersDisable> {
  static override summary = 'Disable a user: no sign-in by any method, every session and token ended at once.';
  static override description =
    'Sets the user disabled and, in the same transaction, ends every session and revokes every refresh token ' +
    'and access token of the user: introspection on every daemon answers active: false as soon as the command ' +
    'returns. A disabled user cannot sign in (403 user_disabled) nor refresh. Disabling a disabled user changes ' +
    'nothing (changed: false, no audit event). `iam users enable` reverses the status. See docs/directory.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_456',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_456 --json',
  ];
  static override flags = userFlags;

  async run(): Promise<UserLifecycleResult> {
    const { tenant, user } = this.flags;
    await this.requireTenant(tenant);
    const r = await this.services.userLifecycle.disable(tenant, user, this.actor);
    this.log(describeMove(r, 'disabled', 'disabled'));
    return r;
  }
}
