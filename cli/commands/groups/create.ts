import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { tenantFlag } from '../../federation.js';
import { groupText } from '../../groups.js';
import type { GroupView } from '../../../shared/schemas/groups.js';

export default class GroupsCreate extends BaseCommand<typeof GroupsCreate> {
  static override summary = 'Create a group of users in a tenant.';
  static override description =
    'Groups are flat (they hold users, not groups) and their names are unique in the tenant without regard to ' +
    'case (a taken name exits 1 with conflict). A role assigned to the group reaches every member. SCIM ' +
    '/Groups serves the same records. See docs/rbac.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --name Engineering',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --name Finance --description "Accounts team" --json',
  ];
  static override flags = {
    tenant: tenantFlag,
    name: Flags.string({ description: 'display name, 1 to 200 characters', required: true }),
    description: Flags.string({ description: 'what the group is for (up to 500 characters)' }),
    'external-id': Flags.string({ description: "a provisioning client's id of the group, unique in the tenant" }),
  };
  static override fieldFlags = { display_name: 'name', description: 'description', external_id: 'external-id' };

  async run(): Promise<GroupView> {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const input = {
      display_name: f.name,
      ...(f.description !== undefined ? { description: f.description } : {}),
      ...(f['external-id'] !== undefined ? { external_id: f['external-id'] } : {}),
    };
    const g = await this.services.groups.create(f.tenant, input, this.actor);
    this.log(`Created group ${g.id} (${g.display_name}).`);
    this.log(groupText(g));
    return g;
  }
}
