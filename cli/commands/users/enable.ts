import { BaseCommand } from '../../base.js';
import { describeMove, userFlags } from '../../users-lifecycle.js';
import type { UserLifecycleResult } from '../../../shared/services/user-lifecycle.js';

export default class UsersEnable extends BaseCommand<typeof UsersEnable> {
  static override summary = 'Enable a disabled user again.';
  static override description =
    'Sets the user active: the user may sign in again. Only the status changes: the sessions and tokens the ' +
    'disable ended stay ended. Enabling an active user changes nothing. See docs/directory.md.';
  static override examples = ['<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_456'];
  static override flags = userFlags;

  async run(): Promise<UserLifecycleResult> {
    const { tenant, user } = this.flags;
    await this.requireTenant(tenant);
    const r = await this.services.userLifecycle.enable(tenant, user, this.actor);
    this.log(describeMove(r, 'enabled', 'active'));
    return r;
  }
}
