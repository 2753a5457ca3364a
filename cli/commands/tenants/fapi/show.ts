import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { showFapiPolicy } from '../../../fapi.js';

export default class TenantsFapiShow extends BaseCommand<typeof TenantsFapiShow> {
  static override summary = "Show a tenant's FAPI 2.0 profile: off, fapi2-security or fapi2-message-signing.";
  static override description =
    'The profile as GET /api/admin/tenants/{tenantId}/fapi answers it, with its ETag. A client with its own ' +
    'fapi_profile follows that instead. See docs/fapi.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd',
    "<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --json | jq -r '.policy.profile'",
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const { view, etag } = await this.services.fapi.view(this.flags.tenant);
    this.log(showFapiPolicy(view, etag));
    return { ...view, etag };
  }
}
