import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { table } from '../../format.js';
import { tenantFlag } from '../../rbac.js';

export default class PermissionsList extends BaseCommand<typeof PermissionsList> {
  static override summary = "List a tenant's API resource permissions.";
  static override description =
    'In (resource, permission) order, one page at a time (--cursor takes the next_cursor of --json). The same ' +
    'as GET /api/admin/tenants/{tenantId}/permissions.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123',
    '<%= config.bin %> <%= command.id %> --tenant ten_123 --resource https://api.example.com --json',
  ];
  static override flags = {
    tenant: tenantFlag,
    resource: Flags.string({ description: 'only the permissions of this resource' }),
    limit: Flags.integer({ description: 'at most this many (1 to 1000; default 100)' }),
    cursor: Flags.string({ description: 'next_cursor of the previous page' }),
  };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const page = await this.services.rbac.permissions.list(f.tenant, {
      resource: f.resource,
      limit: f.limit,
      cursor: f.cursor,
    });
    this.log(
      table(
        page.permissions,
        [
          { header: 'id', value: (p) => p.id },
          { header: 'resource', value: (p) => p.resource },
          { header: 'permission', value: (p) => p.permission },
          { header: 'description', value: (p) => p.description ?? '-' },
        ],
        'No permissions.',
      ),
    );
    if (page.next_cursor) this.log(`More: --cursor ${page.next_cursor}`);
    return page;
  }
}
