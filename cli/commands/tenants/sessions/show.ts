import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { showSessionPolicy } from '../../../sessions.js';

export default class TenantsSessionsShow extends BaseCommand<typeof TenantsSessionsShow> {
  static override summary = "Show a tenant's session timeouts: idle and absolute.";
  static override description =
    'The timeouts as GET /api/admin/tenants/{tenantId}/session-policy answers them: what is stored (in seconds ' +
    "with --json), what applies (no idle timeout when none is set; the service's 7 days when no absolute " +
    'lifetime is), and the ETag. See docs/security.md, "Session timeouts".';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd',
    "<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --json | jq '.effective'",
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const { view, etag } = await this.services.sessionPolicy.view(this.flags.tenant);
    this.log(showSessionPolicy(view, etag));
    return { ...view, etag };
  }
}
