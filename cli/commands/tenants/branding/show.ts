import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';
import { showBranding } from '../../../branding.js';

export default class TenantsBrandingShow extends BaseCommand<typeof TenantsBrandingShow> {
  static override summary = "Show a tenant's branding: name, logo, colour, support link, custom CSS.";
  static override description =
    'The branding as GET /api/admin/tenants/{tenantId}/branding answers it: what is stored, what the ' +
    "tenant's pages show (the display name defaults to the tenant's name; the text colour on the primary " +
    'colour is computed for contrast), and the ETag. See docs/branding.md.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> --tenant ten_0123abcd',
    "<%= config.bin %> <%= command.id %> --tenant ten_0123abcd --json | jq -r '.branding.customCss'",
  ];
  static override flags = {
    tenant: Flags.string({ description: 'id of the tenant', required: true }),
  };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const { view, etag } = await this.services.branding.view(this.flags.tenant);
    this.log(showBranding(view, etag));
    return { ...view, etag };
  }
}
