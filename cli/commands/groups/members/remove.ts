import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { groupFlags } from '../../../groups.js';

export default class GroupsMembersRemove extends BaseCommand<typeof GroupsMembersRemove> {
  static override summary = 'Remove a user from a group.';
  static override description =
    'Tokens already issued stay valid until they expire or refresh (the next refresh gets the reduced ' +
    'permissions) unless --revoke-tokens, which signs the user out everywhere: every session and token ' +
    'family of the user ends, as `iam users signout` does. See docs/rbac.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --group grp_456 --user usr_a',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --group grp_456 --user usr_a --revoke-tokens --json',
  ];
  static override flags = {
    ...groupFlags,
    user: Flags.string({ description: 'the user id (usr_…)', required: true }),
    'revoke-tokens': Flags.boolean({ description: "also end the user's sessions and tokens", default: false }),
  };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const r = await this.services.groups.removeMember(f.tenant, f.group, f.user, this.actor, f['revoke-tokens']);
    this.log(
      r.removed
        ? `Removed ${r.user_id} from ${r.group_id}` +
            (f['revoke-tokens'] ? `; ${r.families_revoked} token famil(ies) revoked.` : '.')
        : `${r.user_id} was not a member of ${r.group_id}: nothing changed.`,
    );
    return r;
  }
}
