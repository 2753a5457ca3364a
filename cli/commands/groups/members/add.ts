import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { groupFlags } from '../../../groups.js';

export default class GroupsMembersAdd extends BaseCommand<typeof GroupsMembersAdd> {
  static override summary = 'Add users to a group.';
  static override description =
    'Names 1 to 1000 users (--user, repeated or comma-separated). Each must be a user of the tenant, else ' +
    'nothing is added and the unknown ids are named (exit 1, unknown_users); a user already a member is left ' +
    'as it is. See docs/rbac.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --group grp_456 --user usr_a --user usr_b',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --group grp_456 --user usr_a,usr_b --json',
  ];
  static override flags = {
    ...groupFlags,
    user: Flags.string({
      description: 'a user id (usr_…); repeat or separate by commas',
      required: true,
      multiple: true,
    }),
  };
  static override fieldFlags = { user_ids: 'user' };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const ids = f.user
      .flatMap((u) => u.split(','))
      .map((u) => u.trim())
      .filter(Boolean);
    const r = await this.services.groups.addMembers(f.tenant, f.group, { user_ids: ids }, this.actor, '');
    this.log(`Added ${r.added} member(s) to ${r.group_id}; ${r.already_members} already member(s).`);
    return r;
  }
}
