import { Args, Flags } from '@oclif/core';
import { BaseCommand, CliFailure } from '../../../base.js';
import { roleText, selectorOf, tenantFlag } from '../../../rbac.js';
import type { RoleView } from '../../../../shared/schemas/rbac.js';

export default class RolesPermissionsSet extends BaseCommand<typeof RolesPermissionsSet> {
  static override summary = "Replace a role's permissions.";
  static override description =
    'Each --permission is a permission id (perm_…) or "<resource> <permission>"; the list replaces the ' +
    "role's (--none empties it). Each must exist in the tenant and, on a role scoped to a resource, be of it. " +
    'Removing a permission revokes nothing already issued: the next refresh gets the reduced scope. Audited as ' +
    'role.permissions.set. The same as PUT /api/admin/tenants/{tenantId}/roles/{id}/permissions.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 role_abc --permission perm_1 --permission perm_2',
    "<%= config.bin %> <%= command.id %> --tenant ten_123 role_abc --permission 'https://api.example.com invoices:read' --json",
    '<%= config.bin %> <%= command.id %> --tenant ten_123 role_abc --none',
  ];
  static override args = { role: Args.string({ description: 'the role id (role_…)', required: true }) };
  static override flags = {
    tenant: tenantFlag,
    permission: Flags.string({ description: 'a permission id, or "<resource> <permission>"', multiple: true }),
    none: Flags.boolean({ description: 'remove every permission', default: false, exclusive: ['permission'] }),
  };

  static override fieldFlags = { permissions: 'permission' };

  async run(): Promise<RoleView> {
    const f = this.flags;
    if (!f.none && !f.permission?.length)
      throw new CliFailure('usage_error', 'name at least one --permission, or --none to empty the role', 2);
    await this.requireTenant(f.tenant);
    const input = { permissions: (f.permission ?? []).map(selectorOf) };
    this.serviceInput = { permissions: f.permission ?? [] };
    const { role } = await this.services.rbac.roles.setPermissions(f.tenant, this.args.role, input, this.actor);
    this.log(roleText(role));
    return role;
  }
}
