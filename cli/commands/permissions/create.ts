import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { tenantFlag } from '../../rbac.js';
import type { PermissionView } from '../../../shared/schemas/rbac.js';

export default class PermissionsCreate extends BaseCommand<typeof PermissionsCreate> {
  static override summary = 'Create a permission of an API resource (a scope token such as invoices:read).';
  static override description =
    "The resource must be one of the tenant's clients' resource_identifiers; the permission a scope token " +
    '(RFC 6749 §3.3) that is not a protocol or admin scope (openid, profile, email, address, phone, ' +
    'offline_access, account, scim, iam.*). Audited as permission.create. The same as ' +
    'POST /api/admin/tenants/{tenantId}/permissions. See docs/rbac.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --resource https://api.example.com --permission invoices:read',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --resource https://api.example.com --permission ' +
      "invoices:write --description 'Create and edit invoices' --json",
  ];
  static override flags = {
    tenant: tenantFlag,
    resource: Flags.string({ description: "a resource identifier of one of the tenant's clients", required: true }),
    permission: Flags.string({ description: 'the scope token', required: true }),
    description: Flags.string({ description: 'what it allows, for operators' }),
  };
  static override fieldFlags = { resource: 'resource', permission: 'permission', description: 'description' };

  async run(): Promise<PermissionView> {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const input = { resource: f.resource, permission: f.permission, description: f.description };
    this.serviceInput = input;
    const p = await this.services.rbac.permissions.create(f.tenant, input, this.actor);
    this.log(`Created permission ${p.permission} of ${p.resource} (${p.id}).`);
    return p;
  }
}
