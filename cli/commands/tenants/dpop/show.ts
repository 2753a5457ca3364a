import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { showDpopPolicy } from '../../../dpop.js';

export default class TenantsDpopShow extends BaseCommand<typeof TenantsDpopShow> {
  static override summary = "Show a tenant's DPoP policy: server nonces, proofs required.";
  static override description =
    'The policy as GET /api/admin/tenants/{tenantId}/dpop-policy answers it: what is stored, what applies ' +
    '(false when not set), and the ETag. See docs/dpop.md, "The tenant\'s policy".';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd',
    "<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --json | jq '.effective'",
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const { view, etag } = await this.services.dpop.view(this.flags.tenant);
    this.log(showDpopPolicy(view, etag));
    return { ...view, etag };
  }
}
