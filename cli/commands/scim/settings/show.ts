import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base.js';

export default class ScimSettingsShow extends BaseCommand<typeof ScimSettingsShow> {
  static override summary = "Show the tenant's SCIM settings (what DELETE /scim/v2/Users/{id} does).";
  static override description =
    'scim_delete: erase (the default; the directory erases the user as `iam users delete` does) or deactivate ' +
    '(the user is disabled, as `iam users disable`). The same as GET …/tenants/{tenantId}/scim-settings.';
  static override examples = ['<%= config.bin %> <%= command.id %> --tenant ten_123 --json'];
  static override flags = { tenant: Flags.string({ description: 'id of the tenant', required: true }) };

  async run() {
    await this.requireTenant(this.flags.tenant);
    const r = await this.services.scim.users.settings(this.flags.tenant);
    this.log(`scim_delete: ${r.scim_delete}`);
    return r;
  }
}
