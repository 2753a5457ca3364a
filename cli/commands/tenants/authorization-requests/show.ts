import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { showAuthorizationRequestPolicy } from '../../../authorization-requests.js';

export default class TenantsAuthorizationRequestsShow extends BaseCommand<typeof TenantsAuthorizationRequestsShow> {
  static override summary = "Show a tenant's authorization request policy: whether every client must push (PAR).";
  static override description =
    'The policy as GET /api/admin/tenants/{tenantId}/authorization-requests answers it, with its ETag. ' +
    'See docs/par.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd',
    "<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --json | jq '.policy'",
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const { view, etag } = await this.services.par.policy.view(this.flags.tenant);
    this.log(showAuthorizationRequestPolicy(view, etag));
    return { ...view, etag };
  }
}
