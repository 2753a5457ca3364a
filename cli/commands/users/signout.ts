import { BaseCommand } from '../../base.js';
import { describeMove, userFlags } from '../../users-lifecycle.js';
import type { UserLifecycleResult } from '../../../shared/services/user-lifecycle.js';

export default class UsersSignout extends BaseCommand<typeof UsersSignout> {
  static override summary = 'Sign a user out everywhere, without disabling them.';
  static override description =
    'Ends every session of the user and revokes every token family (refresh tokens and the access tokens issued ' +
    'from them) in one transaction; the user stays active and may sign in again. The admin API route is ' +
    'POST /api/admin/tenants/{tenantId}/users/{userId}/sign-out. See docs/directory.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_456',
    {
      description: 'After a lost laptop: end every session, then look at what was ended.',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_456 --json | jq .sessions_ended',
    },
  ];
  static override flags = userFlags;

  async run(): Promise<UserLifecycleResult> {
    const { tenant, user } = this.flags;
    await this.requireTenant(tenant);
    const r = await this.services.userLifecycle.signOut(tenant, user, this.actor);
    this.log(describeMove(r, 'signed out everywhere', 'signed out'));
    return r;
  }
}
