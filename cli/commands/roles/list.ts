import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { rolesTable, tenantFlag } from '../../rbac.js';

export default class RolesList extends BaseCommand<typeof RolesList> {
  static override summary = "List a tenant's roles with their permissions.";
  static override description =
    'In name order, one page at a time (--cursor takes the next_cursor of --json). The same as ' +
    'GET /api/admin/tenants/{tenantId}/roles.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_123',
    "<%= config.bin %> <%= command.id %> --tenant ten_123 --json | jq -r '.roles[].name'",
  ];
  static override flags = {
    tenant: tenantFlag,
    limit: Flags.integer({ description: 'at most this many (1 to 1000; default 100)' }),
    cursor: Flags.string({ description: 'next_cursor of the previous page' }),
  };

  async run() {
    const f = this.flags;
    await this.requireTenant(f.tenant);
    const page = await this.services.rbac.roles.list(f.tenant, { limit: f.limit, cursor: f.cursor });
    this.log(rolesTable(page.roles));
    if (page.next_cursor) this.log(`More: --cursor ${page.next_cursor}`);
    return page;
  }
}
