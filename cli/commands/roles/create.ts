import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { roleText, tenantFlag } from '../../rbac.js';
import type { RoleView } from '../../../shared/schemas/rbac.js';

export default class RolesCreate extends BaseCommand<typeof RolesCreate> {
  static override summary = 'Create a role: a named set of permissions, tenant-wide or scoped to one resource.';
  static override description =
    'The name is unique in the tenant (compared case-insensitively). With --resource only permissions of that ' +
    'resource may be added. Then `iam roles permissions set` gives it permissions and `iam roles assign` ' +
    'holders. Audited as role.create. The same as POST /api/admin/tenants/{tenantId}/roles. See docs/rbac.md.';
  static override examples = [
    "<%= config.bin %> <%= command.id %> --tenant ten_123 --name 'Billing admin' --resource https://api.example.com",
    "<%= config.bin %> <%= command.id %> --tenant ten_123 --name Auditor --description 'Reads everything' --json",
  ];
  static override flags = {
    tenant: tenantFlag,
    name: Flags.string({ description: 'the role name (1 to 100 characters)', required: true }),
    description: Flags.string({ description: 'what the role is for' }),
    resource: Flags.string({ description: 'scope the role to this resource identifier' }),
  };
  static override fieldFlags = { name: 'name', description: 'description', resource: 'resource' };

  async run(): Promise<RoleView> {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const input = { name: f.name, description: f.description, resource: f.resource };
    this.serviceInput = input;
    const { role } = await this.services.rbac.roles.create(f.tenant, input, this.actor);
    this.log(roleText(role));
    return role;
  }
}
