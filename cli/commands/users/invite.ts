import { BaseCommand } from '../../base.js';
import { fields } from '../../format.js';
import { userFlags } from '../../users-lifecycle.js';
import type { InvitationResult } from '../../../shared/services/invitations.js';

export default class UsersInvite extends BaseCommand<typeof UsersInvite> {
  static override summary = "Mail a user a sign-in link to the tenant's account page.";
  static override description =
    "Queues a mail (the invitation template, in the user's locale when the service speaks it) with a link that " +
    "starts the sign-in to the tenant's account page with the user's address filled in. The link holds no " +
    'secret: the user still proves the address with an email code or a passkey. A running daemon delivers it ' +
    '(iam outbox list follows it). A disabled user is refused (user_disabled); audited as user.invite. The admin ' +
    'API route is POST /api/admin/tenants/{tenantId}/users/{userId}/invite. See docs/directory.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_456',
    {
      description: 'The link the mail carries (to hand over another way):',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_123 --user usr_456 --json | jq -r .sign_in_url',
    },
  ];
  static override flags = userFlags;

  async run(): Promise<InvitationResult> {
    const { tenant, user } = this.flags;
    await this.requireTenant(tenant);
    const r = await this.services.invitations.invite(tenant, user, this.actor, { issuer: this.settings.issuer });
    this.log(
      `Invitation for user ${r.user_id} queued.\n` +
        fields([
          ['mail', r.mail_id],
          ['sign-in link', r.sign_in_url],
        ]),
    );
    return r;
  }
}
