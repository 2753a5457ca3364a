import { BaseCommand } from '../../base.js';
import { groupFlags, groupText } from '../../groups.js';
import type { GroupView } from '../../../shared/schemas/groups.js';

export default class GroupsShow extends BaseCommand<typeof GroupsShow> {
  static override summary = 'Show a group with its member count.';
  static override description =
    "`iam groups members list` lists the members. Another tenant's group is not found (exit 1). See " + 'docs/rbac.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --group grp_456',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --group grp_456 --json',
  ];
  static override flags = groupFlags;

  async run(): Promise<GroupView> {
    await this.requireTenant(this.flags.tenant);
    const g = await this.services.groups.get(this.flags.tenant, this.flags.group);
    this.log(groupText(g));
    return g;
  }
}
