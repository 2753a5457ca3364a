import { Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../base.js';
import { fields } from '../../format.js';
import { groupFlags } from '../../groups.js';
import { readLine } from '../../http/prompt.js';

export default class GroupsDelete extends BaseCommand<typeof GroupsDelete> {
  static override summary = 'Delete a group, its memberships and its role assignments.';
  static override description =
    'In one transaction, audited with the counts. Refused (exit 1, group_in_use) while a SCIM field-mapping ' +
    'set maps to the group. Tokens already issued are not revoked: the next refresh gets the reduced ' +
    "permissions. Type the group's name to confirm, or pass --confirm <name> (or --yes) in a script; --json " +
    'never prompts. See docs/rbac.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --group grp_456',
    {
      description: 'In a script: the name says which group you mean, checked before anything is deleted.',
      command: '<%= config.bin %> <%= command.id %> --tenant ten_123 --group grp_456 --confirm Finance --json',
    },
  ];
  static override flags = {
    ...groupFlags,
    confirm: Flags.string({ description: "the group's name, typed in advance (no prompt)" }),
    yes: Flags.boolean({ char: 'y', description: 'do not ask for confirmation', default: false }),
  };

  async run() {
    const { tenant, group, confirm, yes } = this.flags;
    await this.requireTenant(tenant);
    const g = await this.services.groups.get(tenant, group);
    if (!yes) {
      let typed = confirm;
      if (typed === undefined) {
        if (this.jsonEnabled())
          throw new CliFailure('confirmation_required', '--json never prompts: pass --confirm <name> or --yes', 2);
        typed = await readLine(
          `This deletes group ${g.display_name} and its ${g.member_count} memberships. Type its name: `,
        );
      }
      if (typed === undefined) throw new CliFailure('aborted', 'aborted: nothing was deleted');
      if (typed.trim().toLowerCase() !== g.display_name.toLowerCase())
        throw new CliFailure('confirmation_mismatch', "the name typed is not the group's: nothing was deleted");
    }
    const r = await this.services.groups.delete(tenant, group, this.actor);
    this.log(`Deleted group ${r.id}.`);
    this.log(
      fields([
        ['memberships removed', String(r.members_removed)],
        ['role assignments removed', String(r.role_assignments_removed)],
      ]),
    );
    return r;
  }
}
