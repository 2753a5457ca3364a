import { Flags } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { showTenant } from '../../tenants.js';

export default class TenantsGet extends BaseCommand<typeof TenantsGet> {
  static override summary = 'Show one tenant, with its counts of users, clients and active sessions.';
  static override description =
    'The tenant as GET /api/admin/tenants/{id} answers it: state, purge_after when offboarded, and its ETag ' +
    '(what `iam tenants update --if-match` compares). See docs/directory.md, "Tenants".';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd',
    "<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --json | jq '.counts'",
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const { tenant, etag } = await this.services.tenantDirectory.get(this.flags.tenant);
    this.log(showTenant(tenant));
    // The ETag in its own field: --json prints updated_at as ISO 8601, not the number it is made of.
    return { ...tenant, etag };
  }
}
